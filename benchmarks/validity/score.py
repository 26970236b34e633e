"""Score the v4 forecast and its baselines on the v4 real-model runs (docs/validity/v4/PROTOCOL.md).

    python benchmarks/validity/score.py              # the design curve runs only: checks the scorer's path
    python benchmarks/validity/score.py --final      # held out, once the forecast is frozen

Reads the v4 suite (`suite_v4.py`), v3's suite for the probes the forecast is calibrated on,
and the raw runs (`docs/validity/v4/smollm2-runs.jsonl`). Every prediction is recomputed from
counts, the head and the plan. `--final` writes docs/validity/v4/results.json and results.md; each
result says how many runs it stands on.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import score_v3 as real_score
import suite_v2 as v2
import suite_v3 as v3
import suite_v4 as recipe
from score_v2 import spearman_ci

RAW = v2.data.REPO / "docs" / "validity" / "v4"
RUNS = RAW / "smollm2-runs.jsonl"
V3_PROBES = v2.data.REPO / "docs" / "validity" / "v3" / "smollm2-runs.jsonl"
WIKI_REPLAY = "wiki"  # the old text replay is measured on (the replay text is its kind)
V3_KAPPA_PER_WIDTH, V3_BODY_GAIN = 0.14, 21.0  # the v3 forecast as landed (7f7fb88), uncalibrated
SMOLLM2_ADAPTATION = 0.07  # nats: the v4 design curves' adaptation gain (design.py), fixed in calibration


class Runs:
    """The v4 suite's measured runs (held out, or design) and a profile of every text against each old text."""

    def __init__(self, log, final: bool) -> None:
        from vocabrisk import load_model

        self.suite = json.loads((recipe.OUT / "suite.json").read_text())
        self.plans = {k: v2.train_config(p).plan for k, p in self.suite["plans"].items()}
        self.info = {run["name"]: run for run in self.suite["runs"]}
        self.split = "heldout" if final else "design"
        self.measured = defaultdict(list)  # (name, plan) -> records
        for line in RUNS.read_text().splitlines():
            record = json.loads(line)
            if record["split"] != self.split:
                continue  # design never reads a held-out run (PROTOCOL.md)
            if record["suite"] != self.suite["fingerprint"]:
                raise SystemExit(f"{RUNS}: a run of suite {record['suite']}, not {self.suite['fingerprint']}")
            self.measured[record["run"], record["regime"]].append(record)
        self.loaded = load_model(str(v2.smollm2_gguf()))
        self.width = self.loaded.head.hidden
        self.profiles = {}
        for name in sorted({n for n, _ in self.measured}):
            for old in self.suite["old"]:
                self.profiles[name, old] = self.scan(recipe.OUT / "texts" / f"{self.info[name]['file']}.jsonl", old)
        self.probes = self._probes()
        self.replay = {old: self._replay(old) for old in self.suite["old"]}
        log(f"{len(self.measured)} measured (run, plan) pairs of split {self.split}, {len(self.profiles)} profiles")

    def scan(self, path: Path, old: str, folder: Path = recipe.OUT):
        from vocabrisk import scan
        from vocabrisk.counting import SpecialTokenPolicy

        return scan([str(path)], self.loaded, reference=[str(folder / f"old-{old}.jsonl")], policy=SpecialTokenPolicy())

    def _probes(self) -> dict:
        """v3's 5 probe runs (plan A), measured on the same old texts: what calibration fits."""
        records = [json.loads(line) for line in V3_PROBES.read_text().splitlines()]
        probes = {}
        v3_suite = json.loads((v3.OUT / "suite.json").read_text())
        files = {run["name"]: run["file"] for run in v3_suite["runs"]}
        for record in records:
            if record["split"] == "probe" and record["regime"] == "A":
                for old in self.suite["old"]:
                    profile = self.scan(v3.OUT / "texts" / f"{files[record['run']]}.jsonl", old, v3.OUT)
                    probes.setdefault(old, []).append((record["run"], record["old"][old], profile))
        return probes

    def _replay(self, old: str):
        """The replay text of the replay runs (v3's recipe: wikitext-2 paragraphs never in the old text)."""
        sources = v3.Sources(self.loaded)
        docs = sources.split("en-wikitext2")[1] + sources.split("en-wikitext2")[0][-40:]
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "replay.jsonl"
            v2.data.write_jsonl(path, docs)
            return self.scan(path, old)

    def records(self, name: str, plan: str) -> list[dict]:
        return self.measured.get((name, plan), [])

    def value(self, name: str, plan: str, old: str, key: str, step: int | None = None) -> float:
        """The measured quantity (at STEP of the curve, else the run's end), seed mean."""
        values = []
        for r in self.records(name, plan):
            curve = r["old"][old]["curve"]
            values.append(curve[key][curve["steps"].index(step)] if step is not None else r["old"][old][key])
        return float(np.mean(values))

    def names(self, plan: str = "A", role: str = "candidate") -> list[str]:
        return sorted(n for n, p in self.measured if p == plan and self.info[n]["role"] == role)


