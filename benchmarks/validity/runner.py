"""Fine-tune each base model on every run of its suite and measure what it forgot.

    python benchmarks/validity/runner.py --suite benchmarks/.cache/forecast/bench --out OUT [--device cuda]

The suite (`suite_v2.py`) holds token ids only, so this runs where there is a GPU and no
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

A v3 suite (`suite_v3.py`) also has two old texts, two regimes and a job list; every old
text gets the three forgettings, and each row's logit change and each position's loss change are
kept per old text. A v4 suite (`suite_v4.py`) names checkpoints in each plan: the total and
head-only forgetting on every old text are measured there too (`old.<name>.curve`), so each run is
a curve over steps.

Workers (`--workers`) split the runs between processes on one device. Results: one JSON line per
run in `OUT/<base>-runs.jsonl`, per-row arrays in `OUT/rows/<base>-<run>-<regime>-s<seed>.npz`
(float16). The sweep resumes: a job already in OUT is skipped, so a cut-short sweep is run again
with the same command. Held-out runs are logged without their numbers.
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
sys.path.insert(0, str(HERE.parents[1]))


def load_base(suite: dict, folder: Path, device: str, log):
    import torch
    from transformers import AutoModelForCausalLM

    base = suite["base"]
    if base == "bench":
        import data

        tokens = np.load(folder / "tokens.npz")
        stream = torch.from_numpy(tokens["pretrain"].astype(np.int64))
        return data.pretrain(data.BaseSpec(), stream, log, device=device)
    if base == "demo":
        return AutoModelForCausalLM.from_pretrained(HERE.parents[1] / "vocabrisk" / "demo_model").to(device)
    import suite_v2 as suites

    gguf = Path(os.environ["SMOLLM2_GGUF"]) if "SMOLLM2_GGUF" in os.environ else suites.smollm2_gguf()
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, torch_dtype=torch.float32)
    return model.to(device)


def windows_of(stream: np.ndarray, seq_len: int, limit: int):
    import torch

    count = len(stream) // seq_len
    picks = np.unique(np.linspace(0, count - 1, num=min(limit, count)).round().astype(int))
    return torch.from_numpy(stream[: count * seq_len].astype(np.int64).reshape(count, seq_len)[picks])


def jobs_of(suite: dict) -> list[dict]:
    """The suite's fine-tuning runs in order: its job list (v3), else every run once per seed (v2)."""
    if "jobs" in suite:
        return suite["jobs"]
    return [{"run": r["name"], "regime": "A", "seed": s} for s in range(suite["plan"]["seeds"]) for r in suite["runs"]]


def job_key(record: dict) -> tuple:
    return (record["run"], record.get("regime", "A"), record["seed"])


