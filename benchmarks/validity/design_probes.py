"""A design probe after v10's freeze (pools E to L, all seen; pool M held out): how many real corpora must
`calibrate` train on to set the body's scale?

    python benchmarks/validity/design_probes.py   # -> docs/validity/v11/probes.txt (after design_v10.py dump)

design_scale.py found that on wiki the gain fitted on v3's 5 probes (the texts `calibrate` ships) is 2.6 times the
gain fitted on the other design pools' real corpora, and that the latter doubles the corpora within ×2 (26% to
53%). A user cannot run a hundred probes. This probe asks how few real corpora set the scale as well.

Fixed before any number below was computed (2026-12-07, after v10's freeze in 0cdff7d):
- data and form as design_scale.py (v10's form, plan-A candidates of pools E to L, seed means, both old texts);
- for each scored pool and each k in 3, 5 and 8: 200 probe sets (numpy seed 0), each k candidates drawn without
  replacement from the other seven pools' plan-A candidates, the body's gain fitted on them by the calibration's
  search, and the scored pool's share within ×2 under it; per k and old text, the median and the 10th
  percentile of that share over the draws, averaged over the pools;
- beside them, v3's 5 probes with each one left out in turn (mean within ×2 over the pools), to see whether one
  probe sets their scale;
- what follows, fixed now: the smallest k whose mean median on wiki is at least 0.45 and whose mean 10th
  percentile is at least 0.30 is the size a shipped set of real corpora needs; if no k up to 8 reaches both,
  more than 8.
Nothing here is held out.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data
import design_v8 as v8
import design_v10 as first
import design_v10_form as v10
import forms
import score
from design import Transcript
from design_scale import FLOOR, gain_on
from design_v9 import probes

OUT = data.REPO / "docs" / "validity" / "v11" / "probes.txt"
SIZES = (3, 5, 8)
DRAWS = 200
MEDIAN, LOW = 0.45, 0.30  # the rule's least mean median and mean 10th percentile of within x2 on wiki


def within(chosen: list[dict], gain: float, adaptation: float) -> float:
    """The share of CHOSEN within x2 under GAIN (v10.made's curve at the plan's end, its body unit kept)."""
    forecast = [c["head"] + gain * c["unit_v10"] - adaptation * c["ramp"] for c in chosen]
    return float(np.mean(score.within(forecast, [c["total"] for c in chosen], 2.0)))


def main() -> int:
    say = Transcript()
    cases = v8.load(first.SETS, first.CACHE)
    for c in cases:  # what within() and the gain's search read, computed once
        c["unit_v10"], c["ramp"] = first.body_unit(c, FLOOR)[-1], c["adaptation"][-1] / v10.LANDED
    rng = np.random.default_rng(0)
    say("# Output of benchmarks/validity/design_probes.py: design data only (pools E to L: all seen)")
    say("# within x2 on the scored pool, mean over the 8 pools")
    verdict = None
    for old in v8.OLDS:
        adaptation = forms.ADAPTATION[old]
        columns = {s: v8.candidates(cases, s, old) for s in first.POOLS}
        say()
        say(f"{old}:")
        for k in SIZES:
            medians, lows = [], []
            for s, chosen in columns.items():
                others = [c for t, cs in columns.items() if t != s for c in cs]
                shares = [
                    within(chosen, gain_on([others[i] for i in rng.choice(len(others), k, replace=False)], adaptation),
                           adaptation)
                    for _ in range(DRAWS)
                ]  # fmt: skip
                medians.append(float(np.median(shares)))
                lows.append(float(np.quantile(shares, 0.1)))
            median, low = float(np.mean(medians)), float(np.mean(lows))
            say(f"   {k} real corpora drawn from the other pools: median {median:.0%}, 10th percentile {low:.0%}")
            if old == "wiki" and verdict is None and median >= MEDIAN and low >= LOW:
                verdict = k
        shipped = probes(cases, old, narrow=False)
        for left in shipped:
            rest = [c for c in shipped if c is not left]
            gain = gain_on(rest, adaptation)
            mean = float(np.mean([within(chosen, gain, adaptation) for chosen in columns.values()]))
            say(f"   v3's probes without {left['name']}: gain {gain:.3g}, within x2 {mean:.0%}")
    say()
    say(f"the size a shipped set of real corpora needs (wiki median >= {MEDIAN:.0%}, 10th percentile >= {LOW:.0%}): "
        + (f"{verdict}" if verdict else f"more than {SIZES[-1]}"))  # fmt: skip
    say.write(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