def calibrate(runs: Runs, old: str):
    """The forecast's constants fitted on v3's probes measured on OLD (`vocabrisk.risk.calibration.fit`)."""
    from vocabrisk.risk.calibration import Calibration, ProbeRun, fit
    from vocabrisk.risk.forecast import Drive
    from vocabrisk.risk.summary import Summary

    probes = []
    for name, measured, profile in runs.probes[old]:
        unit = Summary.of(profile, runs.plans["A"], Calibration(kappa=1.0, body_gain=1.0))
        drive = Drive.of(profile.shares, unit.risk.exposure, unit.risk.prior, runs.plans["A"], profile.total_tokens)

        def curve(kappas, drive=drive, profile=profile, prior=unit.risk.prior):
            return drive.head(kappas, profile.shares > 0, profile.old_text, prior)

        probes.append(ProbeRun(name, measured["head_only"], measured["total"], unit.forecast.terms.unit, curve))
    return fit(probes, adaptation=SMOLLM2_ADAPTATION)


@contextmanager
def linear_shift():
    """The ablation of term 3's saturation: row shifts linear in Σ lr, as in v3."""
    from vocabrisk.risk import forecast as module

    with mock.patch.object(module, "saturate", lambda x, target: np.asarray(x, dtype=np.float64)):
        yield


def v3_forecast(profile, plan, width: int) -> np.ndarray:
    """The v3 forecast as landed, uncalibrated, at each checkpoint (the shape baseline: linear in Σ lr)."""
    from vocabrisk.risk.calibration import Calibration
    from vocabrisk.risk.summary import Summary

    with linear_shift():
        made = Summary.of(profile, plan, Calibration(kappa=V3_KAPPA_PER_WIDTH * width, adaptation=0.0)).forecast
    t = made.terms
    body = V3_BODY_GAIN * made.lr_sum * t.starved * t.alike * math.log1p(t.repeats)
    end = made.head + body
    return np.array([end * p.lr_sum / made.lr_sum for p in made.curve])


def ablations(forecasts: dict, calibration, runs: Runs, names: list[str], old: str, plan) -> dict[str, list[float]]:
    """The calibrated forecast at plan A's end with one term removed or changed."""
    from vocabrisk.risk.summary import Summary

    g = calibration.body_gain
    rows = {}
    for n in names:
        f = forecasts[n]
        t = f.terms
        shape = t.unit / max(t.starved * t.alike * math.log1p(t.repeats), 1e-300)  # lr · relaxation
        with linear_shift():
            linear_head = Summary.of(runs.profiles[n, old], plan, calibration).forecast.head
        rows[n] = {
            "without the head's term": f.body - f.adaptation,
            "without the body's term": f.head - f.adaptation,
            "without the adaptation": f.head + f.body,
            "body without S (starved old share)": f.head + g * shape * t.alike * math.log1p(t.repeats) - f.adaptation,
            "body without B (alike)": f.head + g * shape * t.starved * math.log1p(t.repeats) - f.adaptation,
            "body without R (repetition)": f.head + g * shape * t.starved * t.alike - f.adaptation,
            "R as implied epochs": f.head + g * shape * t.starved * t.alike * math.log1p(f.epochs) - f.adaptation,
            "head shift linear (no saturation)": linear_head + f.body - f.adaptation,
        }
    return {label: [rows[n][label] for n in names] for label in next(iter(rows.values()))}


def within(predicted, measured, factor: float) -> list[bool]:
    """Whether each prediction lies within ×/÷ FACTOR of its measurement (a measurement ≤ 0 is a miss)."""
    return [m > 0 and 1 / factor <= p / m <= factor for p, m in zip(predicted, measured, strict=True)]


