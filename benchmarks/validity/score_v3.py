"""Score the forecast and its baselines on the v3 real-model runs (docs/validity/v3/PROTOCOL.md).

    python benchmarks/validity/score_v3.py            # design runs only: what the forecast is designed on
    python benchmarks/validity/score_v3.py --final     # held out too, once the forecast is frozen

Reads the suite (`suite_v3.py`, for the texts the forecast scans) and the raw runs
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

import suite_v2 as v2
import suite_v3 as suite_recipe
from score_v2 import spearman_ci

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
        self.plans = {k: v2.train_config(p).plan for k, p in self.suite["plans"].items()}
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
    from vocabrisk.risk.exposure import assess, never_seen_share, unigram_kl

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


PREDICTOR = "forecast v3 (calibrated)"
ABLATIONS = {
    "without the head's term": lambda f, g: g * f.terms.unit,
    "without the body's term": lambda f, g: f.head,
    "body without S (starved old share)": lambda f, g: (
        f.head + g * f.lr_sum * f.terms.alike * np.log1p(f.terms.repeats)
    ),
    "body without B (alike)": lambda f, g: f.head + g * f.lr_sum * f.terms.starved * np.log1p(f.terms.repeats),
    "body without R (repetition)": lambda f, g: f.head + g * f.lr_sum * f.terms.starved * f.terms.alike,
    "R as implied epochs": lambda f, g: f.head + g * f.lr_sum * f.terms.starved * f.terms.alike * np.log1p(f.epochs),
}


def calibrate(runs: Runs, old: str):
    """The forecast's constants fitted on the probes' regime-A runs measured on OLD
    (`vocabrisk.risk.calibration.fit`)."""
    from vocabrisk.risk.calibration import Calibration, ProbeRun, fit
    from vocabrisk.risk.forecast import competition
    from vocabrisk.risk.summary import Summary

    probes = []
    for name in runs.names("probe"):
        profile = runs.profiles[name, old]
        unit = Summary.of(profile, runs.plans["A"], Calibration(kappa=1.0, body_gain=1.0))

        def curve(kappas, unit=unit, profile=profile):
            return competition(unit.forecast.shift, profile.shares > 0, profile.old_text, unit.risk.prior, kappas)

        probes.append(
            ProbeRun(name, runs.value(name, "A", old, "head_only"), runs.value(name, "A", old, "total"),
                     unit.forecast.terms.unit, curve)
        )  # fmt: skip
    return fit(probes)


def score(runs: Runs, split: str) -> dict:
    """Every number the protocol reports, for the runs of SPLIT (held out, or design while designing)."""
    from vocabrisk.risk.calibration import Calibration
    from vocabrisk.risk.summary import Summary

    names = runs.names(split)
    results = {"split": split, "runs": len(names), "old": {}}
    for old in runs.suite["old"]:
        calibration = calibrate(runs, old)
        measured = {key: [runs.value(n, "A", old, key) for n in names] for key in ("total", "head_only")}
        forecasts = {n: Summary.of(runs.profiles[n, old], runs.plans["A"], calibration).forecast for n in names}
        defaults = {n: Summary.of(runs.profiles[n, old], runs.plans["A"], Calibration()).forecast for n in names}
        predictors = {
            PREDICTOR: [forecasts[n] for n in names],
            "forecast v3 (uncalibrated defaults)": [defaults[n] for n in names],
        }
        table = {}
        for label, made in predictors.items():
            table[label] = {
                "total": spearman_ci([f.total for f in made], measured["total"]),
                "head_only": spearman_ci([f.head for f in made], measured["head_only"]),
            }
        for n in names:
            for key, value in baselines(runs.profiles[n, old], runs.plans["A"]).items():
                table.setdefault(key, {"values": []})["values"].append(value)
        for key in list(table):
            if "values" in table[key]:
                values = table[key].pop("values")
                table[key] = {t: spearman_ci(values, measured[t]) for t in ("total", "head_only")}
        ablation = {}
        for label, term in ABLATIONS.items():
            x = [term(forecasts[n], calibration.body_gain) for n in names]
            ablation[label] = {t: spearman_ci(x, measured[t]) for t in ("total", "head_only")}
        within = [m > 0 and 0.5 <= forecasts[n].total / m <= 2.0 for n, m in zip(names, measured["total"], strict=True)]
        within_default = [
            m > 0 and 1 / 3 <= defaults[n].total / m <= 3.0 for n, m in zip(names, measured["total"], strict=True)
        ]
        results["old"][old] = {
            "calibration": calibration.to_dict(),
            "spearman": table,
            "ablation": ablation,
            "within_x2_calibrated": float(np.mean(within)),
            "within_x3_defaults": float(np.mean(within_default)),
            "ceiling": seed_ceiling(runs, split, old),
            "regime_b": regime_b(runs, split, old, calibration),
            "per_run": [
                {
                    "run": n,
                    "total": measured["total"][i],
                    "head_only": measured["head_only"][i],
                    "forecast_total": forecasts[n].total,
                    "forecast_head": forecasts[n].head,
                    "default_total": defaults[n].total,
                    "default_head": defaults[n].head,
                    "terms": forecasts[n].terms.to_dict(),
                }
                for i, n in enumerate(names)
            ],
        }
    return results


def seed_ceiling(runs: Runs, split: str, old: str) -> dict | None:
    """Seed 0 against seed 1 over the candidates run twice: the order any forecast can reach."""
    doubled = [n for n in runs.names(split) if len(runs.measured[n, "A"]) >= 2]
    if len(doubled) < 3:
        return None
    pair = {seed: {n: next(r for r in runs.measured[n, "A"] if r["seed"] == seed) for n in doubled} for seed in (0, 1)}
    return {"candidates": len(doubled)} | {
        t: spearman_ci([pair[0][n]["old"][old][t] for n in doubled], [pair[1][n]["old"][old][t] for n in doubled])
        for t in ("total", "head_only")
    }


def regime_b(runs: Runs, split: str, old: str, calibration) -> dict | None:
    """The forecast (calibrated on regime-A probes) against the regime-B runs: the plan transfer."""
    from vocabrisk.risk.summary import Summary

    names = runs.names(split, "B")
    if len(names) < 3:
        return None
    made = [Summary.of(runs.profiles[n, old], runs.plans["B"], calibration).forecast for n in names]
    measured = [runs.value(n, "B", old, "total") for n in names]
    return {
        "runs": len(names),
        "total": spearman_ci([f.total for f in made], measured),
        "within_x2": float(np.mean([m > 0 and 0.5 <= f.total / m <= 2 for f, m in zip(made, measured, strict=True)])),
    }


def markdown(results: dict) -> str:
    """The results as the tables docs/VALIDITY.md quotes."""

    def ci(c: dict) -> str:
        return f"{c['rho']:+.2f} [{c['low']:+.2f}, {c['high']:+.2f}]"

    lines = [f"# v3 results: SmolLM2-135M-Instruct, {results['split']} runs ({results['runs']} candidates)", ""]
    for old, r in results["old"].items():
        cal = r["calibration"]
        lines += [
            f"## Old text: {old}",
            "",
            f"Calibration (the 5 probes only): kappa {cal['kappa']:.3g}, body_gain {cal['body_gain']:.3g}, "
            f"band ×/÷ {cal['band']:.2f}. Calibrated forecast within ×2 of the measured total: "
            f"{r['within_x2_calibrated']:.0%}; uncalibrated defaults within ×3: {r['within_x3_defaults']:.0%}.",
            "",
            "| predictor | Spearman vs total | Spearman vs head-only |",
            "|---|---|---|",
        ]
        lines += [f"| {k} | {ci(v['total'])} | {ci(v['head_only'])} |" for k, v in r["spearman"].items()]
        if r["ceiling"]:
            c = r["ceiling"]
            lines += [f"| seed vs seed ({c['candidates']} candidates): the ceiling | {ci(c['total'])} | "
                      f"{ci(c['head_only'])} |"]  # fmt: skip
        if r["regime_b"]:
            b = r["regime_b"]
            share = f"{b['within_x2']:.0%}"
            lines += ["", f"Regime B ({b['runs']} runs, 80 steps): Spearman {ci(b['total'])}; within ×2 {share}."]
        lines += ["", "Ablation (the calibrated forecast with one term removed):", ""]
        lines += ["| forecast | total | head-only |", "|---|---|---|"]
        lines += [f"| {k} | {ci(v['total'])} | {ci(v['head_only'])} |" for k, v in r["ablation"].items()]
        lines += ["", "| run | measured total | forecast | measured head | forecast head |", "|---|---|---|---|---|"]
        lines += [
            f"| {p['run']} | {p['total']:+.3f} | {p['forecast_total']:.3f} | {p['head_only']:+.3f} "
            f"| {p['forecast_head']:.3f} |"
            for p in r["per_run"]
        ]
        lines.append("")
    return "\n".join(lines)


def spearman(x, y) -> float:
    return float(spearmanr(x, y).statistic)


def main() -> int:
    parser = argparse.ArgumentParser(description="score the v3 real-model forecast benchmark")
    parser.add_argument("--final", action="store_true", help="read the held-out runs too (after the freeze)")
    args = parser.parse_args()
    runs = Runs(lambda m: print(m, flush=True), args.final)
    results = score(runs, "heldout" if args.final else "design")
    text = markdown(results)
    print(text)
    if args.final:
        (RAW / "results.json").write_text(json.dumps(results, indent=1) + "\n")
        (RAW / "results.md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
