"""Fine-tune each base model on every run of its suite and measure what it forgot.

    python benchmarks/forecast_runs.py --suite benchmarks/.cache/forecast/bench --out OUT [--device cuda]

The suite (`forecast_suite.py`) holds token ids only, so this runs where there is a GPU and no
tokenizer or corpus: torch, transformers and (for SmolLM2) the `gguf` package are all it needs.
Every run fine-tunes a fresh copy of the base with `vocabrisk.verify.train.finetune` and the
suite's plan, then measures on the old text, from the final hidden states and the output matrix of
the base and the trained model (so that it also holds for tied heads, where swapping the parameter
would swap the input embeddings too):

- total forgetting: trained body with trained head, minus base;
- head-only forgetting: base body with the trained output matrix;
- body-only forgetting: trained body with the base output matrix;
- learning: the fall of loss on the run's held-out text;
- per row: the L2 drift of the output matrix and the mean change of its logit on old text.

Workers (`--workers`) split the runs between processes on one device. Results: one JSON line per
run in `OUT/<base>-runs.jsonl`, per-row arrays in `OUT/<base>-rows-<worker>.npz`.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


def load_base(suite: dict, folder: Path, device: str, log):
    import torch
    from transformers import AutoModelForCausalLM

    base = suite["base"]
    if base == "bench":
        import validity_data as data

        tokens = np.load(folder / "tokens.npz")
        stream = torch.from_numpy(tokens["pretrain"].astype(np.int64))
        return data.pretrain(data.BaseSpec(), stream, log, device=device)
    if base == "demo":
        return AutoModelForCausalLM.from_pretrained(HERE.parent / "vocabrisk" / "demo_model").to(device)
    gguf = Path(os.environ["SMOLLM2_GGUF"])
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, torch_dtype=torch.float32)
    return model.to(device)


def windows_of(stream: np.ndarray, seq_len: int, limit: int):
    import torch

    count = len(stream) // seq_len
    picks = np.unique(np.linspace(0, count - 1, num=min(limit, count)).round().astype(int))
    return torch.from_numpy(stream[: count * seq_len].astype(np.int64).reshape(count, seq_len)[picks])


def worker(
    folder: Path,
    out: Path,
    index: int,
    workers: int,
    device: str,
    model_path: Path | None,
    smoke: bool,
    only: list[str],
) -> None:
    import forecast_suite as suites
    import torch
    from transformers import AutoModelForCausalLM

    from vocabrisk.verify.measure import final_hidden, matrix_loss, output_matrix
    from vocabrisk.verify.train import finetune

    suite = json.loads((folder / "suite.json").read_text())
    plan = suite["plan"]
    if smoke:  # a few steps of two runs: checks the whole path in seconds on a CPU
        plan = {**plan, "steps": 3, "seeds": 1, "tokens_per_step": plan["seq_len"] * 2}
        suite["runs"] = suite["runs"][:2]
    if only:
        by_name = {run["name"]: run for run in suite["runs"]}
        suite["runs"] = [by_name[name] for name in only]  # in the order given
    tokens = np.load(folder / "tokens.npz")
    started = time.monotonic()

    def log(message: str) -> None:
        print(f"[{suite['base']} w{index} {time.monotonic() - started:5.0f}s] {message}", flush=True)

    if model_path is not None:
        base = AutoModelForCausalLM.from_pretrained(model_path).to(device)
    else:
        base = load_base(suite, folder, device, log)
    old = windows_of(tokens["old"].reshape(-1), plan["seq_len"], 2 if smoke else plan["old_windows"])
    base_matrix = output_matrix(base)
    base_hidden = final_hidden(base, old, device, plan["bf16"])
    base_old = matrix_loss(base_hidden, base_matrix, old, device)
    jobs = [(run, seed) for seed in range(plan["seeds"]) for run in suite["runs"]][index::workers]
    rows = {}
    with (out / f"{suite['base']}-runs-{index}.jsonl").open("a") as sink:
        for run, seed in jobs:
            train = torch.from_numpy(tokens[f"{run['file']}/train"].astype(np.int64))
            heldout = windows_of(
                tokens[f"{run['file']}/heldout"], plan["seq_len"], 2 if smoke else min(32, plan["old_windows"] // 2)
            )
            config = suites.train_config(plan, device, seed)
            model = copy.deepcopy(base)
            torch.manual_seed(seed)
            result = finetune(model, train, config)
            matrix = output_matrix(model)
            hidden = final_hidden(model, old, device, plan["bf16"])
            base_held = matrix_loss(final_hidden(base, heldout, device, plan["bf16"]), base_matrix, heldout, device)
            trained_held = matrix_loss(final_hidden(model, heldout, device, plan["bf16"]), matrix, heldout, device)
            delta = matrix - base_matrix
            record = {
                "base": suite["base"],
                "run": run["name"],
                "role": run["role"],
                "seed": seed,
                "train_tokens": run["train_tokens"],
                "epochs": run["epochs"],
                "base_old": base_old,
                "total": matrix_loss(hidden, matrix, old, device) - base_old,
                "head_only": matrix_loss(base_hidden, matrix, old, device) - base_old,
                "body_only": matrix_loss(hidden, base_matrix, old, device) - base_old,
                "learning": base_held - trained_held,
                "final_train_loss": float(np.mean(result.losses[-10:])),
                "seconds": result.seconds,
            }
            rows[f"{run['file']}/{seed}/drift"] = delta.norm(dim=1).cpu().numpy().astype(np.float16)
            flat = base_hidden[:, :-1].reshape(-1, base_hidden.shape[-1])
            rows[f"{run['file']}/{seed}/logit_shift"] = (flat.mean(0) @ delta.T).cpu().numpy().astype(np.float32)
            rows[f"{run['file']}/{seed}/grad_rms"] = result.head_grad_rms.astype(np.float32)
            sink.write(json.dumps(record) + "\n")
            sink.flush()
            np.savez_compressed(out / f"{suite['base']}-rows-{index}.npz", **rows)  # kept if the run is cut short
            log(
                f"{run['name']:>34} seed {seed}: forgot {record['total']:.3f} (head {record['head_only']:.3f}) "
                f"learned {record['learning']:.3f} [{result.seconds:.1f}s]"
            )
            del model


def main() -> int:
    parser = argparse.ArgumentParser(description="forecast benchmark runs (see forecast_suite.py)")
    parser.add_argument("--suite", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--only", nargs="*", default=[], help="run only these runs of the suite")
    parser.add_argument("--smoke", action="store_true", help="3 steps of 2 runs: check the path, measure nothing")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--model-path", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.worker is not None:
        worker(args.suite, args.out, args.worker, args.workers, args.device, args.model_path, args.smoke, args.only)
        return 0
    suite = json.loads((args.suite / "suite.json").read_text())
    base = suite["base"]
    model_path = None
    if base == "bench":  # pretrain once, share it with the workers
        model_path = Path(os.environ.get("TMPDIR", "/tmp")) / "forecast-bench-base"
        if not (model_path / "config.json").exists():
            load_base(suite, args.suite, args.device, print).save_pretrained(model_path)
    command = [sys.executable, __file__, "--suite", str(args.suite), "--out", str(args.out), "--device", args.device]
    command += ["--workers", str(args.workers)] + (["--model-path", str(model_path)] if model_path else [])
    command += ["--smoke"] if args.smoke else []
    command += ["--only", *args.only] if args.only else []
    procs = [subprocess.Popen([*command, "--worker", str(i)]) for i in range(args.workers)]
    status = max(p.wait() for p in procs)
    merge(args.out, base, args.workers)
    return status


def merge(out: Path, base: str, workers: int) -> None:
    """One runs file and one rows file per base, whatever the number of workers."""
    parts = [out / f"{base}-runs-{i}.jsonl" for i in range(workers)]
    lines = [line for p in parts if p.exists() for line in p.read_text().splitlines()]
    (out / f"{base}-runs.jsonl").write_text("".join(line + "\n" for line in lines))
    rows = {}
    for i in range(workers):
        path = out / f"{base}-rows-{i}.npz"
        if path.exists():
            rows.update(np.load(path))
            path.unlink()
    np.savez_compressed(out / f"{base}-rows.npz", **rows)
    for p in parts:
        p.unlink(missing_ok=True)


if __name__ == "__main__":
    sys.exit(main())
