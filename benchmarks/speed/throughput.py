"""Exact-counting throughput: plain tokenizers 0.23, the 1.0 engine, datatrove and vocabrisk, side by side.

    python benchmarks/speed/throughput.py                # ~25 min on 2 cores; --help for sizes
    python benchmarks/speed/throughput.py --whole-only   # issue 14's table alone (whole.py): ~10 min on a quiet
                                                         # 2-core machine, most of it plain 0.23 on the 60 MB corpus

The first part times counting alone (start-up subtracted); the second whole processes,
start-up included, on a small, a medium and a large corpus, and the fixed cost alone with a
cold and a warm cache (`whole.py`).

tokenizers 0.23 and 1.0 cannot share an environment (transformers pins <0.24, and one
package name holds one version), so the first run creates two git-ignored venvs,
.bench-venv-0.23 (with datatrove, which installs there) and .bench-venv-1.0, each with
vocabrisk installed editable, and every measurement runs as a whole fresh subprocess in one
of them. Inputs are built in a temp folder and deleted afterwards. Counts are compared by
a digest of the full per-id count vector, so "identical" means token for token.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from inputs import write_checkpoint, write_corpus
from whole import whole_process

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "data"
WORKER = Path(__file__).with_name("worker.py")
TOKENIZERS = ["gpt2", "gpt-neox-20b", "bert-base-uncased", "llama2", "pegasus"]
VENVS = {
    "0.23": ["tokenizers==0.23.3", "datatrove==0.10.1"],
    "1.0": ["tokenizers==1.0.0rc3"],
}
COMMON = ["numpy", "safetensors", "pyarrow", "polars", "zstandard", "huggingface_hub", "rich", "click"]
BIG_TOKENIZER = REPO / "benchmarks" / ".cache" / "bpe-150k"  # git-ignored; built once by big_tokenizer.py


def venv_python(engine: str) -> Path:
    """The bench venv for an engine, created on first use."""
    folder = REPO / f".bench-venv-{engine}"
    python = folder / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        pip = [str(python), "-m", "pip", "install", "-q"]
        subprocess.run([*pip, *COMMON, *VENVS[engine]], check=True)
        subprocess.run([*pip, "--no-deps", "-e", str(REPO)], check=True)
    return python


def big_tokenizer() -> Path:
    """The 150k-token stand-in for an olmo2/Qwen-class tokenizer (see big_tokenizer.py), trained on first use."""
    if not (BIG_TOKENIZER / "tokenizer.json").exists():
        script = Path(__file__).with_name("big_tokenizer.py")
        subprocess.run([str(venv_python("0.23")), str(script), str(SHARED), str(BIG_TOKENIZER)], check=True)
    return BIG_TOKENIZER


def measure(engine: str, mode: str, path: Path, tokenizer: str = "", cores: int = 0) -> dict:
    """A whole-process run; `steady_s` subtracts the same run's start-up, timed on a one-document corpus."""
    r = run_worker(engine, mode, path, tokenizer, cores)
    if "error" not in r and mode != "head":
        startup = run_worker(engine, mode, path.with_name("tiny.jsonl"), tokenizer, cores)
        r["steady_s"] = max(r["seconds"] - startup.get("seconds", 0.0), 1e-9)
    return r


