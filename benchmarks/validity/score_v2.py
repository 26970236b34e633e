"""Score the forecast against the measured runs: held-out Spearman, calibration, replay, rows, ablation.

    python benchmarks/validity/score_v2.py            # reads docs/validity/v2/*-runs.jsonl

Needs the suites (`suite_v2.py`, for the texts the forecast reads) and the raw runs
(`runner.py`, kept in the repo under docs/validity/v2/). Predictions are recomputed from
counts every time, so a change to `vocabrisk/risk/forecast.py` is re-scored in seconds; the raw runs
never change. Writes docs/validity/v2/results-<base>.json and .md.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy.stats import rankdata, spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parent))

import suite_v2 as suites

from vocabrisk.risk.calibration import Calibration, ProbeRun, fit
from vocabrisk.risk.exposure import assess, exposure, never_seen_share, unigram_kl
from vocabrisk.risk.forecast import competition, forecast
from vocabrisk.risk.summary import old_usage
from vocabrisk.verify.metrics import auroc, top_share

RAW = suites.data.REPO / "docs" / "validity" / "v2"
BOOTSTRAP = 2000
ABLATIONS = ("no locality", "no rise", "no step size", "never-seen for exposure", "no body")


def spearman_ci(x, y, seed: int = 0) -> dict:
    """Spearman with a bootstrap 95% interval over candidates (all resamples ranked at once)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    rho = float(spearmanr(x, y).statistic)
    pick = np.random.default_rng(seed).integers(0, len(x), (BOOTSTRAP, len(x)))
    rx, ry = rankdata(x[pick], axis=1), rankdata(y[pick], axis=1)
    rx, ry = rx - rx.mean(axis=1, keepdims=True), ry - ry.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        draws = (rx * ry).sum(axis=1) / np.sqrt((rx**2).sum(axis=1) * (ry**2).sum(axis=1))
    draws = draws[np.isfinite(draws)]
    low, high = np.percentile(draws, [2.5, 97.5]) if len(draws) else (float("nan"), float("nan"))
    return {"rho": rho, "low": float(low), "high": float(high)}


class Base:
    """One base model's suite, runs and the per-run inputs the forecast reads."""

    def __init__(self, name: str, log) -> None:
        from vocabrisk import load_model, scan
        from vocabrisk.counting import SpecialTokenPolicy

        folder = suites.CACHE / name
        self.name = name
        self.suite = json.loads((folder / "suite.json").read_text())
        self.plan = suites.train_config(self.suite["plan"]).plan
        self.loaded = load_model(self.suite["model"])
        old = [str(folder / "old.jsonl")]  # the forecast reads the old text as `vocabrisk scan --reference` keeps it
        self.measured = defaultdict(list)
        for path in sorted(RAW.glob(f"{name}-runs*.jsonl")):  # merged, or a worker's part of a cut-short run
            for line in path.read_text().splitlines():
                record = json.loads(line)
                self.measured[record["run"]].append(record)
        self.profiles = {}
        for run in self.suite["runs"]:
            if run["name"] in self.measured:
                path = folder / "texts" / f"{run['file']}.jsonl"
                self.profiles[run["name"]] = scan([str(path)], self.loaded, reference=old, policy=SpecialTokenPolicy())
        self.roles = {run["name"]: run["role"] for run in self.suite["runs"]}
        rows = sorted(RAW.glob(f"{name}-rows*.npz"))
        self.rows = np.load(rows[0]) if rows else None
        log(f"{name}: {len(self.profiles)} runs scanned, {sum(map(len, self.measured.values()))} measured")

    def mean(self, run: str, key: str) -> float:
        return float(np.mean([r[key] for r in self.measured[run]]))

    def names(self, *roles: str) -> list[str]:
        return [n for n, role in self.roles.items() if role in roles and n in self.measured]

    def row_auroc(self, name: str, calibration: Calibration) -> float | None:
        """AUROC of the predicted |shift| for the 10% of rows that drifted most (seed means)."""
        if self.rows is None:
            return None
        file = next(r["file"] for r in self.suite["runs"] if r["name"] == name)
        drift = [self.rows[key] for key in self.rows.files if key.startswith(f"{file}/") and key.endswith("/drift")]
        if not drift:
            return None
        profile = self.profiles[name]
        measured = np.mean(np.array(drift, dtype=np.float64), axis=0)[profile.coverable]
        predicted = np.abs(self.predict(name, calibration).shift)[profile.coverable]
        return auroc(predicted, top_share(measured, 0.1))

    def predict(self, name: str, calibration: Calibration, ablate: str | None = None):
        profile = self.profiles[name]
        plan = self.plan
        shares = profile.shares
        prior = unit_prior(profile)
        rows = exposure(shares, plan)
        if ablate == "never-seen for exposure":
            rows = (profile.counts.counts == 0).astype(float)
        if ablate == "no rise":
            shares = np.minimum(shares, prior)
        if ablate == "no step size":
            plan = replace(plan, eps=0.0)
        old = None if ablate == "no locality" else profile.old_text
        return forecast(
            shares, np.where(profile.coverable, rows, 0.0), prior, old, plan, profile.total_tokens, calibration,
            old_usage=old_usage(profile), collision=(profile.repetition or {}).get("collision"),
            width=profile.model["head"].hidden if profile.model.get("head") else None,
        )  # fmt: skip

    def baselines(self, name: str) -> dict:
        profile = self.profiles[name]
        score = assess(profile, self.plan).score
        return {
            "v1 score": score,
            "never-seen share": never_seen_share(profile),
            "unigram KL": unigram_kl(profile),
            "S(1-S)": score * (1 - score),
            "implied epochs": self.plan.implied_epochs(profile.total_tokens),
            "corpus size (smaller first)": -float(profile.total_tokens),
        }

    def calibrate(self, ablate: str | None = None) -> Calibration:
        """The forecast's constants fitted on this base's probe runs (`vocabrisk.risk.calibration.fit`)."""
        if len(self.names("probe")) < 2:
            return Calibration(source="defaults: fewer than two probe runs finished")
        runs = []
        for name in self.names("probe"):
            bare = Calibration(kappa=1.0, body_gain=1.0)
            unit = self.predict(name, bare, ablate)  # kappa 1: the shift is the drive itself
            profile = self.profiles[name]
            old = None if ablate == "no locality" else profile.old_text

            def curve(kappas, unit=unit, profile=profile, old=old):
                return competition(unit.shift, profile.shares > 0, old, unit_prior(profile), kappas)

            runs.append(ProbeRun(name, self.mean(name, "head_only"), self.mean(name, "total"), unit.terms.unit, curve))
        fitted = fit(runs)
        if ablate == "no body":
            fitted = replace(fitted, body_gain=0.0)
        return fitted


