"""A design probe of the body's transfer (docs/validity/v5/PROTOCOL-pull.md): seen runs only.

    python benchmarks/validity/pull_probe.py   # -> docs/validity/v5/pull-probe.txt

For each plan-A candidate of v3 and pools E, F, G and H, and each old text: B (the landed unigram overlap)
and three statistics of the corpus's pull on the old text's own 2-gram contexts (P1 mass-weighted
disagreement, P2 trained-context disagreement, P3 trained-context share). Spearman of each alone with the
measured body (total - head-only), and of v5's body with each in B's place (S·X·ln(1+R)·e^-H, the gain
refitted on v3) with the measured total. Every set is seen: design, never a result.
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
from alike import documents
from design import Transcript, spearman
from design_v5 import pace, refitted

OUT = data.REPO / "docs" / "validity" / "v5" / "pull-probe.txt"
OLDS = ("wiki", "code")


def pairs(docs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Each 2-gram inside a document, as (previous, next) id arrays."""
    kept = [d for d in docs if len(d) >= 2]
    return np.concatenate([d[:-1] for d in kept]), np.concatenate([d[1:] for d in kept])


def pulls(corpus: list[np.ndarray], old: tuple[np.ndarray, np.ndarray], vocab: int) -> dict[str, float]:
    """P1, P2, P3 of the corpus's 2-grams on the old text's 2-gram positions OLD."""
    prev, nxt = pairs(corpus)
    context = np.bincount(prev, minlength=vocab).astype(np.float64)  # n(a)
    joint, counts = np.unique(prev * vocab + nxt, return_counts=True)  # n(a, b)
    a, b = old
    keys = a * vocab + b
    at = np.searchsorted(joint, keys)
    found = at < joint.size
    found[found] = joint[at[found]] == keys[found]
    n_ab = np.where(found, counts[np.minimum(at, joint.size - 1)], 0).astype(np.float64)
    n_a = context[a]
    trained = n_a > 0
    disagree = np.where(trained, 1.0 - n_ab / np.maximum(n_a, 1.0), 0.0)
    return {
        "P1": float(np.mean(n_a / prev.size * disagree)),
        "P2": float(np.mean(disagree)),
        "P3": float(np.mean(trained)),
    }


def cases(say) -> list[dict]:
    from tokenizers import Tokenizer

    from vocabrisk.risk.summary import Summary

    sets = {"v3": score.Runs.v3(say), "E": score.Runs.v4(say, "heldout"), "F": score.Runs.v4_pool(say, "F"),
            "G": score.Runs.v4_pool(say, "G"), "H": score.Runs.v4_pool(say, "H")}  # fmt: skip
    first = sets["v3"]
    tokenizer = Tokenizer.from_file(str(first.loaded.files.tokenizer_json))
    vocab = tokenizer.get_vocab_size()
    out = []
    for label, runs in sets.items():
        olds = {o: pairs(documents(score.reference(runs.folder, o), tokenizer)) for o in OLDS}
        calibrations = {o: score.calibrate(runs, o) for o in OLDS}
        for name in runs.names("A"):
            docs = documents(runs.folder / "texts" / f"{runs.info[name]['file']}.jsonl", tokenizer)
            for o in OLDS:
                f = Summary.of(runs.profiles[name, o], runs.plans["A"], calibrations[o]).forecast
                t = f.terms
                case = {"set": label, "old": o, "name": name, "head": f.head, "adaptation": f.adaptation,
                        "unit": t.unit, "S": t.starved, "B": t.alike, "R": t.repeats, "H": t.entropy,
                        "total": runs.value(name, "A", o, "total"),
                        "body": runs.value(name, "A", o, "total") - runs.value(name, "A", o, "head_only")}  # fmt: skip
                out.append(case | pulls(docs, olds[o], vocab))
    return out


def _main() -> int:
    say = Transcript()
    every = cases(print)
    sets = ("v3", "E", "F", "G", "H")
    columns = [(s, o) for o in OLDS for s in sets]
    say("# Output of benchmarks/validity/pull_probe.py: design data only (v3, pools E, F, G, H: all seen)")
    say("# docs/validity/v5/PROTOCOL-pull.md; plan A, seed means")
    header = f"{'':>34}  " + " ".join(f"{s + '-' + o:>7}" for s, o in columns)
    say()
    say("each statistic alone, Spearman with the measured body (total - head-only):")
    say(header)
    for key in ("B", "P1", "P2", "P3"):
        values = [spearman([c[key] for c in every if (c["set"], c["old"]) == col],
                           [c["body"] for c in every if (c["set"], c["old"]) == col]) for col in columns]  # fmt: skip
        say(f"{key:>34}  " + " ".join(f"{v:>+7.2f}" for v in values))
    say()
    say("v5's body with X in B's place (S·X·ln(1+R)·e^-H, gain refitted on v3), Spearman with the measured total:")
    say(header + "   better than B on both old texts")
    rows = {}
    for key in ("B", "P1", "P2", "P3"):

        def term(c, key=key):
            return pace(c) * c["S"] * c[key] * math.log1p(c["R"]) * math.exp(-c["H"])

        values = [refitted(every, term, column) for column in columns]
        rows[key] = values
        better = sum(all(values[columns.index((s, o))] > rows["B"][columns.index((s, o))] for o in OLDS) for s in sets)
        say(f"{key:>34}  " + " ".join(f"{v:>+7.2f}" for v in values) + (f"   {better} of 5" if key != "B" else ""))
    say()
    say("per candidate (set, old, name: measured body, B, P1, P2, P3):")
    for c in every:
        say(f"  {c['set']:>2} {c['old']:>4} {c['name']:<40} {c['body']:+.3f}  B {c['B']:.3f}  "
            f"P1 {c['P1']:.4f}  P2 {c['P2']:.3f}  P3 {c['P3']:.3f}")  # fmt: skip
    say.write(OUT)
    return 0


def main() -> int:
    """As it ran, on v5's forecast (`forms.as_v5`: the v6 library with v5's body term put back)."""
    with forms.as_v5():
        return _main()


if __name__ == "__main__":
    sys.exit(main())