def run_worker(engine: str, mode: str, path: Path, tokenizer: str, cores: int) -> dict:
    command = [str(venv_python(engine)), str(WORKER), mode, str(path)]
    command += [str(SHARED / "tokenizers" / tokenizer)] if tokenizer else []
    command += [f"--cores={cores}"] if cores else []
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    if done.returncode:
        return {"error": done.stderr.strip().splitlines()[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def mb_s(r: dict, whole: bool = False) -> float:
    return r["bytes"] / 1e6 / (r["seconds"] if whole else r["steady_s"])


def row(label: str, r: dict, base: dict | None, fast: dict | None, reference: dict | None) -> str:
    if "error" in r:
        return f"  {label:<26} failed: {r['error']}"
    same = "" if reference is None else ("same" if r.get("digest") == reference["digest"] else "DIFFERENT")
    if r.get("digest") == "totals only":
        same = "totals " + ("same" if r["tokens"] == reference["tokens"] else "DIFFERENT")
    ratios = "".join(f"{mb_s(r) / mb_s(x):>9.2f}x" if x and "error" not in x else f"{'-':>10}" for x in (base, fast))
    return (
        f"  {label:<26}{mb_s(r):>8.1f} MB/s{r.get('tokens', 0) / r['steady_s'] / 1e6:>8.2f} Mtok/s"
        f"{ratios}{r['peak_rss_mb']:>9.0f} MB{mb_s(r, whole=True):>8.1f} MB/s  {same}"
    )


def throughput(corpus: Path, slow_corpus: Path | None) -> None:
    """The 1.0 rows run on `corpus`; the 0.23 rows (minutes per run) on the smaller `slow_corpus`."""
    header = f"  {'':<26}{'MB/s':>13}{'Mtok/s':>15}{'vs 0.23':>10}{'vs 1.0':>10}{'peak RSS':>12}{'whole':>13}  counts"
    for name in TOKENIZERS:
        print(f"\n{name}\n{header}")
        fast = measure("1.0", "plain", corpus, name)
        slow_reference = measure("1.0", "plain", slow_corpus, name) if slow_corpus else None
        base = measure("0.23", "plain", slow_corpus, name) if slow_corpus else None
        slow_runs = [
            ("plain encode_batch, 0.23", base),
            ("datatrove TokensCounter", measure("0.23", "datatrove", slow_corpus, name)),
            ("vocabrisk on 0.23", measure("0.23", "vocabrisk", slow_corpus, name)),
        ]
        fast_runs = [
            ("plain encode_batch, 1.0", fast),
            ("vocabrisk on 1.0, 1 core", measure("1.0", "vocabrisk", corpus, name, cores=1)),
            ("vocabrisk on 1.0", measure("1.0", "vocabrisk", corpus, name)),
        ]
        for label, r in slow_runs if slow_corpus else []:
            print(row(label, r, base, fast, slow_reference))
        for label, r in fast_runs:
            print(row(label, r, base, fast, fast))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=100, help="size of the corpus for the 1.0 engine (MB of text)")
    parser.add_argument("--slow-mb", type=int, default=10, help="size of the corpus for 0.23 (MB); 0 skips 0.23")
    parser.add_argument("--big-mb", type=int, default=1000, help="size of the flat-memory corpus (MB); 0 skips")
    parser.add_argument("--whole-only", action="store_true", help="only the whole-process timings")
    parser.add_argument("--small-mb", type=int, default=1, help="whole process: small corpus (MB)")
    parser.add_argument("--medium-mb", type=int, default=60, help="whole process: medium corpus (MB), also on 0.23")
    parser.add_argument("--large-mb", type=int, default=300, help="whole process: large corpus (MB), 1.0 only; 0 skips")
    parser.add_argument("--repeats", type=int, default=5, help="whole process: rounds of fixed-cost runs")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, load average before: {os.getloadavg()[0]:.2f}")
    sizes = {"small": args.small_mb, "medium": args.medium_mb, "large": args.large_mb}
    whole_process(
        SHARED,
        {engine: venv_python(engine) for engine in VENVS},
        {"gpt2": SHARED / "tokenizers" / "gpt2", "bpe-150k": big_tokenizer()},
        {label: mb for label, mb in sizes.items() if mb},
        {"small", "medium"},
        args.repeats,
    )
    if args.whole_only:
        return
    with tempfile.TemporaryDirectory(prefix="vocabrisk-bench-") as tmp:
        work = Path(tmp)
        corpus = work / "corpus.jsonl"
        write_corpus(SHARED, corpus, args.mb)
        (work / "tiny.jsonl").write_text(json.dumps({"text": "One document."}) + "\n")
        read = measure("1.0", "read", corpus)
        print(
            f"reading + JSON parsing alone ({args.mb} MB JSONL): {mb_s(read):.0f} MB/s ({mb_s(read, True):.0f} whole)"
        )
        slow_corpus = work / "slow.jsonl" if args.slow_mb else None
        if slow_corpus:
            write_corpus(SHARED, slow_corpus, args.slow_mb)
        throughput(corpus, slow_corpus)
        if args.big_mb:
            print(f"\nflat memory, vocabrisk on 1.0, gpt2\n  {'corpus':<12}{'MB/s':>8}{'peak RSS':>12}")
            for megabytes in (10, args.big_mb):
                path = work / f"corpus-{megabytes}.jsonl"
                write_corpus(SHARED, path, megabytes)
                r = run_worker("1.0", "vocabrisk", path, "gpt2", 0)
                print(f"  {megabytes:>6} MB {mb_s(r, whole=True):>10.1f}{r['peak_rss_mb']:>9.0f} MB")
                path.unlink()
        checkpoint = work / "checkpoint"
        head_bytes = write_checkpoint(SHARED, checkpoint)
        total = sum(p.stat().st_size for p in checkpoint.glob("*.safetensors"))
        r = measure("1.0", "head", checkpoint)
        grown = r["peak_rss_mb"] - r["base_rss_mb"]
        print(
            f"\nhead: {r['tensor']} ({head_bytes / 1e6:.0f} MB) in {total / 1e9:.2f} GB, 4 shards:"
            f" {r['seconds']:.2f} s, peak RSS {r['peak_rss_mb']:.0f} MB"
            f" = {r['base_rss_mb']:.0f} MB interpreter + {grown:.0f} MB ({grown / (head_bytes / 1e6):.2f}x head)"
        )


if __name__ == "__main__":
    main()
