"""Design the v3 forecast on the design runs and probes only (docs/validity/v3/PROTOCOL.md).

    python benchmarks/validity/design_v3.py

Prints, for each old text, the Spearman of candidate forecast terms with the measured total and
head-only forgetting over the 19 design candidates (and with the 5 probes added). Never reads a
held-out run: `real_score.Runs(final=False)` drops them before anything is computed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parent))

import score_v3 as real_score
import suite_v3 as suite_recipe


def trigram_collision(ids: np.ndarray, vocab: int) -> float:
    """Σ f(g)² over the corpus's 3-grams: the chance two random positions start the same 3-gram."""
    ids = np.asarray(ids, dtype=np.int64).ravel()
    keys = (ids[:-2] * vocab + ids[1:-1]) * vocab + ids[2:]
    _, counts = np.unique(keys, return_counts=True)
    return float(np.sum((counts / counts.sum()) ** 2))


def spearman(x, y) -> float:
    return float(spearmanr(x, y).statistic)


def main() -> int:
    from vocabrisk.risk.calibration import Calibration
    from vocabrisk.risk.forecast import competition
    from vocabrisk.risk.summary import Summary

    runs = real_score.Runs(lambda m: print(m, flush=True), final=False)
    tokens = np.load(suite_recipe.OUT / "tokens.npz")
    plan = runs.plans["A"]
    width = runs.loaded.head.hidden
    unit = Calibration(kappa=1.0, body_gain=1.0)
    kappas = np.geomspace(1, 1000, 31)
    rows = {}
    for (name, old), profile in runs.profiles.items():
        if (name, "A") not in runs.measured:
            continue
        summary = Summary.of(profile, plan, unit)
        exact = trigram_collision(tokens[f"{runs.info[name]['file']}/train"], profile.vocab_size)
        drive_unit = summary.forecast.shift  # kappa 1: the unit shift
        rows[name, old] = {
            "role": runs.info[name]["role"],
            "total": runs.value(name, "A", old, "total"),
            "head": runs.value(name, "A", old, "head_only"),
            "terms": summary.forecast.terms,
            "epochs": summary.forecast.epochs,
            "sketch_error": profile.repetition["collision"] / exact - 1,
            "head_curve": competition(drive_unit, profile.shares > 0, profile.old_text, summary.risk.prior, kappas),
            "head_flat": competition(
                drive_unit, np.ones(profile.vocab_size, bool), profile.old_text, summary.risk.prior, kappas
            ),
        }
    errors = [abs(r["sketch_error"]) for r in rows.values()]
    print(f"3-gram sketch against exact Σf²: median error {np.median(errors):.1%}, worst {max(errors):.1%}")

    # The defaults: kappa per width and body_gain that put the median design run's forecast on its measurement.
    design = [k for k in rows if rows[k]["role"] == "candidate"]
    measured_head = np.log(np.maximum([rows[k]["head"] for k in design], 1e-4))
    scores = [
        np.median(np.log(np.maximum([rows[k]["head_curve"][i] for k in design], 1e-12)) - measured_head) ** 2
        for i in range(len(kappas))
    ]
    best = int(np.argmin(scores))
    print(f"default kappa: {kappas[best]:.3g} = {kappas[best] / width:.3f} per hidden coordinate (width {width})")
    gains = [
        (rows[k]["total"] - rows[k]["head_curve"][best]) / rows[k]["terms"].unit
        for k in design
        if rows[k]["terms"].unit > 0
    ]
    print(f"default body_gain (median over design runs): {np.median(gains):.3g}")

    terms = {
        "S (starved old share)": lambda r: r["terms"].starved,
        "B (alike)": lambda r: r["terms"].alike,
        "ln(1+R)": lambda r: np.log1p(r["terms"].repeats),
        "S·B": lambda r: r["terms"].starved * r["terms"].alike,
        "S·ln(1+R)": lambda r: r["terms"].starved * np.log1p(r["terms"].repeats),
        "B·ln(1+R)": lambda r: r["terms"].alike * np.log1p(r["terms"].repeats),
        "S·B·ln(1+epochs)": lambda r: r["terms"].starved * r["terms"].alike * np.log1p(r["epochs"]),
        "body S·B·ln(1+R)": lambda r: r["terms"].unit,
        "head (competition)": lambda r: r["head_curve"][best],
        "head without P_in": lambda r: r["head_flat"][best],
        "head without P_in, x B": lambda r: r["head_flat"][best] * r["terms"].alike,
        "head·(1+ln(1+epochs)) (v2)": lambda r: r["head_curve"][best] * (1 + np.log1p(r["epochs"])),
        "forecast v3 (head + body)": lambda r: r["head_curve"][best] + np.median(gains) * r["terms"].unit,
    }
    for old in runs.suite["old"]:
        for roles in (("candidate",), ("candidate", "probe")):
            keys = [k for k in rows if k[1] == old and rows[k]["role"] in roles]
            print(f"\nold text {old}, {'+'.join(roles)} ({len(keys)} runs): Spearman with total / head")
            for label, term in terms.items():
                x = [term(rows[k]) for k in keys]
                tot = spearman(x, [rows[k]["total"] for k in keys])
                head = spearman(x, [rows[k]["head"] for k in keys])
                print(f"  {label:>30}: {tot:+.2f} / {head:+.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
