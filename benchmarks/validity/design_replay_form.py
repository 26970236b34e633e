"""A design probe of term 8's form (pools E to L, all seen; pool M held out): how much of a corpus's
forgetting does replay take away?

    python benchmarks/validity/design_replay_form.py   # -> docs/validity/v11/replay-form.{txt,json} (suites built)

The probe before it (design_replay.py → docs/validity/v11/replay.txt) found that on wiki replay helps above the
seed noise, and that where a source forgot more than 0.05 nats, 5% replay removed a median 0.80 of it and 25%
removed 1.06: about all of it. Term 8 as landed protects the body alone, by the replay's squared coverage of the
old text (0.72 for wiki replay on wiki), and leaves the head to the mix's token shares, which starve the old
text's rows almost as much as the corpus alone does. The mechanism says otherwise for the head too: a row the
corpus pushes down is pulled back on every replay position where its token occurs, and Adam turns that small,
consistent pull into a full-size step, so replay stops the head's walk as it stops the body's drift.

Fixed before any number below was computed (2026-12-07, after v10's freeze in 0cdff7d and before pool M's runs
were read):
- data: the replay runs of pools E to L (three sources per pool at 1 epoch with 5% and 25% of v3's wiki replay
  text, one seed), each against its source's 1-epoch run (seed mean): the measured reduction is the source's
  total less the replay run's; on both old texts (code's replay is wiki text, a text of another kind).
- the forecast is v10's as `score.py` makes it (calibrated on v3's 5 probes, `score.calibrate`), and each
  form's reduction is what it takes off v10's total for the source:
  (R0) term 8 as landed: `Summary.mixed` (the head from the mix's token shares, the body times
       1 − c (1 − e^{−ρ/0.03}), c = (B(replay, old) / B(old, old))²);
  (R1) replay keeps the share 1 − c (1 − e^{−ρ/0.03}) of the head and the body alike (c squared, as landed);
  (R2) R1 with c unsquared (B(replay, old) / B(old, old): the cosine, not its square);
  (R3) R1 with c = 1 (the ablation of coverage: any replay protects all it can).
- scored per old text and share: runs within ×2 of the measured reduction (issue 30's replay target; a
  reduction measured at or below 0 is never within), the Spearman of forecast against measured reduction, and
  the ratio of the median forecast reduction to the median measured one.
- the rule: the form with the most wiki runs within ×2 (both shares, 48 runs) is taken if it beats R0 by 3
  runs or more; a form whose code median ratio (both shares) is outside [1/3, 3] is not eligible; ties go to
  the smaller |log| of code's median ratio, then to the simpler (R0, R1, R2, R3). Whatever it takes is tested
  on pool M's replay runs beside v10's term 8, after v10's own scoring there.
Nothing here is held out.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data
import design_v8 as v8
import design_v10 as first
import score
from design import Transcript, spearman

from vocabrisk.risk.forecast import REPLAY_ONSET

OUT = data.REPO / "docs" / "validity" / "v11" / "replay-form.txt"
RAW = OUT.with_suffix(".json")  # every run's measured and forecast reductions, to re-score
FORMS = ("R0", "R1", "R2", "R3")
SHARES = (0.05, 0.25)
WITHIN = 2.0
EXTREME = 3.0  # code's median ratio outside [1/EXTREME, EXTREME] makes a form ineligible
MARGIN = 3  # wiki runs within x2 a form must add to R0's to be taken


def reductions(log) -> list[dict]:
    """Every replay run of pools E to L on both old texts: its measured reduction and each form's forecast one."""
    rows = []
    for label in first.POOLS:
        runs = v8._runs(log, label)
        for old in v8.OLDS:
            for name, share, summary, what_if, measured in score.what_ifs(runs, old, score.calibrate(runs, old)):
                f, squared = summary.forecast, what_if.forecast.replay.coverage
                forgetting = f.head + f.body  # what replay can take away: the adaptation is the plan's
                onset = -math.expm1(-share / REPLAY_ONSET)
                rows.append({
                    "pool": label, "old": old, "run": name, "share": share, "measured": measured,
                    "R0": f.total - what_if.forecast.total,
                    "R1": squared * onset * forgetting,
                    "R2": math.sqrt(squared) * onset * forgetting,
                    "R3": onset * forgetting,
                })  # fmt: skip
        log(f"{label}: {sum(r['pool'] == label for r in rows)} replay runs")
    return rows


def within(predicted: float, measured: float) -> bool:
    return measured > 0 and 1 / WITHIN <= predicted / measured <= WITHIN


def median_ratio(rows: list[dict], form: str) -> float:
    measured = float(np.median([r["measured"] for r in rows]))
    return float(np.median([r[form] for r in rows])) / measured if measured > 0 else float("nan")


def main() -> int:
    say = Transcript()
    rows = reductions(lambda text: print(text, flush=True))
    say("# Output of benchmarks/validity/design_replay_form.py: design data only (pools E to L: all seen)")
    say("# per old text and share: runs within x2 of the measured reduction, Spearman (forecast, measured),")
    say("# median forecast reduction / median measured reduction")
    summary: dict[str, dict[str, float]] = {form: {} for form in FORMS}
    for old in v8.OLDS:
        mine = [r for r in rows if r["old"] == old]
        say()
        say(f"{old}: {len(mine)} replay runs; measured reduction median "
            f"{np.median([r['measured'] for r in mine]):+.3f} nats")  # fmt: skip
        for form in FORMS:
            cells = []
            for share in SHARES:
                part = [r for r in mine if r["share"] == share]
                hits = sum(within(r[form], r["measured"]) for r in part)
                rho = spearman([r[form] for r in part], [r["measured"] for r in part])
                ratio = median_ratio(part, form)
                cells.append(f"{share:.0%}: {hits:2d}/{len(part)} x2, rho {rho:+.2f}, ratio {ratio:5.2f}")
            hits = sum(within(r[form], r["measured"]) for r in mine)
            summary[form][old + " hits"] = hits
            summary[form][old + " ratio"] = median_ratio(mine, form)
            both = f" | both: {hits}/{len(mine)}, ratio {summary[form][old + ' ratio']:.2f}"
            say(f"   {form}  " + " | ".join(cells) + both)
    say()
    eligible = [f for f in FORMS if 1 / EXTREME <= summary[f]["code ratio"] <= EXTREME]
    say(f"eligible (code's median ratio within [1/{EXTREME:g}, {EXTREME:g}]): {', '.join(eligible) or 'none'}")
    best = min(eligible, key=lambda f: (-summary[f]["wiki hits"], abs(math.log(summary[f]["code ratio"])),
                                         FORMS.index(f)), default=None)  # fmt: skip
    gained = summary[best]["wiki hits"] - summary["R0"]["wiki hits"] if best else 0
    taken = best if best and gained >= MARGIN else "R0"
    say(f"the rule takes: {taken}" + ("" if taken != "R0" else " (term 8 as landed stays)"))
    say.write(OUT)
    RAW.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
