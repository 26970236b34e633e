"""How predictable a corpus's next token is from the one before: a mergeable sample of its 2-gram counts.

The forecast's body term (v5) reads `H = H(next | previous)`, the plug-in entropy of a token given the
token before it inside a document, in nats: `H(2-grams) - H(tokens)`. Text the model can learn to
continue with confidence (tables, word lists, templates, a small corpus repeated) has a low H; varied
prose the highest. A corpus of low H is fitted consistently, so the network's steps on it add up.

Exact 2-gram counts of a large corpus would not fit in memory, so the sample keeps the exact counts of
every 2-gram whose hash has its top LEVEL bits zero (a share 2^-LEVEL of the distinct 2-grams, chosen by
their content): when more than CAPACITY distinct ones are kept, LEVEL rises by one and the 2-grams above
the new threshold are dropped (adaptive distinct sampling, Gibbons 2001). Σ c ln c over all 2-grams is
then estimated by the kept ones' Σ c ln c · 2^LEVEL, without bias over the hash; a corpus with fewer
than CAPACITY distinct 2-grams (every benchmark corpus) is counted exactly. A thin sample is noisy, H
being a difference of two large sums (on the demo's sample corpora: 7% off at 1/2, 70% at 1/8); sampling
by the previous token instead, each kept token's entropy exact, is the next step for corpora far past
CAPACITY. Samples of any parts of a
corpus merge into the sample of the whole, whatever the order or number of workers. 2-grams never cross a
document's end or hold a special id; a long document counted in pieces gets the sample of the whole.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

CAPACITY = 1 << 19  # distinct 2-grams kept: 8 MB of keys and counts at most
_MIX = (np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))  # splitmix64's finaliser


def _empty_keys() -> np.ndarray:
    return np.zeros(0, dtype=np.uint64)


def _empty_counts() -> np.ndarray:
    return np.zeros(0, dtype=np.int64)


@dataclass
class ContextSample:
    """The kept 2-grams (KEYS: previous id << 32 | next id, sorted) with their exact COUNTS, at LEVEL, and
    PAIRS, every 2-gram counted (kept or not)."""

    keys: np.ndarray = field(default_factory=_empty_keys)
    counts: np.ndarray = field(default_factory=_empty_counts)
    level: int = 0
    pairs: int = 0

    def __add__(self, other: ContextSample) -> ContextSample:
        level = max(self.level, other.level)
        keys = np.concatenate([_kept(self.keys, level), _kept(other.keys, level)])
        counts = np.concatenate([self.counts[_below(self.keys, level)], other.counts[_below(other.keys, level)]])
        return _thinned(*_summed(keys, counts), level, self.pairs + other.pairs)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ContextSample)
            and (self.level, self.pairs) == (other.level, other.pairs)
            and np.array_equal(self.keys, other.keys)
            and np.array_equal(self.counts, other.counts)
        )

    def entropy(self, token_counts: np.ndarray) -> float | None:
        """H(next | previous) in nats: the estimated H(2-grams) less H(tokens) of TOKEN_COUNTS; None without a
        2-gram. Never below 0."""
        if self.pairs <= 0:
            return None
        kept = self.counts.astype(np.float64)
        plogp = float(np.sum(kept * np.log(kept))) * 2.0**self.level
        pairs = float(self.pairs)
        joint = math.log(pairs) - plogp / pairs
        tokens = np.asarray(token_counts, dtype=np.float64)
        tokens = tokens[tokens > 0]
        single = math.log(tokens.sum()) - float(np.sum(tokens * np.log(tokens))) / tokens.sum()
        return max(0.0, joint - single)


def sample(ids: np.ndarray, lengths, special: np.ndarray | None = None) -> ContextSample:
    """The sample of the 2-grams inside each document of IDS (documents of LENGTHS, one after another),
    leaving out any that holds a SPECIAL id (True per id): the tokenizer's template, not the text."""
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
    pairs = int(keys.size)
    unique, counts = np.unique(keys, return_counts=True)
    return _thinned(unique, counts.astype(np.int64), 0, pairs)


def _hash(keys: np.ndarray) -> np.ndarray:
    h = keys.copy()
    for shift, mix in ((30, _MIX[0]), (27, _MIX[1])):
        h ^= h >> np.uint64(shift)
        h *= mix
    return h ^ (h >> np.uint64(31))


def _below(keys: np.ndarray, level: int) -> np.ndarray:
    """Which KEYS a sample at LEVEL keeps: those whose hash has its top LEVEL bits zero."""
    if level == 0:
        return np.ones(keys.size, dtype=bool)
    return (_hash(keys) >> np.uint64(64 - level)) == 0


def _kept(keys: np.ndarray, level: int) -> np.ndarray:
    return keys[_below(keys, level)]


def _summed(keys: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """KEYS made unique and sorted, the COUNTS of equal keys added."""
    unique, inverse = np.unique(keys, return_inverse=True)
    return unique, np.bincount(inverse, weights=counts, minlength=unique.size).astype(np.int64)


def _thinned(keys: np.ndarray, counts: np.ndarray, level: int, pairs: int) -> ContextSample:
    """The sample at the lowest level from LEVEL up that keeps at most CAPACITY distinct 2-grams."""
    while keys.size > CAPACITY:
        level += 1
        below = _below(keys, level)
        keys, counts = keys[below], counts[below]
    return ContextSample(keys, counts, level, pairs)
