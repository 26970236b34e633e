#!/usr/bin/env bash
# The forecast benchmark's runs on a lent GPU machine (docs/VALIDITY.md), in three calls of the
# device tool, because one call carries at most 64 MiB and the SmolLM2 GGUF alone is 98 MB:
#   1  carries .devbundle/a (first half of the GGUF, wheels for gguf and zstandard): installs, stashes
#   2  carries .devbundle/b (second half, bench and demo suites): joins the GGUF, starts bench and
#      demo in the background (setsid: they outlive the call)
#   3  carries .devbundle/c (SmolLM2 suite): runs it, waits for the others, copies results to $OUT
# The bundle is made by hand from benchmarks/.cache/forecast (see docs/VALIDITY.md).
set -uo pipefail
stage=$1
work=/tmp/forecast
mkdir -p "$work/out" "$work/suites"
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
case $stage in
1)
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .devbundle/a/*.whl
    cp .devbundle/a/gguf.part1 "$work/"
    python3 -c "import gguf, zstandard, torch, transformers; print('ok', torch.__version__, transformers.__version__, torch.cuda.get_device_name())"
    ;;
2)
    cat "$work/gguf.part1" .devbundle/b/gguf.part2 > "$work/SmolLM2-135M-Instruct.Q4_1.gguf"
    sha256sum "$work/SmolLM2-135M-Instruct.Q4_1.gguf"
    for base in bench demo; do
        cp -r ".devbundle/b/$base" "$work/suites/"
        setsid nohup python3 benchmarks/validity/runner.py --suite "$work/suites/$base" --out "$work/out" \
            --workers 4 > "$work/$base.log" 2>&1 < /dev/null &
    done
    sleep 25
    tail -n 3 "$work"/*.log
    ;;
3)
    cp -r .devbundle/c/smollm2 "$work/suites/"
    SMOLLM2_GGUF="$work/SmolLM2-135M-Instruct.Q4_1.gguf" timeout 420 python3 benchmarks/validity/runner.py \
        --suite "$work/suites/smollm2" --out "$work/out" --workers 6 > "$work/smollm2.log" 2>&1
    echo "smollm2 exited $?"
    for _ in $(seq 60); do
        [ -f "$work/out/bench-runs.jsonl" ] && [ -f "$work/out/demo-runs.jsonl" ] && break
        sleep 5
    done
    cp "$work"/out/*-runs.jsonl "$work"/out/*-rows.npz "$OUT/"
    tail -n 400 "$work"/*.log > "$OUT/logs.txt"
    wc -l "$work"/out/*.jsonl
    tail -n 5 "$work"/*.log
    ;;
esac
