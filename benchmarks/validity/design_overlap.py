"""A design probe after v10's freeze (v3 and pools E to L, all seen; pool M held out): does term 5 discount
text unlike the old text too much?

    python benchmarks/validity/design_overlap.py   # -> docs/validity/v11/overlap.txt (after design_v10.py dump)

design_head.py found the head's forecast too flat across likeness: on wiki 0.14× the measured head part for
the quarter of corpora least like the old text and 1.95× for the quarter most like it (0.31× and 0.78× on
code). Term 5 scales every shift an old context feels by √P_in, P_in the share of the context's neighbourhood
that the corpus holds at all, so text in another script reaches the old text's contexts at a small fraction of
its shifts. If the discount is too strong, a smaller power of P_in flattens it, and kappa, refitted on the
probes, brings the level back down for text like the old text.

Fixed before any number below was computed (2026-12-07, after v10's freeze in 0cdff7d and design_head.py):
- data: plan-A ranking candidates of pools E to L and v3's 5 probes, seed means, both old texts, as
  design_v10.py dumps them; the head recomputed by the library (`Drive.of`, `Drive.head_curve`) from the dumped
  distributions, old text and plan A, with `forecast.OVERLAP_POWER` set to 0.5 (v10), 0.25 or 0;
  the power 0.5 must reproduce the dumped head to 1e-9 first;
- for each power, kappa refitted on v3's 5 probes' measured head as calibration fits it (least squared log
  error over `calibration.KAPPAS`), then v10's body gain on them given that head (drift floor 0.1, term 7 per
  old text 0.072 / 0.043);
- measures per (pool, old text) column: the head's Spearman with the measured head part and its share within
  ×2; the total's Spearman at the plan's end, within ×2 and curve points within ×1.5 (design_v10.scores); the
  median head ratio (forecast / measured, measured above 0.005 nats) in the lowest and highest B quartiles;
- the rule: a power is taken into the next form only if its mean of the wiki and code total Spearman means is
  at most 0.01 below v10's, its smallest total column at most 0.05 below v10's, and its head within ×2 (mean
  of the two old texts) at least 0.05 above v10's; of those, the one with the largest head within ×2.
Nothing here is held out; pool M tests v10, not this.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data
import design_v8 as v8
import design_v10 as first
import design_v10_form as second
import forms
import suite_v2 as v2
import suite_v3 as v3
from design import Transcript, spearman
from design_v9 import probes

from vocabrisk.prior.old_text import OldText
from vocabrisk.risk import forecast
from vocabrisk.risk.calibration import KAPPAS, _best_gain, _log_error

OUT = data.REPO / "docs" / "validity" / "v11" / "overlap.txt"
POWERS = (0.5, 0.25, 0.0)
FLOOR = 0.1  # v10's drift floor
ADAPTATION = {"wiki": 0.072, "code": 0.043}  # v10's term 7 per old text
SMALLEST = 0.005  # nats: the least measured head part whose ratio is read


class Heads:
    """The head's term of every dumped case, recomputed by the library for any kappa."""

    def __init__(self, cases: list[dict]) -> None:
        plan = v2.train_config(json.loads((v3.OUT / "suite.json").read_text())["plans"]["A"]).plan
        self.drives, self.olds = {}, {}
        for c in cases:
            drive = forecast.Drive.of(c["corpus"], c["exposure_a"], c["prior_p"], plan, c["corpus_tokens"])
            assert np.allclose(drive.lr_sums, c["lr_sums"]), c["name"]
            self.drives[id(c)] = drive
            self.olds[id(c)] = OldText(c["old_ids_a"], c["old_starts_a"])

    def curve(self, c: dict, kappa: float) -> np.ndarray:
        return self.drives[id(c)].head_curve(kappa, c["corpus"] > 0, self.olds[id(c)], c["prior_p"])

    def at_end(self, c: dict, kappas: np.ndarray) -> np.ndarray:
        return self.drives[id(c)].head(kappas, c["corpus"] > 0, self.olds[id(c)], c["prior_p"])


