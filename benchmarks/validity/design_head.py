"""A descriptive design probe after v10's freeze (v3 and pools E to L, all seen; pool M held out): where is the
head's term too large?

    python benchmarks/validity/design_head.py   # -> docs/validity/v11/head.txt (after design_v10.py dump)

On pool L the head's forecast for English documentation and code on wiki was +0.07 to +0.09 nats where the
measured head part was +0.02 to +0.04, while the head ranked corpora at +0.90. A head too large where it ranks
well is a size error that follows some property of the corpus. This probe only describes; no form is taken
from it, and the next form's questions are fixed after it.

Fixed before any number below was computed (2026-12-07, after v10's freeze in 0cdff7d):
- data: plan-A ranking candidates of pools E to L, seed means, both old texts, as design_v10.py dumps them; the
  head's forecast at the plan's end under each pool's calibrated kappa, and the measured head-only forgetting;
- runs whose measured head part is above 0.005 nats (a ratio of smaller ones is noise);
- per old text, the median of forecast / measured head, its quartiles, and the Spearman of log(forecast /
  measured) against each of: B (likeness), S (starved old share), the never-seen share of rows, H₁ (token
  entropy), the forecast head itself, and the measured total;
- the same median for the quartile of highest B and of lowest B.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data
import design_v8 as v8
import design_v10 as first
from design import Transcript, against, by_likeness

OUT = data.REPO / "docs" / "validity" / "v11" / "head.txt"
SMALLEST = 0.005  # nats: the least measured head part whose ratio is read
FEATURES = {
    "B (likeness)": lambda c: c["B"],
    "S (starved old share)": lambda c: c["S"],
    "never-seen share": lambda c: c["never_seen"],
    "H1 (token entropy)": lambda c: c["H1"],
    "the forecast head": lambda c: c["head"],
    "the measured total": lambda c: c["total"],
}


def main() -> int:
    say = Transcript()
    cases = v8.load(first.SETS, first.CACHE)
    say("# Output of benchmarks/validity/design_head.py: design data only (pools E to L: all seen)")
    for old in v8.OLDS:
        chosen = [c for s in first.POOLS for c in v8.candidates(cases, s, old) if c["head_only"] > SMALLEST]
        ratio = np.array([c["head"] / c["head_only"] for c in chosen])  # 0 where the head's term is 0: log -inf ranks
        low, mid, high = np.quantile(ratio, [0.25, 0.5, 0.75])
        say()
        say(f"{old}: {len(chosen)} runs with a measured head above {SMALLEST}: forecast / measured median {mid:.2f} "
            f"(quartiles {low:.2f}-{high:.2f})")  # fmt: skip
        with np.errstate(divide="ignore"):
            logs = np.log(ratio)
        against(say, "log ratio", logs, chosen, FEATURES)
        low, high = by_likeness(ratio, chosen)
        say(f"   median ratio, lowest B quartile {low:.2f}, highest B quartile {high:.2f}")
    say.write(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
