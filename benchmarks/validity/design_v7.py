"""v7's design numbers, on design data only: every run of v3 and of pools E, F, G, H and I (all seen).

    python benchmarks/validity/design_v7.py   # -> docs/validity/v7/design.txt

v7 is v6 with the body's predictability read from H₁, the entropy of the corpus's token distribution, at half
weight: e^{-H₁/2} in place of v6's e^{-H}, H the next-token entropy given the token before (docs/VALIDITY.md,
"v7"). This prints, for v7, its ablations, other weights of H₁, v6's e^{-H} in its place, and a floor for text
sharing nothing with the old text, the Spearman of the forecast total with the measured total per set and old
text twice: with the body's gain refitted per form on v3 (as design_v6.py does) and with the form calibrated on
v3's 5 probes as the scorer calibrates (`vocabrisk.risk.calibration.fit`, the form's body term as the probes'
unit); then the passes table of design_v6.py, and the constant v7 ships: the uncalibrated body gain, the median
over every design endpoint. Nothing here is held out: pool J (docs/validity/v4/PROTOCOL-pool-j.md) is v7's test.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data
import forms
import score
from design import Transcript, spearman
from design_v5 import refitted
from design_v6 import cases, passes_table

OUT = data.REPO / "docs" / "validity" / "v7" / "design.txt"
SETS = ("v3", "E", "F", "G", "H", "I")
OLDS = ("wiki", "code")


def pace(c: dict) -> float:
    """lr · (1 - e^{-Σlr/BODY_RELAXATION}) at the plan's end: the part of the body's term every form keeps."""
    from vocabrisk.risk.forecast import ENTROPY_WEIGHT

    core = c["S"] * c["B"] * math.log1p(max(1.0, c["E"])) * math.exp(-ENTROPY_WEIGHT * c["H1"])
    return c["unit"] / core if core > 0 else 0.0


def bodies() -> dict:
    """Each body term in nats per unit of gain: v7, its ablations, other weights of H₁, v6's H, and a floor."""
    passes = lambda c: math.log1p(max(1.0, c["E"]))  # noqa: E731
    sbe = lambda c: pace(c) * c["S"] * c["B"] * passes(c)  # noqa: E731
    return {
        "v7: S·B·ln(1+max(1,E))·e^-H1/2": lambda c: c["unit"],
        "without S": lambda c: pace(c) * c["B"] * passes(c) * math.exp(-c["H1"] / 2),
        "without B": lambda c: pace(c) * c["S"] * passes(c) * math.exp(-c["H1"] / 2),
        "without E": lambda c: pace(c) * c["S"] * c["B"] * math.exp(-c["H1"] / 2),
        "without e^-H1/2": sbe,
        "e^-H1/4": lambda c: sbe(c) * math.exp(-c["H1"] / 4),
        "e^-H1": lambda c: sbe(c) * math.exp(-c["H1"]),
        "v6: e^-H (2-gram) in its place": lambda c: sbe(c) * math.exp(-c["H"]),
        "floor: S·(B+0.1) in S·B's place": lambda c: c["unit"] * (c["B"] + 0.1) / max(c["B"], 1e-12),
    }


def probe_cases(log) -> dict[str, list[dict]]:
    """v3's 5 probes on each old text: what the scorer calibrates on, with the terms and head curve the fit
    needs."""
    from vocabrisk.risk.calibration import Calibration
    from vocabrisk.risk.forecast import Drive, token_entropy
    from vocabrisk.risk.summary import Summary

    runs = score.Runs.v3(log)
    plan = runs.plans["A"]
    out = {}
    for old in OLDS:
        for name, measured, profile in runs.probes[old]:
            unit = Summary.of(profile, plan, Calibration(kappa=1.0, body_gain=1.0))
            t = unit.forecast.terms
            drive = Drive.of(profile.shares, unit.risk.exposure, unit.risk.prior, plan, profile.total_tokens)

            def curve(kappas, drive=drive, profile=profile, prior=unit.risk.prior):
                return drive.head(kappas, profile.shares > 0, profile.old_text, prior)

            out.setdefault(old, []).append({
                "name": name, "head_only": measured["head_only"], "total": measured["total"], "curve": curve,
                "unit": t.unit, "S": t.starved, "B": t.alike, "E": t.passes, "H": forms.h_of(profile),
                "H1": token_entropy(profile.shares),
            })  # fmt: skip
    return out


def probe_calibrated(every: list[dict], probes: dict, term, column: tuple[str, str]) -> float:
    """Spearman over COLUMN's cases of the forecast with the body TERM, calibrated on the 5 probes of its old text
    as the scorer calibrates (kappa on their head-only forgetting, then the gain on their totals)."""
    from vocabrisk.risk.calibration import ProbeRun, fit

    fitted = fit([ProbeRun(p["name"], p["head_only"], p["total"], term(p), p["curve"]) for p in probes[column[1]]],
                 adaptation=score.SMOLLM2_ADAPTATION)  # fmt: skip
    chosen = [c for c in every if (c["set"], c["old"]) == column]
    # the cases' heads are at the kappa the scorer fits, which does not depend on the body's term
    made = [c["head"] + fitted.body_gain * term(c) - fitted.adaptation for c in chosen]
    return spearman(made, [c["total"] for c in chosen])


def main() -> int:
    say = Transcript()
    every = cases(print, pools=("F", "G", "H", "I"))
    probes = probe_cases(print)
    columns = [(s, o) for o in OLDS for s in SETS]
    counts = {column: sum((c["set"], c["old"]) == column for c in every) for column in columns}
    say("# Output of benchmarks/validity/design_v7.py: design data only (v3, pools E, F, G, H, I: all seen)")
    say("Spearman of the forecast total with the measured total (plan A, seed means) over every plan-A candidate")
    say(f"(runs per column: {', '.join(str(counts[c]) for c in columns)})")
    for title, rho in (
        ("gain refitted per form on v3's candidates", lambda term, col: refitted(every, term, col)),
        ("calibrated on v3's 5 probes, as the scorer calibrates", lambda term, col: probe_calibrated(every, probes,
                                                                                                     term, col)),
    ):  # fmt: skip
        say()
        say(f"{title}:")
        say(f"{'form':>33}  " + " ".join(f"{s + '-' + o:>7}" for s, o in columns) + "     mean      min")
        for label, term in bodies().items():
            values = [rho(term, column) for column in columns]
            say(f"{label:>33}  " + " ".join(f"{v:>+7.2f}" for v in values) + f"  {np.mean(values):+.3f}  "
                f"{min(values):+.2f}")  # fmt: skip
    passes_table(say, every, bodies(), width=33)
    say()
    gains = [(c["total"] - c["default_head"] + score.SMOLLM2_ADAPTATION) / c["unit"] for c in every if c["unit"] > 0]
    say(f"body_gain, uncalibrated (median over {len(gains)} design endpoints, width-rule kappa, adaptation "
        f"{score.SMOLLM2_ADAPTATION}): {float(np.median(gains)):.4g}")  # fmt: skip
    entropies = sorted({(c["set"], c["name"]): c["H1"] for c in every}.values())
    say(f"H1 over the {len(entropies)} design corpora: median {float(np.median(entropies)):.2f} nats, "
        f"range {entropies[0]:.2f}-{entropies[-1]:.2f}")  # fmt: skip
    say.write(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
