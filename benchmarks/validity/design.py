"""Design the v4 forecast on design data only (docs/validity/v4/PROTOCOL.md).

    python benchmarks/validity/design.py

Design data: v3's 62 runs (every split of v3: all are design data for v4; regimes A and B) and
the 12 v4 design curve runs (`split == "design"` in docs/validity/v4/smollm2-runs.jsonl), each
measured at steps 5, 10, 20 and 40 at lr 1e-4, 3e-4 and 1e-3. Never reads a held-out v4 run: the
v4 log is filtered on its split before anything else of a record is read.

Prints: the Spearman of candidate terms (the v3 body's S, B, R, the implied epochs, and the
context overlaps the issue suggests: the share of the old text's 1-, 2- and 3-grams the corpus
holds) with the measured forgetting of the v3 candidates; the defaults (kappa per width, the
body's gain) fitted on design runs; and the curves' fit on the design curve runs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parent))

import forms
import score
import suite_v2 as v2
import suite_v3 as suite_recipe

V4 = v2.data.REPO / "docs" / "validity" / "v4"
V4_SUITE = v2.CACHE / "v4"
KAPPAS = np.geomspace(5, 2000, 49)
FLOOR = 0.005  # nats: a measured head below this is seed noise (v3), left out of the log fits
DEFAULT_ADAPTATION = score.SMOLLM2_ADAPTATION  # SmolLM2's adaptation gain, fixed as the scorer fixes it


def design_curves() -> list[dict]:
    """The v4 design curve runs, and nothing else of the v4 log."""
    records = (json.loads(line) for line in (V4 / "smollm2-runs.jsonl").read_text().splitlines())
    return [r for r in records if r["split"] == "design"]


def scored_one_epoch(pools, olds):
    """For each pool and old text, in order: (pool, its suite folder, the old text, its scored one-epoch runs (the
    pool's results.json `per_run`), each run's text file by run name). The pools' suites must be built."""
    import suite_v4_pools as pool_recipes

    for pool in pools:
        folder = pool_recipes.OUT[pool]
        files = {run["name"]: run["file"] for run in json.loads((folder / "suite.json").read_text())["runs"]}
        results = json.loads((V4 / f"pool-{pool.lower()}" / "results.json").read_text())
        for old in olds:
            runs = [run for run in results["old"][old]["per_run"] if run["run"].endswith(":1ep")]
            yield pool, folder, old, runs, files


def say_by_pool(say, rows: list[dict], pools, feature: str, measured: str, width: int) -> None:
    """One line: the Spearman of ROWS' FEATURE with their MEASURED in each pool, the mean over the pools, and
    every pool's rows ranked together."""
    cells = []
    for pool in pools:
        part = [r for r in rows if r["pool"] == pool]
        cells.append(spearman([r[feature] for r in part], [r[measured] for r in part]))
    pooled = spearman([r[feature] for r in rows], [r[measured] for r in rows])
    line = " ".join(f"{p} {c:+.2f}" for p, c in zip(pools, cells, strict=True))
    say(f"   {measured} ~ {feature:>{width}}: {line}; mean {np.mean(cells):+.2f}, pooled {pooled:+.2f}")


def ngram_keys(ids: np.ndarray, n: int, vocab: int) -> np.ndarray:
    ids = np.asarray(ids, dtype=np.int64).ravel()
    keys = ids[: len(ids) - n + 1].copy()
    for k in range(1, n):
        keys = keys * vocab + ids[k : len(ids) - n + 1 + k]
    return keys


def context_overlap(corpus: np.ndarray, old: np.ndarray, n: int, vocab: int) -> float:
    """Share of the old text's n-gram occurrences whose n-gram the corpus contains."""
    return float(np.isin(ngram_keys(old, n, vocab), np.unique(ngram_keys(corpus, n, vocab))).mean())


def spearman(x, y) -> float:
    return float(spearmanr(x, y).statistic)


def against(say, what: str, values, chosen: list[dict], features: dict) -> None:
    """Say the Spearman of VALUES (one per CHOSEN run) against each of FEATURES (name: run -> number)."""
    for label, feature in features.items():
        say(f"   {what} against {label}: Spearman {spearman(values, [feature(c) for c in chosen]):+.2f}")


def by_likeness(values, chosen: list[dict]) -> tuple[float, float]:
    """The median of VALUES over the CHOSEN runs in the lowest and in the highest quartile of B (likeness)."""
    values, b = np.asarray(values), np.array([c["B"] for c in chosen])
    low, high = np.quantile(b, [0.25, 0.75])
    return float(np.median(values[b <= low])), float(np.median(values[b >= high]))


class Transcript:
    """A design probe's output: each line printed as it comes and kept, then written whole to its file."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, text: str = "") -> None:
        print(text, flush=True)
        self.lines.append(text)

    def write(self, path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(self.lines) + "\n", encoding="utf-8")


class Case:
    """One design run on one old text: the forecast's pieces before their constants, and the measurement."""

    def __init__(self, runs, name: str, old: str, plan, measured: dict) -> None:
        from vocabrisk.risk.calibration import Calibration
        from vocabrisk.risk.forecast import Drive
        from vocabrisk.risk.summary import Summary

        profile = runs.profiles[name, old]
        bare = Summary.of(profile, plan, Calibration(kappa=1.0, body_gain=1.0, adaptation=0.0))
        self.name, self.old, self.plan, self.measured = name, old, plan, measured
        self.terms = bare.forecast.terms
        self.epochs = bare.forecast.epochs
        self.drive = Drive.of(profile.shares, bare.risk.exposure, bare.risk.prior, plan, profile.total_tokens)
        self.args = (profile.shares > 0, profile.old_text, bare.risk.prior)
        self.head_end = self.drive.head(KAPPAS, *self.args)  # per kappa, at the plan's last step
        self._curves: dict[float, np.ndarray] = {}

    def head_curve(self, kappa: float) -> np.ndarray:
        if kappa not in self._curves:
            self._curves[kappa] = self.drive.head_curve(kappa, *self.args)
        return self._curves[kappa]

    def total_curve(self, kappa: float, gain: float, adaptation: float) -> np.ndarray:
        body = gain * np.asarray(self.terms.curve)
        return self.head_curve(kappa) + body - self.drive.adaptation(adaptation)


def design() -> int:
    runs = score.Runs.v3(lambda m: print(m, flush=True))  # every v3 run: all of v3 is v4 design data
    width = runs.loaded.head.hidden
    suite = json.loads((V4_SUITE / "suite.json").read_text())
    v4_plans = {k: v2.train_config(p).plan for k, p in suite["plans"].items()}
    olds = runs.suite["old"]
    ends = [Case(runs, n, o, runs.plans[r], {k: runs.value(n, r, o, k) for k in ("total", "head_only")})
            for (n, r) in runs.measured for o in olds]  # fmt: skip
    curves = [Case(runs, c["run"], o, v4_plans[c["regime"]], c["old"][o]["curve"] | {"lr": c["lr"]})
              for c in design_curves() for o in olds]  # fmt: skip
    print(f"{len(ends)} v3 endpoints, {len(curves)} v4 design curves")

    # 1. Terms against the v3 candidates (regime A, 1 old text at a time): which statistics order them.
    tokens = np.load(suite_recipe.OUT / "tokens.npz")
    candidates = [c for c in ends if c.plan is runs.plans["A"] and runs.info[c.name]["role"] == "candidate"]
    for old in olds:
        cases = [c for c in candidates if c.old == old]
        overlap = {
            c.name: [context_overlap(tokens[f"{runs.info[c.name]['file']}/train"], tokens[f"old/{old}"], n,
                                     len(c.args[2])) for n in (1, 2, 3)]
            for c in cases
        }  # fmt: skip
        terms = {
            "S": lambda c: c.terms.starved,
            "B": lambda c: c.terms.alike,
            "ln(1+R)": lambda c: np.log1p(c.terms.repeats),
            "epochs": lambda c: c.epochs,
            "S·B·ln(1+R)": lambda c: c.terms.starved * c.terms.alike * np.log1p(c.terms.repeats),
            "S·B·ln(1+epochs)": lambda c: c.terms.starved * c.terms.alike * np.log1p(c.epochs),
            "1-gram overlap": lambda c, o=overlap: o[c.name][0],
            "2-gram overlap": lambda c, o=overlap: o[c.name][1],
            "3-gram overlap": lambda c, o=overlap: o[c.name][2],
            "S·2-gram·ln(1+R)": lambda c, o=overlap: c.terms.starved * o[c.name][1] * np.log1p(c.terms.repeats),
        }
        print(f"\n{old}, {len(cases)} v3 candidates (plan A): Spearman with total / body (total - head) / head")
        total = [c.measured["total"] for c in cases]
        head = [c.measured["head_only"] for c in cases]
        body = [t - h for t, h in zip(total, head, strict=True)]
        for label, term in terms.items():
            x = [term(c) for c in cases]
            print(f"  {label:>18}: {spearman(x, total):+.2f} / {spearman(x, body):+.2f} / {spearman(x, head):+.2f}")

    # 2. kappa: least squared log error of the head over every design head point above the floor.
    def head_points(kappa_index: int | None = None, kappa: float | None = None):
        predicted, measured = [], []
        for c in candidates + [c for c in ends if c not in candidates]:
            if c.measured["head_only"] > FLOOR:
                predicted.append(c.head_end[kappa_index] if kappa is None else c.head_curve(kappa)[-1])
                measured.append(c.measured["head_only"])
        for c in curves:
            for p, m in zip(c.head_curve(kappa if kappa is not None else KAPPAS[kappa_index]), c.measured["head_only"],
                            strict=True):  # fmt: skip
                if m > FLOOR:
                    predicted.append(p)
                    measured.append(m)
        return np.log(np.maximum(predicted, 1e-12) / np.asarray(measured))

    errors = [float(np.mean(head_points(k) ** 2)) for k in range(len(KAPPAS))]
    k = int(np.argmin(errors))
    kappa = float(KAPPAS[k])
    e = head_points(k)
    print(f"\nkappa {kappa:.3g} = {kappa / width:.3f} per hidden coordinate (width {width}): head points {len(e)}, "
          f"median log ratio {np.median(e):+.2f}, within x1.5 {np.mean(np.abs(e) < np.log(1.5)):.0%}")  # fmt: skip

    # 3. body_gain: the median over design endpoints of what puts total on the measurement, adaptation fixed.
    gains = [
        (c.measured["total"] - c.head_curve(kappa)[-1] + c.drive.adaptation(DEFAULT_ADAPTATION)[-1]) / c.terms.unit
        for c in ends if c.terms.unit > 0 and runs.info[c.name]["role"] == "candidate"
    ]  # fmt: skip
    gain = float(np.median(gains))
    print(f"body_gain (median over {len(gains)} design endpoints, adaptation {DEFAULT_ADAPTATION}): {gain:.4g}")

    # 4. What the defaults do on design: order at plan A, and the curves.
    for old in olds:
        cases = [c for c in candidates if c.old == old]
        made = [c.total_curve(kappa, gain, DEFAULT_ADAPTATION)[-1] for c in cases]
        total = [c.measured["total"] for c in cases]
        within = np.mean([m > 0 and 0.5 <= f / m <= 2 for f, m in zip(made, total, strict=True)])
        heads = spearman([c.head_curve(kappa)[-1] for c in cases], [c.measured["head_only"] for c in cases])
        print(
            f"{old}: design plan A total Spearman {spearman(made, total):+.2f}, head {heads:+.2f}, "
            f"within x2 {within:.0%}"
        )
    hits = []
    for c in curves:
        made = c.total_curve(kappa, gain, DEFAULT_ADAPTATION)
        print(f"  {c.name:>24} {c.old} lr {c.measured['lr']:.0e}: "
              + " ".join(f"{p:+.3f}/{m:+.3f}" for p, m in zip(made, c.measured["total"], strict=True)))  # fmt: skip
        hits += [m > 0 and 1 / 1.5 <= p / m <= 1.5 for p, m in zip(made[1:], c.measured["total"][1:], strict=True)]
    print(f"design curves: forecast within x1.5 of the measured total at steps 10, 20, 40: {np.mean(hits):.0%}")
    return 0


def main() -> int:
    """v4's design on v4's forecast (v5 without its e^-H factor: `forms.as_v4`)."""
    with forms.as_v4():
        return design()


if __name__ == "__main__":
    sys.exit(main())
