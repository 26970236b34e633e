"""Score the forecast and its baselines on the v3 real-model runs (docs/validity/v3/PROTOCOL.md).

    python benchmarks/real_score.py                 # design runs only: what the forecast is designed on
    python benchmarks/real_score.py --final         # held out too, once the forecast is frozen

Reads the suite (`real_suite.py`, for the texts the forecast scans) and the raw runs
(`docs/validity/v3/smollm2-runs.jsonl`). Every prediction is recomputed from counts, the head and
the plan, so a change to the forecast is re-scored in seconds and the raw runs never change.
`--final` writes docs/validity/v3/results.json and results.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parent))

import forecast_suite as v2
import real_suite as suite_recipe
from forecast_score import spearman_ci

RAW = v2.data.REPO / "docs" / "validity" / "v3"
RUNS = RAW / "smollm2-runs.jsonl"


class Runs:
    """The v3 suite, its measured runs and a profile of every run's text against each old text."""

    def __init__(self, log, final: bool) -> None:
        from vocabrisk import load_model, scan
        from vocabrisk.counting import SpecialTokenPolicy
        from vocabrisk.model.head import read_head

        folder = suite_recipe.OUT
        self.suite = json.loads((folder / "suite.json").read_text())
        self.plans = {k: v2.train_config(p).plan() for k, p in self.suite["plans"].items()}
        self.info = {run["name"]: run for run in self.suite["runs"]}
        self.measured = defaultdict(list)  # (name, regime) -> records
        for line in RUNS.read_text().splitlines() if RUNS.exists() else []:
            record = json.loads(line)
            if record["suite"] != self.suite["fingerprint"]:
                raise SystemExit(f"{RUNS}: a run of suite {record['suite']}, not {self.suite['fingerprint']}")
            if record["split"] == "heldout" and not final:
                continue  # not seen while designing (PROTOCOL.md)
            self.measured[record["run"], record["regime"]].append(record)
        self.loaded = load_model(str(v2.smollm2_gguf()))
        self.head = read_head(self.loaded.head).astype(np.float32)
        self.profiles = {}
        for name in {n for n, _ in self.measured}:
            path = folder / "texts" / f"{self.info[name]['file']}.jsonl"
            for old in self.suite["old"]:
                reference = [str(folder / f"old-{old}.jsonl")]
                self.profiles[name, old] = scan(
                    [str(path)], self.loaded, reference=reference, policy=SpecialTokenPolicy()
                )
        log(f"{len(self.measured)} measured runs, {len(self.profiles)} profiles")

    def value(self, name: str, regime: str, old: str, key: str) -> float:
        """The measured quantity, seed mean."""
        return float(np.mean([r["old"][old][key] for r in self.measured[name, regime]]))

    def names(self, split: str, regime: str = "A") -> list[str]:
        return sorted(n for n, r in self.measured if r == regime and self.info[n]["split"] == split)


def baselines(profile, plan) -> dict[str, float]:
    """The protocol's baselines: each a count-only number that a forecast must beat."""
    from vocabrisk.risk import assess, never_seen_share, unigram_kl

    coverable = profile.coverable
    prior = np.where(coverable, profile.prior, 0.0)
    prior = prior / prior.sum()
    corpus = np.where(coverable, profile.counts.counts + 0.5, 0.0)
    corpus = corpus / corpus.sum()
    fed = profile.shares > 0
    return {
        "implied epochs": plan.implied_epochs(profile.total_tokens),
        "unigram KL (old || corpus)": unigram_kl(profile),
        "unigram KL (corpus || old)": float(np.sum(np.where(fed, profile.shares * np.log(corpus / prior), 0.0))),
        "never-seen share": never_seen_share(profile),
        "starved usage (v0.1)": assess(profile, plan).score,
        "corpus size (smaller first)": -float(profile.total_tokens),
    }


def features(profile, plan, head: np.ndarray) -> dict[str, float]:
    """Candidate terms for the forecast's design (design runs only): each from counts, the head and the plan."""
    from vocabrisk.summary import Summary

    coverable = profile.coverable
    old = np.where(coverable, profile.reference_counts, 0.0)
    p = old / old.sum()
    q = np.where(coverable, profile.shares, 0.0)
    q = q / q.sum()
    mixture = 0.5 * (p + q)
    with np.errstate(divide="ignore", invalid="ignore"):
        js = 0.5 * np.nansum(np.where(p > 0, p * np.log(p / mixture), 0)) + 0.5 * np.nansum(
            np.where(q > 0, q * np.log(q / mixture), 0)
        )
    unit = head / np.maximum(np.linalg.norm(head, axis=1, keepdims=True), 1e-9)
    mu_p, mu_q = p @ unit, q @ unit
    summary = Summary.of(profile, plan)
    fed = q > 0
    return {
        "log epochs": float(np.log(plan.implied_epochs(profile.total_tokens))),
        "JS": float(js),
        "old covered": float(p[fed].sum()),
        "corpus in old": float(q[p > 0].sum()),
        "corpus entropy": float(-np.sum(q[fed] * np.log(q[fed]))),
        "embedding cosine": float(mu_p @ mu_q / np.linalg.norm(mu_p) / np.linalg.norm(mu_q)),
        "embedding distance": float(np.linalg.norm(mu_p - mu_q)),
        "forecast v2 head": summary.forecast.head,
        "forecast v2 total": summary.forecast.total,
    }


def spearman(x, y) -> float:
    return float(spearmanr(x, y).statistic)


def main() -> int:
    parser = argparse.ArgumentParser(description="score the v3 real-model forecast benchmark")
    parser.add_argument("--final", action="store_true", help="read the held-out runs too (after the freeze)")
    args = parser.parse_args()
    runs = Runs(lambda m: print(m, flush=True), args.final)
    split = "heldout" if args.final else "design"
    names = runs.names(split)
    plan = runs.plans["A"]
    for old in runs.suite["old"]:
        for target in ("total", "head_only"):
            y = [runs.value(n, "A", old, target) for n in names]
            print(f"\n{split} ({len(names)} runs), old text {old}, {target}:")
            table = defaultdict(list)
            for n in names:
                profile = runs.profiles[n, old]
                terms = baselines(profile, plan) | (features(profile, plan, runs.head) if not args.final else {})
                for key, value in terms.items():
                    table[key].append(value)
            for key, values in table.items():
                ci = spearman_ci(values, y)
                print(f"  {key:>30}: {ci['rho']:+.2f} [{ci['low']:+.2f}, {ci['high']:+.2f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
