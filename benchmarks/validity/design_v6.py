"""v6's design numbers, on design data only: every run of v3 and of pools E, F, G and H (all seen).

    python benchmarks/validity/design_v6.py   # -> docs/validity/v6/design.txt

v6 is v5 with the body's repetition counted as the plan's passes over the corpus, from one up:
ln(1 + max(1, E)) in place of v5's ln(1 + R), R the 3-gram revisits (docs/VALIDITY.md, "After pool H" and
"v6"). This prints, for v6, its ablations, the shapes of E around it and v5, the Spearman of the forecast total
with the measured total per set and old text (the body's gain refitted per form on v3, as design_v5.py does;
the head and adaptation as each set is scored), over every plan-A candidate and over the runs of more than
one pass; then the constant v6 ships: the uncalibrated body gain, the median over every design endpoint.
Nothing here is held out: pool I (docs/validity/v4/PROTOCOL-pool-i.md) is v6's test.
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
from design import Transcript
from design_v5 import constants, refitted, v3_gain

OUT = data.REPO / "docs" / "validity" / "v6" / "design.txt"
SETS = ("v3", "E", "F", "G", "H")
OLDS = ("wiki", "code")


def cases(log, pools: tuple[str, ...] = ("F", "G", "H")) -> list[dict]:
    """Every plan-A candidate of v3, pool E and POOLS on each old text: the active form's terms (H, v5's and
    v6's 2-gram entropy, and H₁, v7's token entropy, whichever the form reads), calibrated as the scorer does."""
    from vocabrisk.risk.calibration import Calibration
    from vocabrisk.risk.forecast import token_entropy
    from vocabrisk.risk.summary import Summary

    sets = {"v3": score.Runs.v3(log), "E": score.Runs.v4(log, "heldout"),
            **{pool: score.Runs.v4_pool(log, pool) for pool in pools}}  # fmt: skip
    out = []
    for label, runs in sets.items():
        calibrations = {old: score.calibrate(runs, old) for old in OLDS}
        for name in runs.names("A"):
            for old in OLDS:
                profile = runs.profiles[name, old]
                f = Summary.of(profile, runs.plans["A"], calibrations[old]).forecast
                default = Summary.of(profile, runs.plans["A"], Calibration(adaptation=score.SMOLLM2_ADAPTATION))
                body, collision = f.terms, forms.MEASURED.collision(profile)
                out.append({
                    "set": label, "old": old, "name": name, "one_epoch": name.endswith(":1ep"),
                    "head": f.head, "adaptation": f.adaptation, "unit": body.unit, "S": body.starved,
                    "B": body.alike, "E": body.passes, "H": forms.h_of(profile), "H1": token_entropy(profile.shares),
                    "R": f.epochs * profile.total_tokens * collision if collision is not None else f.epochs,
                    "default_head": default.forecast.head, "total": runs.value(name, "A", old, "total"),
                })  # fmt: skip
    return out


def pace(c: dict) -> float:
    """lr · (1 - e^{-Σlr/BODY_RELAXATION}) at the plan's end: the part of the body's term every form keeps."""
    core = c["S"] * c["B"] * math.log1p(max(1.0, c["E"])) * math.exp(-c["H"])
    return c["unit"] / core if core > 0 else 0.0


def bodies() -> dict:
    """Each body term in nats per unit of gain: v6, its ablations, other shapes of E, and v5."""
    e = lambda c: math.exp(-c["H"])  # noqa: E731
    sb = lambda c: pace(c) * c["S"] * c["B"]  # noqa: E731
    return {
        "v6: S·B·ln(1+max(1,E))·e^-H": lambda c: c["unit"],
        "without S": lambda c: pace(c) * c["B"] * math.log1p(max(1.0, c["E"])) * e(c),
        "without B": lambda c: pace(c) * c["S"] * math.log1p(max(1.0, c["E"])) * e(c),
        "without E": lambda c: sb(c) * e(c),
        "without e^-H": lambda c: sb(c) * math.log1p(max(1.0, c["E"])),
        "E from zero: ln(1+E)": lambda c: sb(c) * math.log1p(c["E"]) * e(c),
        "√max(1,E)": lambda c: sb(c) * math.sqrt(max(1.0, c["E"])) * e(c),
        "max(1,E)": lambda c: sb(c) * max(1.0, c["E"]) * e(c),
        "v5: S·B·ln(1+R)·e^-H": lambda c: sb(c) * math.log1p(c["R"]) * e(c),
    }


def passes_pairs(every: list[dict]) -> list[tuple[dict, dict]]:
    """(run, the same source's 1-epoch run) for every plan-A run of another pass count, per set and old text,
    where both forgot (a ratio of totals needs a positive denominator)."""
    ones = {(c["set"], c["old"], c["name"].split(":")[0]): c for c in every if c["name"].endswith(":1ep")}
    pairs = []
    for c in every:
        one = ones.get((c["set"], c["old"], c["name"].split(":")[0]))
        if one is not None and c is not one and one["total"] > 0 and c["total"] > 0:
            pairs.append((c, one))
    return pairs


def predicted_ratio(every: list[dict], term, run: dict, one: dict) -> float:
    """The forecast's total of RUN over ONE's with the body TERM, its gain refitted on v3 for their old text."""
    gain = v3_gain(every, term, run["old"])
    total = lambda c: c["head"] + gain * term(c) - c["adaptation"]  # noqa: E731
    return total(run) / total(one)


def passes_table(say, every: list[dict], terms: dict, width: int) -> None:
    """For each body term of TERMS, the forecast's ratio of totals over the measured one for every source at other
    passes than its 1-epoch run: the geometric mean by passes and the share within x1.5 (labels WIDTH wide)."""
    pairs = passes_pairs(every)
    say()
    say(f"one source at other passes over its 1-epoch run ({len(pairs)} (set, source, passes, old text) pairs): the")
    say("forecast's ratio of totals over the measured one (gain refitted per old text on v3): its geometric mean")
    say("by the runs' passes (where the forecast's ratio is positive: how many), and the share within x1.5")
    bins = {"E<1": (0, 1), "1<E<6": (1, 6), "E>6": (6, math.inf)}
    say(f"{'form':>{width}}  " + " ".join(f"{b:>12}" for b in bins) + "  x1.5 share")
    for label, term in terms.items():
        ratios = [(k["E"], predicted_ratio(every, term, k, one) / (k["total"] / one["total"])) for k, one in pairs]
        cells = []
        for low, high in bins.values():
            inside = [r for e, r in ratios if low < e < high]
            positive = [r for r in inside if r > 0]
            mean = np.exp(np.mean(np.log(positive))) if positive else float("nan")
            cells.append(f"{mean:.2f} ({len(positive)}/{len(inside)})")
        within = np.mean([1 / 1.5 <= r <= 1.5 for _, r in ratios])
        say(f"{label:>{width}}  " + " ".join(f"{c:>12}" for c in cells) + f"  {within:>10.0%}")


def _main() -> int:
    say = Transcript()

    every = cases(print)
    columns = [(s, o) for o in OLDS for s in SETS]
    say("# Output of benchmarks/validity/design_v6.py: design data only (v3, pools E, F, G, H: all seen)")
    say("Spearman of the forecast total with the measured total (plan A, seed means); gain refitted per form on v3")
    counts = {column: sum((c["set"], c["old"]) == column for c in every) for column in columns}
    say()
    say(f"every plan-A candidate (runs per column: {', '.join(str(counts[c]) for c in columns)}):")
    say(f"{'form':>30}  " + " ".join(f"{s + '-' + o:>7}" for s, o in columns) + "     mean      min")
    for label, term in bodies().items():
        values = [refitted(every, term, column) for column in columns]
        say(f"{label:>30}  " + " ".join(f"{v:>+7.2f}" for v in values) + f"  {np.mean(values):+.3f}  "
            f"{min(values):+.2f}")  # fmt: skip
    passes_table(say, every, bodies(), width=30)
    say()
    constants(say, every)
    say.write(OUT)
    return 0


def main() -> int:
    """As it ran, on v6's forecast (`forms.as_v6`: the v7 library with v6's body term put back)."""
    with forms.as_v6():
        return _main()


if __name__ == "__main__":
    sys.exit(main())