def unit_prior(profile) -> np.ndarray:
    prior = np.where(profile.coverable, profile.prior, 0.0)
    return prior / prior.sum()


def score_base(base: Base) -> dict:
    held = base.names("candidate", "replay")
    measured = {key: [base.mean(n, key) for n in held] for key in ("head_only", "total", "body_only", "learning")}
    calibration = base.calibrate()
    forecasts = {n: base.predict(n, calibration) for n in held}
    default = {n: base.predict(n, Calibration()) for n in held}
    predictors = {
        "forecast (calibrated)": ([forecasts[n].head for n in held], [forecasts[n].total for n in held]),
        "forecast (defaults)": ([default[n].head for n in held], [default[n].total for n in held]),
    }
    baselines = {n: base.baselines(n) for n in held}
    for key in next(iter(baselines.values())):
        values = [baselines[n][key] for n in held]
        predictors[key] = (values, values)
    correlations = {
        name: {"head": spearman_ci(head, measured["head_only"]), "total": spearman_ci(total, measured["total"])}
        for name, (head, total) in predictors.items()
    }
    within = {
        key: float(
            np.mean(
                [
                    0.5 <= getattr(forecasts[n], attr) / max(m, 1e-9) <= 2
                    for n, m in zip(held, measured[key], strict=True)
                ]
            )
        )
        for key, attr in (("total", "total"), ("head_only", "head"))
    }
    ablation = {}
    for term in ABLATIONS:
        fitted = base.calibrate(term)
        preds = [base.predict(n, fitted, term) for n in held]
        ablation[term] = {
            "head": spearman_ci([p.head for p in preds], measured["head_only"])["rho"],
            "total": spearman_ci([p.total for p in preds], measured["total"])["rho"],
        }
    replay = []
    for name in suites.REPLAYED:
        curve = [name] + [f"{name}+replay{round(s * 100)}%" for s in suites.REPLAY_SHARES]
        if all(c in base.measured for c in curve):
            replay.append(
                {
                    "candidate": name,
                    "shares": [0.0, *suites.REPLAY_SHARES],
                    "measured": [base.mean(c, "total") for c in curve],
                    "forecast": [base.predict(c, calibration).total for c in curve],
                }
            )
    rows = []
    for i, n in enumerate(held):
        f = forecasts[n]
        rows.append(
            {
                "run": n,
                "role": base.roles[n],
                "tokens": int(base.profiles[n].total_tokens),
                "epochs": f.epochs,
                **{
                    k: measured[key][i] for k, key in (("head", "head_only"), ("total", "total"), ("body", "body_only"))
                },
                "learning": measured["learning"][i],
                "forecast_head": f.head,
                "forecast_total": f.total,
                "band": [f.low, f.high],
                "forecast_head_defaults": default[n].head,
                "forecast_total_defaults": default[n].total,
                "row_auroc": base.row_auroc(n, calibration),
                **baselines[n],
            }
        )
    return {
        "base": base.name,
        "plan": base.suite["plan"],
        "calibration": calibration.to_dict(),
        "probes": [
            {"run": p, "head": base.mean(p, "head_only"), "total": base.mean(p, "total")} for p in base.names("probe")
        ],
        "candidates": rows,
        "row_auroc_mean": float(np.mean([r["row_auroc"] for r in rows if r["row_auroc"] is not None] or [np.nan])),
        "correlations": correlations,
        "within_factor_2": within,
        "ablation": ablation,
        "replay": replay,
    }