def finished(out: Path, base: str, fingerprint: str | None) -> set[tuple]:
    """The jobs already measured in OUT: a cut-short sweep resumes where it stopped."""
    done = set()
    for path in sorted(out.glob(f"{base}-runs*.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record.get("suite") != fingerprint:
                raise SystemExit(f"{path}: a run of suite {record.get('suite')}, not {fingerprint}; use another --out")
            done.add(job_key(record))
    return done


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
    import suite_v2 as suites
    import torch
    from transformers import AutoModelForCausalLM

    from vocabrisk.verify.measure import final_hidden, output_matrix, position_losses
    from vocabrisk.verify.train import finetune

    suite = json.loads((folder / "suite.json").read_text())
    plans = suite.get("plans", {"A": suite["plan"]})
    jobs = jobs_of(suite)
    if smoke:  # a few steps of two runs: checks the whole path in seconds on a CPU
        plans = {
            k: {**plan, "steps": 3, "tokens_per_step": plan["seq_len"] * 2}
            | ({"checkpoints": [1, 3]} if "checkpoints" in plan else {})
            for k, plan in plans.items()
        }
        jobs = jobs[:2]
    if only:
        jobs = [job for name in only for job in jobs if job["run"] == name]  # in the order given
    runs = {run["name"]: run for run in suite["runs"]}
    tokens = np.load(folder / "tokens.npz")
    fingerprint = suite.get("fingerprint")
    done = set() if smoke else finished(out, suite["base"], fingerprint)
    started = time.monotonic()

    def log(message: str) -> None:
        print(f"[{suite['base']} w{index} {time.monotonic() - started:5.0f}s] {message}", flush=True)

    if model_path is not None:
        base = AutoModelForCausalLM.from_pretrained(model_path).to(device)
    else:
        base = load_base(suite, folder, device, log)
    seq_len, windows = plans["A"]["seq_len"], 2 if smoke else plans["A"]["old_windows"]
    names = suite.get("old", [""])  # v2 suites have one old text, stored as "old"
    olds = {n: windows_of(tokens[f"old/{n}" if n else "old"].reshape(-1), seq_len, windows) for n in names}
    base_matrix = output_matrix(base)
    bf16 = plans["A"]["bf16"]
    base_hidden = {n: final_hidden(base, old, device, bf16) for n, old in olds.items()}
    base_pos = {n: position_losses(base_hidden[n], base_matrix, old, device) for n, old in olds.items()}
    rows_dir = out / "rows"
    rows_dir.mkdir(exist_ok=True)
    sink_path = out / (f"{suite['base']}-runs.jsonl" if workers == 1 else f"{suite['base']}-runs-{index}.jsonl")
    with sink_path.open("a") as sink:
        for job in jobs[index::workers]:
            if job_key(job) in done:
                continue
            run, plan, seed = runs[job["run"]], plans[job["regime"]], job["seed"]
            train = torch.from_numpy(tokens[f"{run['file']}/train"].astype(np.int64))
            held_ids = tokens[f"{run['file']}/heldout"]  # a probe's may be shorter than a window: no learning then
            heldout = (
                windows_of(held_ids, plan["seq_len"], 2 if smoke else 8) if len(held_ids) >= plan["seq_len"] else None
            )
            config = suites.train_config(plan, device, seed)
            model = copy.deepcopy(base)
            torch.manual_seed(seed)
            curve = {n: {"steps": [], "total": [], "head_only": []} for n in olds}

            def measure_along(done: int, model=model, curve=curve, plan=plan) -> None:
                """The old texts' loss at the plan's checkpoints (v4): each run is a curve."""
                if done not in plan.get("checkpoints", ()) or done == plan["steps"]:
                    return  # the last step is measured in full below
                matrix = output_matrix(model)
                for n, old in olds.items():
                    hidden = final_hidden(model, old, device, bf16)
                    curve[n]["steps"].append(done)
                    curve[n]["total"].append(
                        float((position_losses(hidden, matrix, old, device) - base_pos[n]).double().mean())
                    )
                    curve[n]["head_only"].append(
                        float((position_losses(base_hidden[n], matrix, old, device) - base_pos[n]).double().mean())
                    )

            result = finetune(model, train, config, after_step=measure_along)
            matrix = output_matrix(model)
            delta = matrix - base_matrix
            if heldout is not None:
                base_held = position_losses(final_hidden(base, heldout, device, bf16), base_matrix, heldout, device)
                held = position_losses(final_hidden(model, heldout, device, bf16), matrix, heldout, device)
            rows = {"drift": delta.norm(dim=1), "grad_rms": torch.from_numpy(result.head_grad_rms)}
            measured = {}
            for n, old in olds.items():
                hidden = final_hidden(model, old, device, bf16)
                total = position_losses(hidden, matrix, old, device) - base_pos[n]
                head = position_losses(base_hidden[n], matrix, old, device) - base_pos[n]
                body = position_losses(hidden, base_matrix, old, device) - base_pos[n]
                measured[n] = {
                    "base": float(base_pos[n].double().mean()),
                    "total": float(total.double().mean()),
                    "head_only": float(head.double().mean()),
                    "body_only": float(body.double().mean()),
                }
                flat = base_hidden[n][:, :-1].reshape(-1, base_hidden[n].shape[-1])
                rows[f"logit_shift/{n}"] = flat.mean(0) @ delta.T  # each row's mean logit change on old text
                rows[f"position_total/{n}"], rows[f"position_head/{n}"] = total, head
                if plan.get("checkpoints"):
                    measured[n]["curve"] = {
                        "steps": curve[n]["steps"] + [plan["steps"]],
                        "total": curve[n]["total"] + [measured[n]["total"]],
                        "head_only": curve[n]["head_only"] + [measured[n]["head_only"]],
                    }
            first = measured[names[0]]
            record = {
                "base": suite["base"],
                "suite": fingerprint,
                "run": run["name"],
                "role": run["role"],
                "split": run.get("split", "heldout"),
                "regime": job["regime"],
                "seed": seed,
                "steps": plan["steps"],
                "lr": plan["lr"],
                "train_tokens": run["train_tokens"],
                "epochs": plan["steps"] * plan["tokens_per_step"] / max(run["train_tokens"], 1),
                "base_old": first["base"],
                "total": first["total"],
                "head_only": first["head_only"],
                "body_only": first["body_only"],
                **({"old": measured} if names != [""] else {}),
                "learning": None if heldout is None else float((base_held - held).double().mean()),
                "final_train_loss": float(np.mean(result.losses[-10:])),
                "seconds": result.seconds,
                "torch": torch.__version__,
            }
            arrays = {k: v.detach().cpu().numpy().astype(np.float16) for k, v in rows.items()}
            np.savez_compressed(rows_dir / f"{suite['base']}-{run['file']}-{job['regime']}-s{seed}.npz", **arrays)
            sink.write(json.dumps(record) + "\n")
            sink.flush()
            if record["split"] == "heldout":  # held-out numbers are not looked at while the forecast is designed
                log(f"{run['name']:>36} {job['regime']} seed {seed}: measured (held out) [{result.seconds:.0f}s]")
            else:
                log(
                    f"{run['name']:>36} {job['regime']} seed {seed}: forgot {record['total']:.3f} "
                    f"(head {record['head_only']:.3f}) learned {record['learning'] or float('nan'):.3f} "
                    f"[{result.seconds:.0f}s]"
                )
            del model


def main() -> int:
    parser = argparse.ArgumentParser(description="forecast benchmark runs (see suite_v2.py)")
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
    if args.workers > 1:
        merge(args.out, base, args.workers)
    return status


def merge(out: Path, base: str, workers: int) -> None:
    """One runs file per base, whatever the number of workers: their parts are appended to it."""
    parts = [out / f"{base}-runs-{i}.jsonl" for i in range(workers)]
    lines = [line for p in parts if p.exists() for line in p.read_text().splitlines()]
    with (out / f"{base}-runs.jsonl").open("a") as sink:
        sink.write("".join(line + "\n" for line in lines))
    for p in parts:
        p.unlink(missing_ok=True)


if __name__ == "__main__":
    sys.exit(main())
