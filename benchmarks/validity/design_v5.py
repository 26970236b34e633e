"""v5's design numbers, on design data only: every run of v3, pool E, pool F and pool G (all seen).

    python benchmarks/validity/design_v5.py   # -> docs/validity/v5/design.txt

The v5 forecast is v4 with one factor more in the body's term: e^{-H}, H the corpus's next-token entropy
given the token before (`vocabrisk.counting.contexts`). Found on a re-read of these sets (docs/VALIDITY.md,
"v5"): of a dozen statistics of the text's form, -H alone ordered the measured total the same way on all
eight (set, old text) columns, where every unigram statistic of the scan flips sign from one set to the
next. This prints, for the landed v4 body and the forms around v5, the Spearman of the forecast total with
the measured total per set and old text (the body's gain refitted per form on v3 as body_probe.py does;
the head and adaptation as each set is scored), over every plan-A candidate and over the one-epoch runs
alone; then the constants v5 ships: the uncalibrated body gain and H where a profile has none. Nothing
here is held out: pool H (docs/validity/v4/PROTOCOL-pool-h.md) was v5's test. The last three forms were added
after pool H was scored, the plan's implied epochs E in R's place, as they are and counted from one epoch up
(docs/VALIDITY.md, "After pool H").
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

OUT = data.REPO / "docs" / "validity" / "v5" / "design.txt"
SETS = ("v3", "E", "F", "G")
OLDS = ("wiki", "code")


def cases(log) -> list[dict]:
    from vocabrisk.risk.calibration import Calibration
    from vocabrisk.risk.summary import Summary

    sets = {"v3": score.Runs.v3(log), "E": score.Runs.v4(log, "heldout"), "F": score.Runs.v4_pool(log, "F"),
            "G": score.Runs.v4_pool(log, "G")}  # fmt: skip
    out = []
    for label, runs in sets.items():
        calibrations = {old: score.calibrate(runs, old) for old in OLDS}
        for name in runs.names("A"):
            for old in OLDS:
                profile = runs.profiles[name, old]
                f = Summary.of(profile, runs.plans["A"], calibrations[old]).forecast
                default = Summary.of(profile, runs.plans["A"], Calibration(adaptation=score.SMOLLM2_ADAPTATION))
                body = f.terms
                out.append({
                    "set": label, "old": old, "name": name, "one_epoch": name.endswith(":1ep"),
                    "head": f.head, "adaptation": f.adaptation, "unit": body.unit, "S": body.starved,
                    "B": body.alike, "R": body.repeats, "H": body.entropy, "E": f.epochs,
                    "default_head": default.forecast.head,
                    "total": runs.value(name, "A", old, "total"),
                })  # fmt: skip
    return out


def pace(c: dict) -> float:
    """lr · (1 - e^{-Σlr/BODY_RELAXATION}) at the plan's end: the part of the body's term every form keeps."""
    core = c["S"] * c["B"] * math.log1p(c["R"]) * math.exp(-c["H"])
    return c["unit"] / core if core > 0 else 0.0


def bodies() -> dict:
    """Each body term in nats per unit of gain."""
    e = lambda c: math.exp(-c["H"])  # noqa: E731
    return {
        "v4 (landed): S·B·ln(1+R)": lambda c: pace(c) * c["S"] * c["B"] * math.log1p(c["R"]),
        "v5: S·B·ln(1+R)·e^-H": lambda c: c["unit"],
        "S·B·e^-H (R removed)": lambda c: pace(c) * c["S"] * c["B"] * e(c),
        "S·ln(1+R)·e^-H (B removed)": lambda c: pace(c) * c["S"] * math.log1p(c["R"]) * e(c),
        "B·ln(1+R)·e^-H (S removed)": lambda c: pace(c) * c["B"] * math.log1p(c["R"]) * e(c),
        "e^-H alone": lambda c: pace(c) * e(c),
        "S·B·ln(1+R)/H": lambda c: pace(c) * c["S"] * c["B"] * math.log1p(c["R"]) / c["H"],
        # added after pool H was scored (docs/VALIDITY.md, "After pool H"): the plan's implied epochs E in R's place
        "S·B·ln(1+E)·e^-H (after H)": lambda c: pace(c) * c["S"] * c["B"] * math.log1p(c["E"]) * e(c),
        "S·B·ln(1+E) (after H)": lambda c: pace(c) * c["S"] * c["B"] * math.log1p(c["E"]),
        "S·B·ln(1+max(1,E))·e^-H": lambda c: pace(c) * c["S"] * c["B"] * math.log1p(max(1.0, c["E"])) * e(c),
    }


def v3_gain(every: list[dict], term, old: str) -> float:
    """The body TERM's gain fitted on v3's cases of OLD text: the median of (measured total - head + adaptation)
    / term."""
    design = [c for c in every if c["old"] == old and c["set"] == "v3" and term(c) > 0]
    return float(np.median([(c["total"] - c["head"] + c["adaptation"]) / term(c) for c in design]))


def refitted(every: list[dict], term, column: tuple[str, str], keep=lambda c: True) -> float:
    """Spearman of the forecast total with the measured total over COLUMN's (set, old text) cases that KEEP
    takes, the body TERM's gain refitted on v3's as the landed one was: the median of (measured total - head
    + adaptation) / term."""
    s, o = column
    gain = v3_gain(every, term, o)
    cases = [c for c in every if (c["set"], c["old"]) == (s, o) and keep(c)]
    return spearman([c["head"] + gain * term(c) - c["adaptation"] for c in cases], [c["total"] for c in cases])


def _main() -> int:
    say = Transcript()

    every = cases(print)
    columns = [(s, o) for o in OLDS for s in SETS]
    say("# Output of benchmarks/validity/design_v5.py: design data only (v3, pools E, F, G: all seen)")
    say("Spearman of the forecast total with the measured total (plan A, seed means); gain refitted per form on v3")
    for view, keep in (("every plan-A candidate", lambda c: True), ("one-epoch runs alone", lambda c: c["one_epoch"])):
        say()
        say(f"{view}:")
        say(f"{'form':>30}  " + " ".join(f"{s + '-' + o:>7}" for s, o in columns) + "     mean      min")
        for label, term in bodies().items():
            values = [refitted(every, term, column, keep) for column in columns]
            say(
                f"{label:>30}  "
                + " ".join(f"{v:>+7.2f}" for v in values)
                + f"  {np.mean(values):+.3f}  {min(values):+.2f}"
            )
    say()
    constants(say, every)
    say.write(OUT)
    return 0


def constants(say, every: list[dict]) -> None:
    """The uncalibrated body gain the form ships (the median over every design endpoint) and H's median."""
    gains = [(c["total"] - c["default_head"] + score.SMOLLM2_ADAPTATION) / c["unit"] for c in every if c["unit"] > 0]
    say(f"body_gain, uncalibrated (median over {len(gains)} design endpoints, width-rule kappa, adaptation "
        f"{score.SMOLLM2_ADAPTATION}): {float(np.median(gains)):.4g}")  # fmt: skip
    entropies = sorted({(c["set"], c["name"]): c["H"] for c in every}.values())
    say(f"H over the {len(entropies)} design corpora: median {float(np.median(entropies)):.2f} nats, "
        f"range {entropies[0]:.2f}-{entropies[-1]:.2f}")  # fmt: skip


def main() -> int:
    """As it ran, on v5's forecast (`forms.as_v5`: the v6 library with v5's body term put back)."""
    with forms.as_v5():
        return _main()


if __name__ == "__main__":
    sys.exit(main())