def _rho(c: dict) -> str:
    return f"{c['rho']:+.2f} [{c['low']:+.2f}, {c['high']:+.2f}]"


def markdown(results: list[dict]) -> str:
    """The tables of docs/VALIDITY.md, from results.json."""
    out = []
    for r in results:
        cal = r["calibration"]
        out.append(f"### {r['base']}\n")
        out.append(
            f"Calibration (probes only): kappa {cal['kappa']:.3g}, body_gain {cal['body_gain']:.3g}, "
            f"band ×/÷ {cal['band']:.2f}. "
            f"Held-out runs: {len(r['candidates'])}.\n"
        )
        out.append("| predictor | vs head-only forgetting | vs total forgetting |\n|---|---|---|")
        for name, c in r["correlations"].items():
            out.append(f"| {name} | {_rho(c['head'])} | {_rho(c['total'])} |")
        w = r["within_factor_2"]
        out.append(
            f"\nWithin a factor of 2 after calibration: total {w['total']:.0%}, head-only {w['head_only']:.0%}. "
            f"Per-row top-decile AUROC, mean over runs: {r['row_auroc_mean']:.2f}.\n"
        )
        out.append("| term removed | head Spearman | total Spearman |\n|---|---|---|")
        for term, a in r["ablation"].items():
            out.append(f"| {term} | {a['head']:+.2f} | {a['total']:+.2f} |")
        if r["replay"]:
            out.append("\n| replay curve | measured 0% / 5% / 25% | forecast 0% / 5% / 25% |\n|---|---|---|")
            for c in r["replay"]:
                m = " / ".join(f"{v:.3f}" for v in c["measured"])
                f = " / ".join(f"{v:.3f}" for v in c["forecast"])
                out.append(f"| {c['candidate']} | {m} | {f} |")
        out.append(
            "\n| run | tokens | epochs | head | total | forecast head | forecast total | band | row AUROC |"
            "\n|---|---:|---:|---:|---:|---:|---:|---|---:|"
        )
        for c in sorted(r["candidates"], key=lambda c: c["forecast_total"]):
            auc = "" if c["row_auroc"] is None else f"{c['row_auroc']:.2f}"
            out.append(
                f"| {c['run']} | {c['tokens']:,} | {c['epochs']:.1f} | {c['head']:.3f} | {c['total']:.3f} | "
                f"{c['forecast_head']:.3f} | {c['forecast_total']:.3f} | {c['band'][0]:.3f}–{c['band'][1]:.3f} "
                f"| {auc} |"
            )
        out.append("")
    return "\n".join(out) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description="score the forecast against the measured runs")
    parser.add_argument("--bases", nargs="*", default=list(suites.PLANS))
    parser.add_argument("--out", type=Path, default=RAW, help="where results-<base>.json/.md go (default: %(default)s)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    missing = [b for b in args.bases if not list(RAW.glob(f"{b}-runs*.jsonl")) or not (suites.CACHE / b).exists()]
    if missing:
        print(f"forecast score: no runs or suite for {', '.join(missing)}; run suite_v2.py and runner.py")
        return 2
    for base in args.bases:  # one file per base model, so each can be re-scored on its own
        result = score_base(Base(base, print))
        (args.out / f"results-{base}.json").write_text(json.dumps(result, indent=1) + "\n")
        (args.out / f"results-{base}.md").write_text(markdown([result]))
        print(markdown([result]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
