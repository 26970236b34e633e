"""Does vocabrisk's score rank real forgetting? The validity benchmark behind docs/VALIDITY.md.

    pip install torch==2.13.0 && pip install -e '.[verify]'   # pin torch: unpinned pulls a CUDA build
    python benchmarks/validity/v1.py

Pretrains a small base model on a mix of the real corpora in ../shared/data (cached under
benchmarks/.cache/, git-ignored), fine-tunes it with one budget on each candidate corpus and
several seeds, measures forgetting, learning, per-row head drift and the head-eps fix, and
holds vocabrisk's score and the naive baselines against the measurements. Runs already in the
cache are reused, so an interrupted benchmark resumes. Writes docs/validity/results.json,
results.md and plots. Exits 2 with a message when ../shared/data is absent.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data

OUT = data.REPO / "docs" / "validity"
CANDIDATE_CHARS = 200_000
SPEAKER = re.compile(r"^[A-Z][A-Za-z ]*:$", re.MULTILINE)
COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)


@dataclass(frozen=True)
class RunSpec:
    """The fine-tuning budget every candidate gets."""

    steps: int = 200
    lr: float = 3e-4  # the base model's pretraining ended at 3e-4; more makes held-out loss rise
    tokens_per_step: int = 1024
    seq_len: int = 64
    warmup_steps: int = 20  # without it, fresh Adam moments shock every row alike and blur what vocabulary does
    eval_windows: int = 96

    def key(self) -> str:
        return "runs-" + "-".join(str(v) for v in asdict(self).values())


def candidates(splits: dict) -> dict[str, list[str]]:
    """Candidate corpora from the fine-tuning pools: single languages, code, mixtures, narrow subsets."""
    pool = {name: parts["finetune"] for name, parts in splits.items()}

    def take(name: str, chars: int) -> list[str]:
        out, total = [], 0
        for chunk in pool[name]:
            if total >= chars:
                break
            out.append(chunk)
            total += len(chunk)
        return out

    def mix(*names: str) -> list[str]:
        return [chunk for name in names for chunk in take(name, CANDIDATE_CHARS // len(names))]

    speakers = data._line_chunks([m.group(0) for chunk in pool["en-shakespeare"] for m in SPEAKER.finditer(chunk)])
    comments = data._line_chunks([m.group(0) for chunk in pool["code-lua"] for m in COMMENT.finditer(chunk)])
    return {
        **{name: take(name, CANDIDATE_CHARS) for name in pool},
        "en+de": mix("en-shakespeare", "de-grimm"),
        "ko+code": mix("ko-chatbot", "code-lua"),
        "all-five": mix(*pool),
        "narrow:speaker-names": speakers,
        "narrow:lua-comments": comments,
    }


def run_candidate(name, texts, loaded, ref_profile, old, spec: RunSpec, seeds, folder: Path, log) -> None:
    """Plain and head-eps runs for each seed; each run's numbers and per-row arrays go to `folder`."""
    import numpy as np
    import torch

    from vocabrisk import TrainingPlan, scan
    from vocabrisk.corpus import ReadOptions
    from vocabrisk.counting import SpecialTokenPolicy
    from vocabrisk.risk.summary import Summary
    from vocabrisk.verify.data import load_streams, windows
    from vocabrisk.verify.epsilon import measured_head_eps
    from vocabrisk.verify.measure import Evaluator, effects, head_inputs, head_matrix, measure_run
    from vocabrisk.verify.run import load_causal_lm
    from vocabrisk.verify.train import TrainConfig, finetune

    safe = re.sub(r"[^a-z0-9+-]", "_", name)
    corpus = data.write_jsonl(folder / "corpora" / f"{safe}.jsonl", texts)
    profile = scan([str(corpus)], loaded, reference=ref_profile)
    profile.save(folder / "profiles" / safe)
    plan = TrainingPlan(tokens_per_step=spec.tokens_per_step, steps=spec.steps, beta2=0.999)
    risk = Summary.of(profile, plan).risk
    streams = load_streams(loaded, [str(corpus)], [], ReadOptions(), SpecialTokenPolicy(), 0.1, spec.seq_len + 1)
    base = load_causal_lm(loaded, "cpu")
    evaluator = Evaluator(old, windows(streams.heldout, spec.seq_len, spec.eval_windows))
    base_losses = evaluator.losses(base)
    base_head, hidden = head_matrix(base), head_inputs(base, old, "cpu")
    counts = profile.counts.counts
    fed = profile.coverable & (counts > 0) & ~risk.starved
    edits = {"starved_rows": risk.starved, "top_drifted_rows": None}
    for seed in seeds:
        target = folder / f"{safe}-seed{seed}.json"
        if target.exists():
            continue
        started = time.monotonic()
        trained = TrainingPlan(
            steps=spec.steps,
            learning_rate=spec.lr,
            tokens_per_step=spec.tokens_per_step,
            warmup_steps=spec.warmup_steps,
        )
        config = TrainConfig(trained, seq_len=spec.seq_len, seed=seed)
        record = {"candidate": name, "seed": seed, "tokens": int(profile.total_tokens), "base": base_losses}
        arrays = {}
        head_eps = None
        for run in ("plain", "head_eps"):
            model = copy.deepcopy(base)
            torch.manual_seed(seed)
            result = finetune(model, streams.train, config, head_eps=head_eps)
            measured = measure_run(model, base, base_head, evaluator, hidden, edits)
            record[run] = {**effects(measured, base_losses), "head_eps": result.head_eps, "seconds": result.seconds}
            arrays[f"{run}_drift"] = measured.drift
            arrays[f"{run}_logit_drift"] = measured.logit_drift
            arrays[f"{run}_grad_rms"] = result.head_grad_rms
            if run == "plain":
                record["recommended_eps"] = measured_head_eps(result.head_grad_rms, counts, fed, risk.starved)
                head_eps = record["recommended_eps"]["value"]
        np.savez_compressed(
            folder / f"{safe}-seed{seed}.npz",
            counts=counts,
            prior=profile.prior,
            coverable=profile.coverable,
            **arrays,
        )
        target.write_text(json.dumps(record, indent=1) + "\n")
        plain, fixed = record["plain"], record["head_eps"]
        log(
            f"{name:>22} seed {seed}: forgetting {plain['forgetting']:.3f} "
            f"(head only {plain['forgetting_head_only']:.3f}), learning {plain['learning']:.3f}; "
            f"eps {head_eps:g}: forgetting {fixed['forgetting']:.3f}, "
            f"learning {fixed['learning']:.3f}  [{time.monotonic() - started:.0f}s]"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description="vocabrisk validity benchmark (see docs/VALIDITY.md)")
    parser.add_argument("--seeds", type=int, default=3, help="fine-tuning seeds per candidate")
    parser.add_argument("--steps", type=int, default=RunSpec.steps, help="fine-tuning steps per run")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--only", nargs="*", help="run only these candidates")
    args = parser.parse_args()
    if not data.SHARED.is_dir():
        print(f"validity benchmark: {data.SHARED} is absent; it needs the shared corpora. Nothing was run.")
        return 2
    try:
        import torch
    except ImportError:
        print("validity benchmark: needs the verify extra: pip install -e '.[verify]'")
        return 2

    import v1_report as report

    from vocabrisk import scan
    from vocabrisk.verify.data import encode, windows

    torch.set_num_threads(args.threads)
    started = time.monotonic()

    def log(message: str) -> None:
        print(f"[{time.monotonic() - started:6.0f}s] {message}", flush=True)

    base_spec, spec = data.BaseSpec(), RunSpec(steps=args.steps)
    folder, splits = data.base_model(base_spec, log)
    from vocabrisk.counting import SpecialTokenPolicy
    from vocabrisk.model.loaded import load_model

    loaded = load_model(str(folder))
    reference = [c for parts in splits.values() for c in parts["reference"]]
    ref_file = data.write_jsonl(folder / "reference.jsonl", reference)
    ref_profile = scan([str(ref_file)], loaded, reference=None)
    old = windows(encode(loaded, reference, SpecialTokenPolicy()), spec.seq_len, spec.eval_windows)
    runs = folder / spec.key()
    chosen = candidates(splits)
    for name, texts in chosen.items():
        if args.only and name not in args.only:
            continue
        run_candidate(name, texts, loaded, ref_profile, old, spec, range(args.seeds), runs, log)
    results = report.analyse(runs, list(chosen), spec, base_spec, folder)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    (OUT / "results.md").write_text(report.markdown(results))
    report.plots(results, runs, OUT)
    print(report.markdown(results))
    log(f"done; results in {OUT.relative_to(data.REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
