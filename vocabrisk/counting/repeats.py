"""How much a corpus repeats itself: a mergeable sketch of its 3-gram counts.

The forecast's body term reads `collision = Σ_g f(g)²` over the corpus's 3-grams (the chance that
two random positions start the same 3-gram): a plan of N tokens revisits each of its 3-grams
N · collision times. Templated, narrow and repeated text has a high collision; varied prose the
lowest, 1 / (number of 3-grams), which one epoch of it turns into one revisit.

Exact 3-gram counts of a large corpus would not fit in memory, so a count sketch (Charikar et al.,
AMS's F2 estimator) keeps SKETCH_WIDTH signed buckets: each 3-gram adds ±1 to one bucket, and
Σ bucket² estimates Σ count² without bias, with a relative error of about √(2 / SKETCH_WIDTH)
(1%). Sketches of any parts of a corpus add, like its counts, so every engine, worker count and
resumed scan gives the same sketch. 3-grams never cross a document's end; a long document counted in
pieces (`vocabrisk.counting.pieces`) gets the sketch of the whole.
"""

from __future__ import annotations

import numpy as np

SKETCH_WIDTH = 16384
_SHIFT = np.uint64(64 - 14)  # log2(SKETCH_WIDTH) top bits choose the bucket
_MIX = (np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))  # splitmix64's finaliser


def empty() -> np.ndarray:
    return np.zeros(SKETCH_WIDTH, dtype=np.int64)


def sketch(ids: np.ndarray, lengths, special: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """The sketch of the 3-grams inside each document of IDS (documents of LENGTHS, one after another).

    A 3-gram holding a SPECIAL id (True per id) is left out: it is the tokenizer's template (BOS, CLS,
    SEP), not the text, and a document counted in pieces, encoded without it, gets the same sketch.
    """
    if len(ids) < 3:
        return empty(), 0
    if special is not None:
        marked = special[np.asarray(ids, dtype=np.intp)]
        valid = ~(marked[:-2] | marked[1:-1] | marked[2:])
    else:
        valid = np.ones(len(ids) - 2, dtype=bool)
    ids = np.asarray(ids).astype(np.uint64, copy=False)
    ends = np.cumsum(np.asarray(lengths, dtype=np.int64))
    crossing = np.concatenate([ends - 2, ends - 1])  # 3-grams that start in one document and end in the next
    valid[crossing[(crossing >= 0) & (crossing < valid.size)]] = False
    with np.errstate(over="ignore"):
        key = (ids[:-2] * np.uint64(0x100000001B3) ^ ids[1:-1]) * np.uint64(0x100000001B3) ^ ids[2:]
        key = key[valid]
        key ^= key >> np.uint64(30)
        key *= _MIX[0]
        key ^= key >> np.uint64(27)
        key *= _MIX[1]
        key ^= key >> np.uint64(31)
    bucket = (key >> _SHIFT).astype(np.intp)
    sign = np.where(key & np.uint64(1), 1.0, -1.0)
    return np.bincount(bucket, weights=sign, minlength=SKETCH_WIDTH).astype(np.int64), int(key.size)


def collision(buckets: np.ndarray, trigrams: int) -> float | None:
    """Σ f(g)² estimated from a sketch of TRIGRAMS 3-grams; None without any, never below 1 / TRIGRAMS."""
    if trigrams <= 0:
        return None
    squares = float(np.sum(np.asarray(buckets, dtype=np.float64) ** 2))
    return max(squares / float(trigrams) ** 2, 1.0 / trigrams)