def main() -> int:
    say = Transcript()
    cases = v8.load(first.SETS, first.CACHE)
    chosen = {(s, o): v8.candidates(cases, s, o) for o in v8.OLDS for s in first.POOLS}
    shipped = {o: probes(cases, o, narrow=False) for o in v8.OLDS}
    heads = Heads([c for rows in (*chosen.values(), *shipped.values()) for c in rows])
    say("# Output of benchmarks/validity/design_overlap.py: design data only (v3, pools E to L: all seen)")
    check = max(abs(heads.curve(c, c["kappa"])[-1] - c["head"]) for rows in chosen.values() for c in rows)
    say(f"power 0.5 reproduces the dumped head: largest difference {check:.1e} nats")
    assert check < 1e-9
    say()
    v8.header(say, list(chosen), width=44)
    means = {}
    for power in POWERS:
        label = f"P_in^{power}"
        with mock.patch.object(forecast, "OVERLAP_POWER", power):
            rows: dict[str, list[float]] = {"head Spearman": [], "head within x2": [], "Spearman": [],
                                            "within x2": [], "curve within x1.5": []}  # fmt: skip
            kappas, gains, ratios = {}, {}, {o: [] for o in v8.OLDS}
            for old, rows_ in shipped.items():
                grid = np.array([heads.at_end(c, KAPPAS) for c in rows_]).T
                kappas[old] = float(KAPPAS[int(np.argmin(_log_error(grid, np.array([c["head_only"] for c in rows_]))))])
                head = np.array([heads.curve(c, kappas[old])[-1] for c in rows_])
                body = np.array([first.body_unit(c, FLOOR)[-1] for c in rows_])
                gains[old] = _best_gain(head, np.array([c["total"] for c in rows_]), body, ADAPTATION[old])
            for (_, old), rows_ in chosen.items():
                head_curves = [heads.curve(c, kappas[old]) for c in rows_]
                ramp = [np.asarray(c["adaptation"]) / second.LANDED for c in rows_]
                curves = [h + gains[old] * first.body_unit(c, FLOOR) - ADAPTATION[old] * r
                          for h, c, r in zip(head_curves, rows_, ramp, strict=True)]  # fmt: skip
                measured_head = [c["head_only"] for c in rows_]
                end_heads = [float(h[-1]) for h in head_curves]
                rows["head Spearman"].append(spearman(end_heads, measured_head))
                pairs = zip(end_heads, measured_head, strict=True)
                rows["head within x2"].append(float(np.mean([m > 0 and 0.5 <= p / m <= 2 for p, m in pairs])))
                for measure, value in zip(("Spearman", "within x2", "curve within x1.5"),
                                          first.scores(rows_, curves), strict=True):  # fmt: skip
                    rows[measure].append(value)
                ratios[old] += [(h / c["head_only"], c["B"]) for h, c in zip(end_heads, rows_, strict=True)
                                if c["head_only"] > SMALLEST]  # fmt: skip
        for measure, values in rows.items():
            v8.row(say, f"{label}: {measure}", values, width=44)
        say("   kappa: " + "; ".join(f"{o} {k:.3g}" for o, k in kappas.items())
            + "; gain: " + "; ".join(f"{o} {g:.3g}" for o, g in gains.items()))  # fmt: skip
        for old, pairs in ratios.items():
            r, b = np.array([p for p, _ in pairs]), np.array([b for _, b in pairs])
            low, high = np.quantile(b, [0.25, 0.75])
            say(f"   {old}: head ratio median {np.median(r):.2f}; lowest B quartile {np.median(r[b <= low]):.2f}, "
                f"highest {np.median(r[b >= high]):.2f}")  # fmt: skip
        half = len(first.POOLS)
        means[power] = {
            m: (float(np.mean(v[:half])), float(np.mean(v[half:])), float(np.min(v))) for m, v in rows.items()
        }
    say()
    base = means[0.5]
    order = {p: (m["Spearman"][0] + m["Spearman"][1]) / 2 for p, m in means.items()}
    head2 = {p: (m["head within x2"][0] + m["head within x2"][1]) / 2 for p, m in means.items()}
    taken = [
        p for p in POWERS[1:]
        if order[p] >= order[0.5] - 0.01 and means[p]["Spearman"][2] >= base["Spearman"][2] - 0.05
        and head2[p] >= head2[0.5] + 0.05
    ]  # fmt: skip
    say("The rule: " + "; ".join(f"P_in^{p}: order {order[p]:+.3f}, head within x2 {head2[p]:.2f}" for p in POWERS))
    say(f"   taken: {'P_in^' + str(max(taken, key=head2.get)) if taken else 'none (v10 stays)'}")
    say.write(OUT)
    return 0


if __name__ == "__main__":
    with forms.as_v9():  # the dumped pieces are v9's; v10's floor and term 7 are put on them here, as frozen
        sys.exit(main())
