"""The five-old-text runs, scored as docs/validity/v9/PROTOCOL-old-texts.md fixed before they ran (design data).

    python benchmarks/validity/old_texts.py    # -> docs/validity/v9/old-texts/results.txt

First the check: each run's wiki and code totals beside the seen run it repeats (same tokens, plan, seed). Then,
per old text over the candidates: the Spearman of the measured total with B, the never-seen share, S, H₁ and
v8's forecast calibrated on the probes measured on that old text; the transfer index (B's Spearman less the
never-seen share's); and the old text's properties that need no fine-tuning.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import forms
import score
import suite_old_texts as suite_recipe
import suite_v2 as v2
from design import Transcript, spearman

HOME = score.V4.parent / "v9" / "old-texts"
RUNS = HOME / "smollm2-runs.jsonl"
SEEN = {  # where each set's seen runs are: the run each old-texts run repeats
    "v3": score.V3_RUNS,
    "E": score.V4_RUNS,
    **{p: score.V4 / f"pool-{p.lower()}" / "smollm2-runs.jsonl" for p in "FGHIJK"},
}


def seen_totals(suite: dict) -> dict[str, dict[str, float]]:
    """{run: {old: total}} of the seen run (plan A, seed 0) each run of the suite repeats (each log read once)."""
    wanted = {(run["from"].split(":")[0], run["name"]) for run in suite["runs"]}
    out = {}
    for label in sorted({label for label, _ in wanted}):
        for record in score.read_log(SEEN[label]):
            if (label, record["run"]) in wanted and (record["regime"], record["seed"]) == ("A", 0):
                out[record["run"]] = {old: m["total"] for old, m in record["old"].items()}
    return out


def old_properties(profile, prior: np.ndarray) -> dict[str, float]:
    """What an old text is, without fine-tuning: its token entropy, its self-likeness, and the share of its
    tokens among the 1,000 rows the base model uses most (by the prior)."""
    from vocabrisk.risk.forecast import self_alike

    ids = profile.old_text.ids
    counts = np.bincount(ids, minlength=len(prior)).astype(np.float64)
    p = counts[counts > 0] / counts.sum()
    top = np.argsort(prior)[::-1][:1000]
    return {
        "token entropy": float(-(p * np.log(p)).sum()),
        "self-likeness": self_alike(profile.old_text, len(prior)),
        "top-1000 share": float(counts[top].sum() / counts.sum()),
    }


def five_old_texts(log=print) -> tuple[dict, list[dict], score.Runs]:
    """The five-old-text suite, its run records, and its runs as the scorer reads them (the probes apart)."""
    suite = json.loads((suite_recipe.OUT / "suite.json").read_text())
    records = list(score.read_log(RUNS))
    probes = [r for r in records if r["role"] == "probe"]
    candidate = lambda r: r["role"] != "probe"  # noqa: E731
    runs = score.Runs(log, suite_recipe.OUT, suite, records, candidate, source=RUNS, model=str(v2.smollm2_gguf()),
                      split="every", probes=(probes, suite_recipe.OUT, suite))  # fmt: skip
    return suite, records, runs


def main() -> int:
    from vocabrisk.risk.exposure import never_seen_share
    from vocabrisk.risk.summary import Summary

    say = Transcript()
    suite, records, runs = five_old_texts()
    probes = [r for r in records if r["role"] == "probe"]
    olds = suite["old"]
    say("# Output of benchmarks/validity/old_texts.py: design data (docs/validity/v9/PROTOCOL-old-texts.md)")
    say(f"{len(records)} runs measured ({len(probes)} probes); plan A, seed 0; old texts: {', '.join(olds)}")
    say()
    say("1. The check: each run's totals beside the seen run it repeats (wiki, code):")
    seen = seen_totals(suite)
    for r in records:
        before = seen.get(r["run"], {})
        say(f"   {r['run']:>28}: " + ", ".join(
            f"{r['old'][o]['total']:+.3f} (seen {before[o]:+.3f})" if o in before else f"{r['old'][o]['total']:+.3f}"
            for o in ("wiki", "code")))  # fmt: skip
    say()
    stats = {o: {} for o in olds}
    props = {}
    for old in olds:
        calibration = score.calibrate(runs, old)
        rows = []
        for (name, plan), measured in sorted(runs.measured.items()):
            profile = runs.profiles[name, old]
            summary = Summary.of(profile, runs.plans[plan], calibration)
            f = summary.forecast
            rows.append({"total": measured[0]["old"][old]["total"], "B": f.terms.alike, "never-seen": never_seen_share(
                profile), "S": f.terms.starved, "H1": f.terms.entropy, "v8": f.total})  # fmt: skip
            if old not in props:
                props[old] = old_properties(profile, summary.risk.prior) | {
                    "base loss": measured[0]["old"][old]["base"]
                }
        total = [r["total"] for r in rows]
        for key in ("B", "never-seen", "S", "H1", "v8"):
            stats[old][key] = spearman([r[key] for r in rows], total)
        stats[old]["transfer index"] = stats[old]["B"] - stats[old]["never-seen"]
        stats[old]["mean total"] = float(np.mean(total))
        stats[old]["v8 gain"] = calibration.body_gain
    say(
        f"2. Per old text, over the {len(runs.measured)} candidates: Spearman of the measured total with each statistic"
    )
    keys = ("B", "never-seen", "S", "H1", "v8", "transfer index", "mean total")
    say(f"{'':>8}" + "".join(f"{k:>16}" for k in keys) + f"{'v8 gain':>12}")
    for old in olds:
        say(f"{old:>8}" + "".join(f"{stats[old][k]:>+16.2f}" for k in keys) + f"{stats[old]['v8 gain']:>12.3g}")
    say()
    say("3. The old texts' properties (no fine-tuning), and their order against the transfer index:")
    names = ("base loss", "token entropy", "self-likeness", "top-1000 share")
    say(f"{'':>8}" + "".join(f"{k:>16}" for k in names) + f"{'transfer index':>16}")
    for old in olds:
        say(f"{old:>8}" + "".join(f"{props[old][k]:>16.3f}" for k in names) + f"{stats[old]['transfer index']:>+16.2f}")
    index = [stats[o]["transfer index"] for o in olds]
    say("   Spearman with the transfer index over the five old texts (5 points: any order has chance 1/120):")
    say("   " + ", ".join(f"{k} {spearman([props[o][k] for o in olds], index):+.2f}" for k in names))
    say.write(HOME / "results.txt")
    return 0


if __name__ == "__main__":
    with forms.as_v8():  # its "v8" column is v8's, as the protocol fixed
        sys.exit(main())
