"""How predictable a corpus's next token is from the one before: its exact 2-gram counts, while they fit.

The forecast's body term (v5) reads `H = H(next | previous)`, the plug-in entropy of a token given the
token before it inside a document, in nats: `H(2-grams) - H(tokens)`. Text the model can learn to
continue with confidence (tables, word lists, templates, a small corpus repeated) has a low H; varied
prose the highest. A corpus of low H is fitted consistently, so the network's steps on it add up.

The counts are exact, kept as sorted 2-gram keys and their counts, while the corpus has at most CAPACITY
distinct 2-grams (16 MB; about a few million tokens of varied text, every benchmark corpus); past that the
sample says it overflowed and holds nothing, and the forecast takes H as unmeasured and says so. Samples of
parts merge into the whole's whatever the order or number of workers: the whole overflows exactly when it
has more than CAPACITY distinct 2-grams, and a part that overflowed is part of a whole that does. Two
sampling schemes were tried on real text and neither kept H within 10% at a quarter of it (`docs/VALIDITY.md`,
"v5"): sampled 2-gram types make H a difference of two large sums, sampled previous tokens miss code's few
heavy contexts; sampled documents would not bound the memory of a single long one. 2-grams never cross a
document's end or hold a special id; a long document counted in pieces gets the counts of the whole.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

CAPACITY = 1 << 20  # distinct 2-grams counted exactly: 16 MB of keys and counts


def _empty_keys() -> np.ndarray:
    return np.zeros(0, dtype=np.uint64)


def _empty_counts() -> np.ndarray:
    return np.zeros(0, dtype=np.int64)


@dataclass
class ContextSample:
    """The 2-grams (KEYS: previous id << 32 | next id, sorted) with their COUNTS, and PAIRS, every 2-gram
    counted; none kept where the distinct 2-grams OVERFLOWED the capacity."""

    keys: np.ndarray = field(default_factory=_empty_keys)
    counts: np.ndarray = field(default_factory=_empty_counts)
    pairs: int = 0
    overflowed: bool = False

    def __add__(self, other: ContextSample) -> ContextSample:
        pairs = self.pairs + other.pairs
        if self.overflowed or other.overflowed:
            return ContextSample(pairs=pairs, overflowed=True)
        big, small = (self, other) if self.keys.size >= other.keys.size else (other, self)
        # both sorted: the smaller one's keys found in the larger's (a batch merging into a whole corpus's
        # counts is small), the rest inserted in order, without sorting the larger again
        at = np.searchsorted(big.keys, small.keys)
        found = at < big.keys.size
        found[found] = big.keys[at[found]] == small.keys[found]
        counts = big.counts.copy()
        np.add.at(counts, at[found], small.counts[found])
        new = ~found
        keys = np.insert(big.keys, at[new], small.keys[new])
        return _kept(keys, np.insert(counts, at[new], small.counts[new]), pairs)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ContextSample)
            and (self.pairs, self.overflowed) == (other.pairs, other.overflowed)
            and np.array_equal(self.keys, other.keys)
            and np.array_equal(self.counts, other.counts)
        )

    def entropy(self, token_counts: np.ndarray) -> float | None:
        """H(next | previous) in nats: H(2-grams) less H(tokens) of TOKEN_COUNTS, never below 0; None without a
        2-gram or where the sample overflowed."""
        if self.pairs <= 0 or self.overflowed:
            return None
        kept = self.counts.astype(np.float64)
        joint = math.log(self.pairs) - float(np.sum(kept * np.log(kept))) / self.pairs
        tokens = np.asarray(token_counts, dtype=np.float64)
        tokens = tokens[tokens > 0]
        single = math.log(tokens.sum()) - float(np.sum(tokens * np.log(tokens))) / tokens.sum()
        return max(0.0, joint - single)


def sample(ids: np.ndarray, lengths, special: np.ndarray | None = None) -> ContextSample:
    """The 2-grams inside each document of IDS (documents of LENGTHS, one after another), leaving out any that
    holds a SPECIAL id (True per id): the tokenizer's template, not the text."""
    ids = np.asarray(ids)
    if len(ids) < 2:
        return ContextSample()
    keep = np.ones(len(ids) - 1, dtype=bool)
    ends = np.cumsum(np.asarray(lengths, dtype=np.int64)) - 1  # a document's last id starts no 2-gram
    keep[ends[(ends >= 0) & (ends < keep.size)]] = False
    if special is not None and special.any():
        marked = special[ids.astype(np.intp, copy=False)]
        keep &= ~(marked[:-1] | marked[1:])
    wide = ids.astype(np.uint64)
    keys = ((wide[:-1] << np.uint64(32)) | wide[1:])[keep]
    unique, counts = np.unique(keys, return_counts=True)
    return _kept(unique, counts.astype(np.int64), int(keys.size))


def _kept(keys: np.ndarray, counts: np.ndarray, pairs: int) -> ContextSample:
    if keys.size > CAPACITY:
        return ContextSample(pairs=pairs, overflowed=True)
    return ContextSample(keys, counts, pairs)
