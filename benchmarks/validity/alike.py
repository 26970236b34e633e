"""A design probe of B, the body's "how alike" (docs/validity/v4/PROTOCOL-alike.md): seen runs only.

    python benchmarks/validity/alike.py   # -> docs/validity/v4/alike.txt

Each candidate replaces B in the landed body term S · B · ln(1 + R); the head and the adaptation stay as
landed (the width rule's kappa, SmolLM2's adaptation), and the body's gain is refitted per candidate as the
landed one was: the median over v3's plan-A candidates of (measured total - head + adaptation) / term.
Spearman with the measured body (total - head-only) and total, per old text, on v3's 41 candidates (design)
and v4's 16 (held out once, seen since). Texts are tokenized document by document as the scan does
(no special tokens), so 2-grams never cross a document.
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

OUT = data.REPO / "docs" / "validity" / "v4" / "alike.txt"


def documents(path: Path, tokenizer) -> list[np.ndarray]:
    texts = data.read_jsonl(path)
    return [np.asarray(e.ids, dtype=np.int64) for e in tokenizer.encode_batch(texts, add_special_tokens=False)]


def coefficient(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> float:
    """Σ √(p q) of two distributions given as (sorted keys, counts)."""
    _, i, j = np.intersect1d(a[0], b[0], assume_unique=True, return_indices=True)
    return float(np.sum(np.sqrt(a[1][i] / a[1].sum() * b[1][j] / b[1].sum())))


def grams(docs: list[np.ndarray], n: int, vocab: int, keep: np.ndarray | None = None):
    """The (keys, counts) of the n-grams inside each document (of KEEP tokens only, where given)."""
    keys = []
    for d in docs:
        if keep is not None:
            d = d[keep[d]]
        if len(d) >= n:
            k = d[: len(d) - n + 1].copy()
            for step in range(1, n):
                k = k * vocab + d[step : len(d) - n + 1 + step]
            keys.append(k)
    keys, counts = np.unique(np.concatenate(keys), return_counts=True)
    return keys, counts.astype(np.float64)


def steps_alike(stream: np.ndarray, vocab: int, seq_len: int, batch: int, pairs: int = 256) -> float:
    """C: the mean coefficient between two training steps' token distributions, each step BATCH random
    windows of SEQ_LEN tokens of STREAM, as the runner draws them (`vocabrisk.verify.data.sample_batch`)."""
    rng = np.random.default_rng(0)
    starts = rng.integers(0, len(stream) - seq_len + 1, size=(pairs, 2, batch))
    values = []
    for a, b in starts:
        p, q = (np.bincount(np.concatenate([stream[s : s + seq_len] for s in w]), minlength=vocab) for w in (a, b))
        values.append(np.sum(np.sqrt(p * q)) / (batch * seq_len))
    return float(np.mean(values))


def probe() -> int:
    from tokenizers import Tokenizer

    from vocabrisk.risk.calibration import Calibration
    from vocabrisk.risk.summary import Summary

    say = Transcript()

    sets = {"v3 (design)": score.Runs.v3(print), "v4 (held out once, seen)": score.Runs.v4(print, "heldout")}
    first = next(iter(sets.values()))
    tokenizer = Tokenizer.from_file(str(first.loaded.files.tokenizer_json))
    vocab = tokenizer.get_vocab_size()
    content = np.array([any(ch.isalpha() for ch in tokenizer.decode([i])) for i in range(vocab)])
    calibration = Calibration(adaptation=score.SMOLLM2_ADAPTATION)
    olds = first.suite["old"]
    old_docs = {o: documents(score.reference(first.folder, o), tokenizer) for o in olds}
    old_stats = {o: (grams(d, 1, vocab), grams(d, 2, vocab), grams(d, 1, vocab, content)) for o, d in old_docs.items()}

    cases = {}  # (set, old) -> list of dicts
    for label, runs in sets.items():
        names = runs.names("A")
        stream_tokens = np.load(runs.folder / "tokens.npz")
        a_plan = runs.suite["plans"]["A"]
        for name in names:
            stream = stream_tokens[f"{runs.info[name]['file']}/train"].reshape(-1).astype(np.int64)
            c_steps = steps_alike(stream, vocab, a_plan["seq_len"], a_plan["tokens_per_step"] // a_plan["seq_len"])
            docs = documents(runs.folder / "texts" / f"{runs.info[name]['file']}.jsonl", tokenizer)
            mine = grams(docs, 1, vocab), grams(docs, 2, vocab), grams(docs, 1, vocab, content)
            for old in olds:
                f = Summary.of(runs.profiles[name, old], runs.plans["A"], calibration).forecast
                b1, b2, bc = (coefficient(m, o) for m, o in zip(mine, old_stats[old], strict=True))
                cases.setdefault((label, old), []).append({
                    "name": name, "head": f.head, "adaptation": f.adaptation, "unit": f.terms.unit,
                    "landed_B": f.terms.alike, "R": f.terms.repeats, "E": f.epochs, "C": c_steps,
                    "B": b1, "B2": b2, "Bc": bc,
                    "total": runs.value(name, "A", old, "total"), "head_only": runs.value(name, "A", old, "head_only"),
                })  # fmt: skip
    candidates = {
        "B": lambda c: c["landed_B"],
        "B2": lambda c: c["B2"],
        "Bc": lambda c: c["Bc"],
        "B²": lambda c: c["landed_B"] ** 2,
        "√B": lambda c: c["landed_B"] ** 0.5,  # the addendum's candidate, fixed after the four above were scored
        "B·C": lambda c: c["landed_B"] * c["C"],  # addendum 2's: how alike the plan's steps are
        "B·C / ln(1+R)": lambda c: c["landed_B"] * c["C"] / np.log1p(c["R"]),
        # addendum 3's: the plan's whole-sequence repetition (epochs E) beside R's local one
        "B·(ln(1+R) + ln E)": lambda c: c["landed_B"] * (1 + np.log(max(1.0, c["E"])) / np.log1p(c["R"])),
        "B·(1 + ln E)": lambda c: c["landed_B"] * (1 + np.log(max(1.0, c["E"]))),
    }
    say("# Output of benchmarks/validity/alike.py (docs/validity/v4/PROTOCOL-alike.md): seen runs only, design")
    say(f"content tokens (text holds a letter): {int(content.sum())} of {vocab}")
    say("check: B recomputed from the texts against the landed profile's B, largest difference "
        f"{max(abs(c['B'] - c['landed_B']) for cs in cases.values() for c in cs):.3f}")  # fmt: skip
    design = [c for (label, _), cs in cases.items() if label.startswith("v3") for c in cs]
    for key, term in candidates.items():
        unit = lambda c, term=term: c["unit"] * term(c) / c["landed_B"] if c["landed_B"] > 0 else 0.0  # noqa: E731
        gain = float(np.median([(c["total"] - c["head"] + c["adaptation"]) / unit(c) for c in design if unit(c) > 0]))
        say(f"\n{key}: body gain {gain:.4g}; Spearman with the measured body / total")
        for (label, old), cs in cases.items():
            body = [c["total"] - c["head_only"] for c in cs]
            total = [c["head"] + gain * unit(c) - c["adaptation"] for c in cs]
            say(f"  {label:>26} {old:>4} ({len(cs)}): {spearman([unit(c) for c in cs], body):+.2f} / "
                f"{spearman(total, [c['total'] for c in cs]):+.2f}")  # fmt: skip
    say("\nper corpus (v4, seen): measured body, B, B2, Bc, C, R")
    for (label, old), cs in cases.items():
        if label.startswith("v4"):
            for c in sorted(cs, key=lambda c: c["total"] - c["head_only"]):
                say(f"  {old:>4} {c['name']:>46} {c['total'] - c['head_only']:+.3f}  "
                    f"{c['landed_B']:.3f} {c['B2']:.3f} {c['Bc']:.3f} {c['C']:.3f} {c['R']:.1f}")  # fmt: skip
    say.write(OUT)
    return 0


def main() -> int:
    """The probe as it ran, on v4's forecast (v5 without its e^-H factor: `forms.as_v4`)."""
    with forms.as_v4():
        return probe()


if __name__ == "__main__":
    sys.exit(main())
