"""A design probe after v10's freeze (v3 and pools E to L, all seen; pool M held out): does a corpus protect
what it shares with the old text, as replay does?

    python benchmarks/validity/design_v11.py   # -> docs/validity/v11/self-replay.txt (after design_v10.py dump)

On pool L and every design pool, prose's forecast is too high for the corpora most like the old text (English
documentation and code forgot English wiki by −0.04 to +0.09 nats, forecast +0.14 to +0.18), and no form so far
touched it (design_v10.py, design_v10_form.py). The body's term grows with likeness B through its transfer
pathway, so a corpus of exactly the old text's kind gets the largest body term of all, while training on the
old text itself cannot make the model forget it. Term 8 already models the mechanism that would stop this, for
replay mixed into a plan: text of the old text's kind pulls the shared network back on the contexts it shows,
by its coverage `c = (B / B_self)²` (B_self: what another sample of the old text scores against it). A corpus is
its own replay to the extent it is like the old text, so term 8's protection, saturated (the corpus is the
whole plan, far past REPLAY_ONSET), would multiply the body by `1 − c`.

Fixed before any number below was computed (2026-12-07, after v10's freeze in 0cdff7d and pool M's build):
- data: plan-A runs of v3 and pools E to L (all seen), seed means, both old texts, as design_v10.py dumps them;
  v10's body (`design_v10.body_unit` with its drift floor 0.1), v10's term 7 per old text (0.072 wiki, 0.043
  code), gains fitted on v3's 5 probes as calibration fits them (`design_v10_form.fit_gain`), with the factor.
- question 1 (the direction): per old text, over the pools' ranking candidates, the Spearman of measured total
  over v10's forecast total against c = min(1, (B / B_self)²). The mechanism says it is negative.
- question 2, two forms scored as design_v10.py scores (per column the Spearman at the plan's end, within ×2,
  curve points within ×1.5; the wiki and code means and the smallest column):
  (a) v10 as frozen;
  (b) v10 with its body times 1 − c (term 8's coverage, no new constant).
- the rule: (b) is taken into the next form only if its mean of the wiki and code Spearman means is at least
  0.02 above (a)'s, its within-×2 mean on each old text at most 0.03 below (a)'s, and its smallest column at
  most 0.05 below (a)'s. Otherwise it is recorded and left out.
Nothing here is held out; pool M tests v10, not this.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data
import design_v8 as v8
import design_v10 as first
import design_v10_form as second
import forms
from design import Transcript, spearman

OUT = data.REPO / "docs" / "validity" / "v11" / "self-replay.txt"
FLOOR = 0.1  # v10's drift floor
ADAPTATION = {"wiki": 0.072, "code": 0.043}  # v10's term 7 per old text (design_v10_form.py, question 1)


def coverage(c: dict) -> float:
    """Term 8's coverage of the old text by the corpus itself: (B / B_self)², at most 1."""
    return min(1.0, (c["B"] / c["self_alike"]) ** 2)


FORMS = {"(a) v10 as frozen": lambda c: 1.0, "(b) body x (1 - c)": lambda c: 1.0 - coverage(c)}


def main() -> int:
    say = Transcript()
    cases = v8.load(first.SETS, first.CACHE)
    columns = [(s, o) for o in v8.OLDS for s in first.POOLS]
    say("# Output of benchmarks/validity/design_v11.py: design data only (v3, pools E to L: all seen)")
    say()
    say("1. Measured total / v10's total against c = (B / B_self)^2, Spearman over the pools' candidates:")
    gains = {o: second.fit_gain(cases, o, ADAPTATION[o], FLOOR) for o in v8.OLDS}
    for old in v8.OLDS:
        chosen = [c for s in first.POOLS for c in v8.candidates(cases, s, old)]
        totals = [float(second.made(c, gains[old], ADAPTATION[old], FLOOR)[-1]) for c in chosen]
        ratio = [c["total"] / t if t > 0 else float("nan") for c, t in zip(chosen, totals, strict=True)]
        kept = [(r, coverage(c)) for r, c in zip(ratio, chosen, strict=True) if np.isfinite(r)]
        cs = [c for _, c in kept]
        low, high = np.quantile(cs, [0.25, 0.75])
        rho = spearman([r for r, _ in kept], cs)
        say(
            f"   {old}: {len(kept)} runs, Spearman {rho:+.2f}; "
            f"c median {np.median(cs):.2f} (quartiles {low:.2f}-{high:.2f})"
        )
    say()
    say("2. Spearman of the total at the plan's end, share within x2, share of curve points within x1.5:")
    v8.header(say, columns, width=40)
    means = {}
    for label, scale in FORMS.items():
        fitted = {o: second.fit_gain(cases, o, ADAPTATION[o], FLOOR, scale) for o in v8.OLDS}
        rows: dict[str, list[float]] = {"Spearman": [], "within x2": [], "curve within x1.5": []}
        for old in v8.OLDS:
            for s in first.POOLS:
                chosen = v8.candidates(cases, s, old)
                curves = [second.made(c, fitted[old], ADAPTATION[old], FLOOR, scale) for c in chosen]
                for measure, value in zip(rows, first.scores(chosen, curves), strict=True):
                    rows[measure].append(value)
        for measure, values in rows.items():
            v8.row(say, f"{label}: {measure}", values, width=40)
        say("   gains: " + "; ".join(f"{o} {g:.3g}" for o, g in fitted.items()))
        half = len(first.POOLS)
        means[label] = {
            m: (float(np.mean(v[:half])), float(np.mean(v[half:])), float(np.min(v))) for m, v in rows.items()
        }
    say()
    a, b = means.values()
    order = [(m["Spearman"][0] + m["Spearman"][1]) / 2 for m in (a, b)]
    taken = (
        order[1] >= order[0] + 0.02
        and all(b["within x2"][i] >= a["within x2"][i] - 0.03 for i in (0, 1))
        and b["Spearman"][2] >= a["Spearman"][2] - 0.05
    )
    say(f"3. The rule: mean order {order[0]:+.3f} (a), {order[1]:+.3f} (b); (b) is {'taken' if taken else 'left out'}")
    say.write(OUT)
    return 0


if __name__ == "__main__":
    with forms.as_v9():  # the dumped pieces are v9's; v10's floor and term 7 are put on them here, as frozen
        sys.exit(main())
