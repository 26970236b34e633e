"""Two checks docs/VALIDITY.md cites after pool H's score (design: every run here is seen).

    python benchmarks/validity/after_h.py   # -> docs/validity/v5/after-h.txt

1. Forgetting against passes: the design pairs where one source was cut at 0.2 or 3 epochs and at 1 (v3's and
   pool E's runs), the measured total over that at 1 epoch per old text, beside what ln(1+E) and v5's ln(1+R)
   say (their ratios at the two cuts); the geometric mean of the 0.2-epoch ratios.
2. The replay what-if on pool H's ru-words: the forecast's head and total without replay and with 5% and 25% of
   the wiki replay text (`Summary.mixed`), beside the measured head-only and total of the three runs.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data
import forms
import score
from design import Transcript

OUT = data.REPO / "docs" / "validity" / "v5" / "after-h.txt"


def passes(say, log) -> None:
    from vocabrisk.risk.summary import Summary

    say("1. measured total at 0.2 or 3 epochs over 1 epoch, same source (forecast terms calibrated per set)")
    say(f"{'set':>3} {'old':>4} {'run':>28} {'total':>7} {'1ep':>7} {'ratio':>6} {'ln(1+E)':>8} {'ln(1+R)':>8}")
    ratios = []
    for label, runs in (("v3", score.Runs.v3(log)), ("E", score.Runs.v4(log, "heldout"))):
        names = runs.names("A")
        cuts = [n for n in names if n.endswith((":0.2ep", ":3ep")) and n.rsplit(":", 1)[0] + ":1ep" in names]
        for name in cuts:
            one = name.rsplit(":", 1)[0] + ":1ep"
            for old in ("wiki", "code"):
                calibration = score.calibrate(runs, old)
                low, high = (
                    Summary.of(runs.profiles[n, old], runs.plans["A"], calibration).forecast for n in (name, one)
                )
                a, b = runs.value(name, "A", old, "total"), runs.value(one, "A", old, "total")
                ratio = a / b if b > 0.03 and a > 0 else float("nan")  # both near 0 on wiki: no ratio
                if not math.isnan(ratio) and name.endswith(":0.2ep"):
                    ratios.append(ratio)
                say(f"{label:>3} {old:>4} {name:>28} {a:>+7.3f} {b:>+7.3f} {ratio:>6.2f} "
                    f"{math.log1p(low.epochs) / math.log1p(high.epochs):>8.2f} "
                    f"{math.log1p(low.terms.repeats) / math.log1p(high.terms.repeats):>8.2f}")  # fmt: skip
    mean = math.exp(sum(map(math.log, ratios)) / len(ratios))
    say(f"geometric mean of the {len(ratios)} 0.2-epoch ratios: {mean:.2f}")


def replay_head(say, log) -> None:
    from vocabrisk.risk.summary import Summary

    runs, old = score.Runs.v4_pool(log, "H"), "wiki"
    summary = Summary.of(runs.profiles["ru-words:1ep", old], runs.plans["A"], score.calibrate(runs, old))
    replay = runs.replay(old)
    say()
    say("2. pool H's ru-words on wiki: forecast head and total with a share of replay, and the measured runs")
    say(f"{'share':>6} {'forecast head':>14} {'forecast total':>15} {'measured head-only':>19} {'measured total':>15}")
    for share, name in ((0.0, "ru-words:1ep"), (0.05, "ru-words:1ep+replay5%"), (0.25, "ru-words:1ep+replay25%")):
        with forms.replaying(replay):
            made = summary.mixed(replay.shares, share).forecast
        say(f"{share:>6.2f} {made.head:>+14.3f} {made.total:>+15.3f} {runs.value(name, 'A', old, 'head_only'):>+19.3f} "
            f"{runs.value(name, 'A', old, 'total'):>+15.3f}")  # fmt: skip


def _main() -> int:
    say = Transcript()
    say("# Output of benchmarks/validity/after_h.py: design checks on seen runs (docs/VALIDITY.md, after pool H)")
    passes(say, print)
    replay_head(say, print)
    say.write(OUT)
    return 0


def main() -> int:
    """As it ran, on v5's forecast (`forms.as_v5`: the v6 library with v5's body term put back)."""
    with forms.as_v5():
        return _main()


if __name__ == "__main__":
    sys.exit(main())
