"""A descriptive design probe after v10's freeze (pools E to L, all seen; pool M held out): which part of the
forecast carries prose's over-forecast, the head or the body?

    python benchmarks/validity/design_body.py   # -> docs/validity/v11/body.txt (after design_v10.py dump)

Calibrated v10 is within ×2 of the measured total for about a quarter of the corpora on wiki (design: 26%), and
its misses are mostly over-forecasts of corpora that barely forget prose (English documentation, code). The head
probe (design_head.py) found the head's term 1.7× its measured part on wiki. The runs measure each part apart:
the head alone (the trained head on the base model's hidden states) and the body alone (the trained network's
hidden states on the base head; it holds the adaptation, term 7). This probe splits the total's error between
them. It only describes; no form is taken from it.

Fixed before any number below was computed (2026-12-07, after v10's freeze in 0cdff7d):
- data: plan-A ranking candidates of pools E to L, seed means, both old texts, as design_v10.py dumps them; v10's
  forecast at the plan's end as design_v10_form.py makes it (term 7 per old text, drift floor 0.1, the body's
  gain fitted on v3's 5 probes): the head part is the dumped head, the body part the gain times the body's unit
  less term 7; the measured parts are the runs' head-only and body-only forgetting;
- per old text: the median error (forecast − measured, nats) of the total, the head part and the body part,
  and the Spearman of the total's error against each part's error;
- the same medians over the over-forecast runs (forecast total above twice the measured, or above 0 where the
  measured is at or below 0) and over the rest;
- the Spearman of the body part's error against B (likeness), S (starved old share), the never-seen share, H₁
  (token entropy), E (passes) and the measured total; and its median in the lowest and highest B quartiles.
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
from design import Transcript, against, by_likeness, spearman

OUT = data.REPO / "docs" / "validity" / "v11" / "body.txt"
FLOOR = 0.1  # v10's drift floor
FEATURES = {
    "B (likeness)": lambda c: c["B"],
    "S (starved old share)": lambda c: c["S"],
    "never-seen share": lambda c: c["never_seen"],
    "H1 (token entropy)": lambda c: c["H1"],
    "E (passes)": lambda c: c["E"],
    "the measured total": lambda c: c["total"],
}


def parts(c: dict, gain: float, adaptation: float) -> tuple[float, float]:
    """v10's head part and body part (term 7 taken off the body) at the plan's end."""
    ramp = c["adaptation"][-1] / v10.LANDED
    return c["head"], gain * first.body_unit(c, FLOOR)[-1] - adaptation * ramp


def medians(say, label: str, rows: list[tuple[float, float, float]]) -> None:
    if not rows:
        say(f"   {label}: no runs")
        return
    total, head, body = (np.median([r[i] for r in rows]) for i in range(3))
    say(f"   {label} ({len(rows)} runs): median error total {total:+.3f}, head part {head:+.3f}, body part {body:+.3f}")


def main() -> int:
    say = Transcript()
    cases = v8.load(first.SETS, first.CACHE)
    say("# Output of benchmarks/validity/design_body.py: design data only (pools E to L: all seen)")
    say("# error = v10's forecast - the measured, nats, at the plan's end")
    for old in v8.OLDS:
        adaptation = forms.ADAPTATION[old]
        gain = v10.fit_gain(cases, old, adaptation, FLOOR)
        chosen = [c for s in first.POOLS for c in v8.candidates(cases, s, old)]
        errors, over, rest = [], [], []
        for c in chosen:
            head, body = parts(c, gain, adaptation)
            row = (head + body - c["total"], head - c["head_only"], body - c["body_only"])
            errors.append(row)
            forecast = head + body
            (over if forecast > 2 * c["total"] or (c["total"] <= 0 < forecast) else rest).append(row)
        say()
        say(f"{old}: {len(chosen)} runs, term 7 {adaptation:.3f}, body gain {gain:.4g}")
        medians(say, "all", errors)
        medians(say, "over-forecast", over)
        medians(say, "the rest", rest)
        totals, heads = [e[0] for e in errors], [e[1] for e in errors]
        say(f"   total's error against the head part's error: Spearman {spearman(totals, heads):+.2f}, "
            f"against the body part's: {spearman(totals, [e[2] for e in errors]):+.2f}")  # fmt: skip
        body_errors = [e[2] for e in errors]
        against(say, "body part's error", body_errors, chosen, FEATURES)
        low, high = by_likeness(body_errors, chosen)
        say(f"   body part's median error, lowest B quartile {low:+.3f}, highest B quartile {high:+.3f}")
    say.write(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