def score(runs: Runs) -> dict:
    """Every number the protocol reports, for the runs of the Runs' split."""
    from vocabrisk.risk.calibration import Calibration
    from vocabrisk.risk.summary import Summary

    plan_a = runs.plans["A"]
    names = runs.names("A")
    results = {"split": runs.split, "candidates": len(names), "old": {}}
    for old in runs.suite["old"]:
        calibration = calibrate(runs, old)

        def made(name: str, plan: str, cal=calibration, old=old):
            return Summary.of(runs.profiles[name, old], runs.plans[plan], cal)

        measured = {key: [runs.value(n, "A", old, key) for n in names] for key in ("total", "head_only")}
        forecasts = {n: made(n, "A").forecast for n in names}
        defaults = {n: made(n, "A", Calibration()).forecast for n in names}
        predictors = {
            "forecast v4 (calibrated)": ([forecasts[n].total for n in names], [forecasts[n].head for n in names]),
            "forecast v4 (uncalibrated defaults)": (
                [defaults[n].total for n in names],
                [defaults[n].head for n in names],
            ),
        }
        v3_made = {n: v3_forecast(runs.profiles[n, old], plan_a, runs.width)[-1] for n in names}
        table = {label: {"total": spearman_ci(t, measured["total"]), "head_only": spearman_ci(h, measured["head_only"])}
                 for label, (t, h) in predictors.items()}  # fmt: skip
        table["forecast v3 as landed (uncalibrated)"] = {
            k: spearman_ci([v3_made[n] for n in names], measured[k]) for k in ("total", "head_only")
        }
        base = [real_score.baselines(runs.profiles[n, old], plan_a) for n in names]
        for key in base[0]:
            table[key] = {k: spearman_ci([b[key] for b in base], measured[k]) for k in ("total", "head_only")}
        totals = [forecasts[n].total for n in names]
        results["old"][old] = {
            "calibration": calibration.to_dict(),
            "spearman": table,
            "ablation": {
                label: {k: spearman_ci(x, measured[k]) for k in ("total", "head_only")}
                for label, x in ablations(forecasts, calibration, runs, names, old, plan_a).items()
            },
            "within_x2_calibrated": share(within(totals, measured["total"], 2.0)),
            "within_x3_defaults": share(within([defaults[n].total for n in names], measured["total"], 3.0)),
            "within_x2_or_0.03": share(
                [
                    w or abs(p - m) <= 0.03
                    for w, p, m in zip(within(totals, measured["total"], 2.0), totals, measured["total"], strict=True)
                ]
            ),
            "ceiling": seed_ceiling(runs, old),
            "curves": curves(runs, old, calibration),
            "regime_b": regime_b(runs, old, calibration),
            "replay": replay(runs, old, calibration) if old == WIKI_REPLAY else None,
            "per_run": [
                {
                    "run": n,
                    "seeds": len(runs.records(n, "A")),
                    "total": measured["total"][i],
                    "head_only": measured["head_only"][i],
                    "forecast_total": forecasts[n].total,
                    "forecast_head": forecasts[n].head,
                    "forecast_body": forecasts[n].body,
                    "forecast_adaptation": forecasts[n].adaptation,
                    "default_total": defaults[n].total,
                    "v3_total": v3_made[n],
                    "terms": forecasts[n].terms.to_dict(),
                }
                for i, n in enumerate(names)
            ],
        }
    return results


def share(flags: list[bool]) -> dict:
    return {"share": float(np.mean(flags)) if flags else None, "of": len(flags)}


def seed_ceiling(runs: Runs, old: str) -> dict | None:
    """Seed 0 against seed 1 over the candidates run twice: the order any forecast can reach."""
    doubled = [n for n in runs.names("A") if {r["seed"] for r in runs.records(n, "A")} >= {0, 1}]
    if len(doubled) < 3:
        return {"candidates": len(doubled)}
    pair = {s: {n: next(r for r in runs.records(n, "A") if r["seed"] == s) for n in doubled} for s in (0, 1)}
    return {"candidates": len(doubled)} | {
        t: spearman_ci([pair[0][n]["old"][old][t] for n in doubled], [pair[1][n]["old"][old][t] for n in doubled])
        for t in ("total", "head_only")
    }


