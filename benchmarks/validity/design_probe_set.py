"""A design check of v11's candidate probe set (pools E to L, all seen; pools M and N held out): does
`calibrate` on real text set the forecast's scale better than on the texts it ships?

    python benchmarks/validity/pools.py probes && python benchmarks/validity/suite_v4_pools.py probes
    python benchmarks/validity/runner.py --suite benchmarks/.cache/forecast/v4-probes-real \\
        --out docs/validity/v11/probes --device cpu                   # the probes' SmolLM2 runs (10 jobs)
    python benchmarks/validity/design_probe_set.py   # -> docs/validity/v11/probe-set.{txt,json} (suites built)

design_scale.py and design_probes.py found that v3's 5 probes (the texts `calibrate` ships, written to a pattern)
set the body's gain on wiki 2.6 times what real corpora give, and that 3 to 8 real corpora drawn at random bring
a median 41-46% of the design candidates within ×2 against 26%. The candidate set is eight real texts by kind
(docs/validity/v11/probe-set-proposal.md), run on SmolLM2 as v3's probes were: each at 1 epoch, two at 10.

Fixed before any of the candidate probes' runs existed (2026-12-07, after v10's freeze in 0cdff7d):
- data: the plan-A ranking candidates of pools E to L, seed means, both old texts; v10 as landed (the library's
  forecast, `Summary.of`), calibrated by `score.calibrate` (kappa, the body's gain, term 7 fixed per old text
  as `forms.ADAPTATION`, the base loss from the probes) on (a) v3's 5 probes and (b) the candidate set's 10 runs;
- per (pool, old text) column: the Spearman of the total, the share within ×2; their means over the pools of each
  old text; the fitted kappa and gain;
- the rule: the candidate set is v11's probe set if, under (b), wiki's mean within ×2 is at least 0.40, code's is
  at most 0.05 below (a)'s, and each old text's mean Spearman is at most 0.05 below (a)'s. Otherwise it is not
  taken, and what failed is written down.
Nothing here is held out.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data
import design_v8 as v8
import design_v10 as first
import score
import suite_v4_pools as pool_recipes
from design import Transcript, spearman

OUT = data.REPO / "docs" / "validity" / "v11" / "probe-set.txt"
RAW = OUT.with_suffix(".json")  # every candidate's measured and forecast totals under both calibrations
RUNS = data.REPO / "docs" / "validity" / "v11" / "probes" / "smollm2-runs.jsonl"
CALIBRATIONS = ("(a) v3's 5 probes", "(b) the candidate set")
WIKI_WITHIN, CODE_DROP, ORDER_DROP = 0.40, 0.05, 0.05  # the rule's bounds


def forecasts(log) -> list[dict]:
    """Every plan-A candidate of pools E to L on both old texts, its measured total and v10's under each calibration."""
    from vocabrisk.risk.summary import Summary

    candidate = score.probe_runs(pool_recipes.OUT["probes"], RUNS)
    rows = []
    for label in first.POOLS:
        runs = v8._runs(log, label)
        real = runs.profiled(*candidate)
        for old in v8.OLDS:
            fitted = score.calibrate(runs, old), score.calibrate(runs, old, real)
            calibrations = dict(zip(CALIBRATIONS, fitted, strict=True))
            for name in runs.names("A"):
                profile, measured = runs.profiles[name, old], runs.value(name, "A", old, "total")
                row = {"pool": label, "old": old, "run": name, "measured": measured}
                for key, calibration in calibrations.items():
                    row[key] = Summary.of(profile, runs.plans["A"], calibration).forecast.total
                    row[key + " kappa, gain"] = [calibration.kappa, calibration.body_gain]
                rows.append(row)
        log(f"{label}: {sum(r['pool'] == label for r in rows)} candidate rows")
    return rows


def main() -> int:
    if not RUNS.exists():
        print(f"{RUNS}: the candidate probes have not been run (see this file's docstring)")
        return 2
    say = Transcript()
    rows = forecasts(lambda text: print(text, flush=True))
    say("# Output of benchmarks/validity/design_probe_set.py: design data only (pools E to L: all seen)")
    say("# per pool: Spearman of the total / share within x2; then the means over the pools")
    means = {}
    for old in v8.OLDS:
        say()
        say(f"{old}:")
        for key in CALIBRATIONS:
            cells, orders, shares = [], [], []
            for label in first.POOLS:
                mine = [r for r in rows if r["pool"] == label and r["old"] == old]
                forecast, measured = [r[key] for r in mine], [r["measured"] for r in mine]
                order = spearman(forecast, measured)
                share = float(np.mean(score.within(forecast, measured, 2.0)))
                orders.append(order)
                shares.append(share)
                cells.append(f"{label} {order:+.2f}/{share:.0%}")
            means[old, key] = (float(np.mean(orders)), float(np.mean(shares)))
            kappa, gain = next(r[key + " kappa, gain"] for r in rows if r["old"] == old)
            say(f"   {key}: {' '.join(cells)}")
            say(f"      mean {means[old, key][0]:+.2f} / {means[old, key][1]:.0%}; kappa {kappa:.3g}, gain {gain:.4g}")
    a, b = CALIBRATIONS
    failed = []
    if means["wiki", b][1] < WIKI_WITHIN:
        failed.append(f"wiki within x2 {means['wiki', b][1]:.0%} < {WIKI_WITHIN:.0%}")
    if means["code", b][1] < means["code", a][1] - CODE_DROP:
        failed.append(f"code within x2 {means['code', b][1]:.0%}, more than {CODE_DROP:.2f} below (a)")
    failed += [
        f"{old} order {means[old, b][0]:+.2f}, more than {ORDER_DROP:.2f} below (a)"
        for old in v8.OLDS
        if means[old, b][0] < means[old, a][0] - ORDER_DROP
    ]
    say()
    say("the rule: " + ("the candidate set is v11's probe set" if not failed else "not taken: " + "; ".join(failed)))
    say.write(OUT)
    RAW.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
