"""A design probe of the body's term on every seen plan-A candidate (v3, pool E, pool F): not a result.

    python benchmarks/validity/body_probe.py   # -> docs/validity/v4/body-probe.txt

Pool F's per-run table showed three ways the landed body S · B · ln(1 + R) goes wrong: a smaller corpus
repeated over ten epochs forgets two to ten times more than at one epoch while R (3-gram revisits at a
fixed token count) barely moves; a corpus the base tokenizer compresses badly (another script) forgets
although B ≈ 0 leaves it no body; and text of another kind than the old text is over-forecast. Each form
below states one mechanism for one of them. The head and the adaptation stay as landed (each set's
calibration on v3's probes); the body's gain is refitted per form as the landed one was (the median over
v3's candidates of (measured total - head + adaptation) / term), and the one further constant of a form
is stepped over a few values, not fitted. Reported: Spearman of the forecast total with the measured
total, per set and old text. All of these runs have been seen, and the forms and the rule were written
down after a first look at these same numbers: this records an exploration, it tests nothing. A form
would have been worth pool G's held-out test (PROTOCOL-pool-g.md) only if its mean over the six columns
beat the landed body's by 0.05 with no column 0.05 worse; none does.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data
import forms
import score
from design import Transcript, spearman

OUT = data.REPO / "docs" / "validity" / "v4" / "body-probe.txt"


def bytes_per_token(texts: list[str], tokenizer) -> float:
    """UTF-8 bytes per token, documents encoded as the scan encodes them (no special tokens)."""
    tokens = sum(len(e.ids) for e in tokenizer.encode_batch(texts, add_special_tokens=False))
    return sum(len(t.encode("utf-8")) for t in texts) / max(tokens, 1)


def cases(log) -> list[dict]:
    from tokenizers import Tokenizer

    from vocabrisk.risk.summary import Summary

    sets = {"v3": score.Runs.v3(log), "E": score.Runs.v4(log, "heldout"), "F": score.Runs.v4_pool(log, "F")}
    tokenizer = Tokenizer.from_file(str(sets["v3"].loaded.files.tokenizer_json))
    olds = sets["v3"].suite["old"]
    old_bpt = {o: bytes_per_token(data.read_jsonl(score.reference(sets["v3"].folder, o)), tokenizer) for o in olds}
    out = []
    for label, runs in sets.items():
        calibrations = {old: score.calibrate(runs, old) for old in olds}
        for name in runs.names("A"):
            bpt = bytes_per_token(
                data.read_jsonl(runs.folder / "texts" / f"{runs.info[name]['file']}.jsonl"), tokenizer
            )
            for old in olds:
                f = Summary.of(runs.profiles[name, old], runs.plans["A"], calibrations[old]).forecast
                body = f.terms
                out.append({
                    "set": label, "old": old, "name": name, "head": f.head, "adaptation": f.adaptation,
                    "landed": f.total, "unit": body.unit, "S": body.starved, "B": body.alike, "R": body.repeats,
                    "E": f.epochs, "U": max(0.0, 1 - bpt / old_bpt[old]),
                    "total": runs.value(name, "A", old, "total"),
                })  # fmt: skip
    return out


def bodies() -> dict:
    """Each form's body term, in units of the landed one's (`unit` = lr · relaxation · S · B · ln(1 + R))."""

    def pace(c: dict) -> float:  # lr · relaxation, the part of the landed term every form keeps
        return c["unit"] / (c["S"] * c["B"] * np.log1p(c["R"])) if c["unit"] > 0 else 0.0

    def epochs(c: dict) -> float:
        return float(np.log(max(1.0, c["E"])))

    out = {"landed: S·B·ln(1+R)": lambda c: c["unit"]}
    # Repetition of the whole sequence (epochs E beside R's local 3-gram revisits): each pass sends the same
    # gradients again, which Adam adds up as a consistent direction instead of averaging them away.
    out["S·B·ln(1+R)·(1 + ln E)"] = lambda c: c["unit"] * (1 + epochs(c))
    # Memorisation, not confined to contexts alike to the corpus: fitting the same sequences again moves
    # the shared network whatever the old text looks like (additive, without B).
    for m in (0.1, 0.3, 1.0):
        out[f"S·B·ln(1+R) + {m}·S·ln E"] = lambda c, m=m: c["unit"] + m * pace(c) * c["S"] * epochs(c)
    # A non-local share of the body: some of what the network learns reaches every context (B's floor b0).
    for b0 in (0.05, 0.1, 0.3):
        out[f"S·(B + {b0})·ln(1+R)"] = lambda c, b0=b0: c["unit"] * (c["B"] + b0) / c["B"] if c["B"] > 0 else 0.0
    # Unfamiliarity U: how much worse than the old text the base tokenizer (trained on the base model's own
    # mix) compresses the corpus, 1 - bytes per token ÷ the old text's; learning unfamiliar text moves more
    # of the network than B's overlap says.
    for u in (0.1, 0.2, 0.4):
        out[f"S·(B + {u}·U)·ln(1+R)"] = lambda c, u=u: c["unit"] * (c["B"] + u * c["U"]) / c["B"] if c["B"] else 0.0
    return out


def probe() -> int:
    say = Transcript()

    every = cases(print)
    columns = [(s, o) for s in ("v3", "E", "F") for o in ("wiki", "code")]
    say("# Output of benchmarks/validity/body_probe.py: seen runs only, design (not a result)")
    say("Spearman of the forecast total with the measured total (plan A, seed means); gain refitted per form")
    say(f"{'form':>34}  " + " ".join(f"{s + '-' + o:>7}" for s, o in columns) + "     mean")

    def row(label: str, values: dict) -> None:
        say(
            f"{label:>34}  "
            + " ".join(f"{values[k]:>+7.2f}" for k in columns)
            + f"  {np.mean(list(values.values())):+.3f}"
        )

    row("landed, calibrated (as scored)", {(s, o): spearman(
        [c["landed"] for c in every if (c["set"], c["old"]) == (s, o)],
        [c["total"] for c in every if (c["set"], c["old"]) == (s, o)]) for s, o in columns})  # fmt: skip
    for label, term in bodies().items():
        values = {}
        for old in ("wiki", "code"):
            design = [c for c in every if c["old"] == old and c["set"] == "v3" and term(c) > 0]
            gain = float(np.median([(c["total"] - c["head"] + c["adaptation"]) / term(c) for c in design]))
            for s in ("v3", "E", "F"):
                cs = [c for c in every if (c["set"], c["old"]) == (s, old)]
                values[s, old] = spearman(
                    [c["head"] + gain * term(c) - c["adaptation"] for c in cs], [c["total"] for c in cs]
                )
        row(label, values)
    say.write(OUT)
    return 0


def main() -> int:
    """The probe as it ran, on v4's forecast (v5 without its e^-H factor: `forms.as_v4`)."""
    with forms.as_v4():
        return probe()


if __name__ == "__main__":
    sys.exit(main())