def curves(runs: Runs, old: str, calibration) -> dict:
    """Points at steps 10, 20, 40 of every run of plans A, A-lr1e-3, A-lr1e-4 (each seed its own run)."""
    from vocabrisk.risk.summary import Summary

    points, baseline, per_lr = [], [], {}
    plans = ("A", "A-lr1e-4", "A-lr1e-3")
    candidates = {p: {n for n, q in runs.measured if q == p and runs.info[n]["role"] == "candidate"} for p in plans}
    three = set.intersection(*candidates.values())  # the corpora run at every learning rate
    for plan in plans:
        names = sorted(candidates[plan])
        ends_f, ends_m = [], []
        for n in names:
            profile = runs.profiles[n, old]
            made = Summary.of(profile, runs.plans[plan], calibration).forecast
            shape = v3_forecast(profile, runs.plans[plan], runs.width)
            by_step = {p.step: p.total for p in made.curve}
            v3_by_step = dict(zip((p.step for p in made.curve), shape, strict=True))
            for record in runs.records(n, plan):
                curve = record["old"][old]["curve"]
                for step, m in zip(curve["steps"], curve["total"], strict=True):
                    if step in (10, 20, 40):
                        points.append((by_step[step], m))
                        baseline.append((v3_by_step[step], m))
            if n in three:
                ends_f.append(by_step[40])
                ends_m.append(runs.value(n, plan, old, "total"))
        if len(ends_f) >= 3:
            per_lr[plan] = {"runs": len(ends_f), "spearman_40": spearman_ci(ends_f, ends_m),
                            "within_x1.5_40": share(within(ends_f, ends_m, 1.5))}  # fmt: skip
    ranking = runs.names("A")
    at20 = [Summary.of(runs.profiles[n, old], runs.plans["A"], calibration).forecast for n in ranking]
    return {
        "points": len(points),
        "within_x1.5": share(within(*zip(*points, strict=True), 1.5)) if points else None,
        "v3_linear_within_x1.5": share(within(*zip(*baseline, strict=True), 1.5)) if baseline else None,
        "spearman_20": spearman_ci(
            [next(p.total for p in f.curve if p.step == 20) for f in at20],
            [runs.value(n, "A", old, "total", 20) for n in ranking],
        ),
        "per_plan": per_lr,
    }


def regime_b(runs: Runs, old: str, calibration) -> dict | None:
    """The forecast (calibrated on plan-A probes) against the 80-step runs."""
    from vocabrisk.risk.summary import Summary

    names = sorted(n for n, p in runs.measured if p == "B")
    if len(names) < 3:
        return {"runs": len(names)}
    made = {n: Summary.of(runs.profiles[n, old], runs.plans["B"], calibration).forecast for n in names}
    ends = [made[n].total for n in names]
    pairs = []
    for n in names:
        by_step = {p.step: p.total for p in made[n].curve}
        curve = runs.records(n, "B")[0]["old"][old]["curve"]
        pairs += [(by_step[s], m) for s, m in zip(curve["steps"], curve["total"], strict=True) if s in (10, 20, 40, 80)]
    return {
        "runs": len(names),
        "spearman_80": spearman_ci(ends, [runs.value(n, "B", old, "total") for n in names]),
        "within_x1.5": share(within(*zip(*pairs, strict=True), 1.5)),
    }


def replay(runs: Runs, old: str, calibration) -> dict:
    """Each replay run: the forecast's reduction (the what-if, `Summary.mixed`) against the measured one."""
    from vocabrisk.risk.summary import Summary

    rows = []
    for n in runs.names("A", role="replay"):
        base_name, tail = n.split("+replay")
        share_ = float(tail.rstrip("%")) / 100
        if not runs.records(base_name, "A"):
            continue
        summary = Summary.of(runs.profiles[base_name, old], runs.plans["A"], calibration)
        replay_text = runs.replay[old]
        what_if = summary.mixed(replay_text.shares, share_, replay_text.repetition["collision"])
        predicted = summary.forecast.total - what_if.forecast.total
        measured = runs.value(base_name, "A", old, "total") - runs.value(n, "A", old, "total")
        rows.append({"run": n, "share": share_, "forecast_reduction": predicted, "measured_reduction": measured,
                     "within_x2": within([predicted], [measured], 2.0)[0]})  # fmt: skip
    return {"runs": len(rows), "within_x2": sum(r["within_x2"] for r in rows), "per_run": rows}


def markdown(results: dict) -> str:
    """The results as docs/VALIDITY.md quotes them."""

    def ci(c: dict) -> str:
        return f"{c['rho']:+.2f} [{c['low']:+.2f}, {c['high']:+.2f}]"

    def pct(s: dict | None) -> str:
        return "n/a" if not s or s["share"] is None else f"{s['share']:.0%} of {s['of']}"

    lines = [f"# v4 results: SmolLM2-135M-Instruct, {results['split']} runs ({results['candidates']} ranking "
             "candidates, plan A)", ""]  # fmt: skip
    for old, r in results["old"].items():
        cal = r["calibration"]
        lines += [
            f"## Old text: {old}",
            "",
            f"Calibration (v3's 5 probes only): kappa {cal['kappa']:.3g}, body_gain {cal['body_gain']:.4g}, "
            f"adaptation {cal['adaptation']:.3g} (fixed), band ×/÷ {cal['band']:.2f}. Calibrated within ×2 of the "
            f"measured total: {pct(r['within_x2_calibrated'])}; within ×2 or 0.03 nats: {pct(r['within_x2_or_0.03'])}; "
            f"uncalibrated defaults within ×3: {pct(r['within_x3_defaults'])}.",
            "",
            "| predictor | Spearman vs total | Spearman vs head-only |",
            "|---|---|---|",
        ]
        lines += [f"| {k} | {ci(v['total'])} | {ci(v['head_only'])} |" for k, v in r["spearman"].items()]
        c = r["ceiling"]
        if c and "total" in c:
            lines += [f"| seed vs seed ({c['candidates']} candidates): the ceiling | {ci(c['total'])} | "
                      f"{ci(c['head_only'])} |"]  # fmt: skip
        cv = r["curves"]
        lines += ["", f"Curves ({cv['points']} points at steps 10, 20, 40): within ×1.5 {pct(cv['within_x1.5'])} "
                  f"(v3 scaled linearly in Σ lr: {pct(cv['v3_linear_within_x1.5'])}); order at step 20 "
                  f"{ci(cv['spearman_20'])}."]  # fmt: skip
        for plan, p in cv["per_plan"].items():
            lines.append(f"- plan {plan} ({p['runs']} runs), step 40: Spearman {ci(p['spearman_40'])}, within ×1.5 "
                         f"{pct(p['within_x1.5_40'])}")  # fmt: skip
        b = r["regime_b"]
        if b and "spearman_80" in b:
            lines += ["", f"Regime B ({b['runs']} runs, 80 steps): Spearman at 80 {ci(b['spearman_80'])}; points at "
                      f"10, 20, 40, 80 within ×1.5 {pct(b['within_x1.5'])}."]  # fmt: skip
        if r["replay"]:
            rp = r["replay"]
            lines += ["", f"Replay ({rp['runs']} runs): the forecast's reduction within ×2 of the measured on "
                      f"{rp['within_x2']} of {rp['runs']}.", "", "| run | measured reduction | forecast reduction |",
                      "|---|---|---|"]  # fmt: skip
            lines += [f"| {p['run']} | {p['measured_reduction']:+.3f} | {p['forecast_reduction']:+.3f} |"
                      for p in rp["per_run"]]  # fmt: skip
        lines += ["", "Ablation (the calibrated forecast with one term removed or changed):", ""]
        lines += ["| forecast | total | head-only |", "|---|---|---|"]
        lines += [f"| {k} | {ci(v['total'])} | {ci(v['head_only'])} |" for k, v in r["ablation"].items()]
        lines += ["", "| run | seeds | measured total | forecast | defaults | v3 | measured head | forecast head |",
                  "|---|---|---|---|---|---|---|---|"]  # fmt: skip
        lines += [
            f"| {p['run']} | {p['seeds']} | {p['total']:+.3f} | {p['forecast_total']:+.3f} | {p['default_total']:+.3f} "
            f"| {p['v3_total']:+.3f} | {p['head_only']:+.3f} | {p['forecast_head']:+.3f} |"
            for p in r["per_run"]
        ]
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description="score the v4 real-model forecast benchmark")
    parser.add_argument("--final", action="store_true", help="score the held-out runs (after the freeze)")
    args = parser.parse_args()
    runs = Runs(lambda m: print(m, flush=True), args.final)
    results = score(runs)
    text = markdown(results)
    print(text)
    if args.final:
        (RAW / "results.json").write_text(json.dumps(results, indent=1) + "\n")
        (RAW / "results.md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
