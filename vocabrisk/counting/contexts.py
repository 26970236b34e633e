"""How predictable a corpus's next token is from the one before: exact 2-gram counts of (a sample of) its documents.

The forecast's body term (v5) reads `H = H(next | previous)`, the plug-in entropy of a token given the
token before it inside a document, in nats: `H(2-grams) - H(tokens)`. Text the model can learn to
continue with confidence (tables, word lists, templates, a small corpus repeated) has a low H; varied
prose the highest. A corpus of low H is fitted consistently, so the network's steps on it add up.

The counts are exact, kept as sorted keys (the document's bucket, the previous id, the next id) and their
counts. While the corpus has at most CAPACITY distinct ones (16 MB; a few million tokens of varied text,
every benchmark corpus) every document is kept and H is the corpus's. Past that, documents are sampled by
their content: a document's bucket is the number of leading zero bits of a hash of its first 4,096
characters, so a share 2^-b of documents has a bucket of b or more, and the sample keeps the documents of
bucket LEVEL or more, LEVEL the lowest that fits. H is then the plug-in entropy of that sample (its tokens
taken as those that begin its 2-grams), what a plan of the sample's size would see (none, and no H, where
every document alone has more distinct 2-grams than CAPACITY): below the whole
corpus's by the plug-in's growth with size (on five corpora of `../shared/data`: 3-7% at a half of the
documents, 6-13% at a quarter, 12-20% at an eighth; `docs/VALIDITY.md`, "v5"). Samples of any parts merge
into the whole's whatever the order or number of workers. 2-grams never cross a document's end or hold a
special id; a long document counted in pieces gets the counts of the whole (the 2-grams of its pieces
before its first 4,096 characters have arrived are held until they have, `vocabrisk.counting.pieces`).
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field

import numpy as np

CAPACITY = 1 << 20  # distinct (bucket, 2-gram) keys counted exactly: 16 MB of keys and counts
HASHED_CHARS = 4096  # a document's bucket hashes its first characters
_ID_BITS = 29  # key: bucket (6 bits) | previous id (29) | next id (29); vocabularies are far below 2^29
_PAIR = np.uint64((1 << 2 * _ID_BITS) - 1)


def _empty_keys() -> np.ndarray:
    return np.zeros(0, dtype=np.uint64)


def _empty_counts() -> np.ndarray:
    return np.zeros(0, dtype=np.int64)


def bucket(text: str) -> int:
    """The document's bucket: leading zero bits of a 32-bit mix of the CRC-32 of its first HASHED_CHARS."""
    h = zlib.crc32(text[:HASHED_CHARS].encode("utf-8", "surrogatepass"))
    h = ((h ^ (h >> 16)) * 0x45D9F3B) & 0xFFFFFFFF  # spread CRC-32's low-entropy prefixes over the top bits
    h = ((h ^ (h >> 16)) * 0x45D9F3B) & 0xFFFFFFFF
    return 32 - (h ^ (h >> 16)).bit_length()


@dataclass
class ContextSample:
    """The kept documents' 2-grams (KEYS, sorted) with their COUNTS, at LEVEL (documents of bucket LEVEL or
    more), and PAIRS, every 2-gram counted, kept or not."""

    keys: np.ndarray = field(default_factory=_empty_keys)
    counts: np.ndarray = field(default_factory=_empty_counts)
    level: int = 0
    pairs: int = 0

    @property
    def sampled_pairs(self) -> int:
        return int(self.counts.sum())

    def __add__(self, other: ContextSample) -> ContextSample:
        level = max(self.level, other.level)
        big, small = (_at_level(self, level), _at_level(other, level))
        if big.keys.size < small.keys.size:
            big, small = small, big
        # both sorted: the smaller one's keys found in the larger's (a batch merging into a whole corpus's
        # counts is small), the rest inserted in order, without sorting the larger again
        at = np.searchsorted(big.keys, small.keys)
        found = at < big.keys.size
        found[found] = big.keys[at[found]] == small.keys[found]
        counts = big.counts.copy()
        counts[at[found]] += small.counts[found]  # the smaller's keys are unique, so are the places they land
        new = ~found
        keys = np.insert(big.keys, at[new], small.keys[new])
        return _thinned(keys, np.insert(counts, at[new], small.counts[new]), level, self.pairs + other.pairs)

    def in_bucket(self, bucket: int) -> ContextSample:
        """The counts of one document's 2-grams, counted before its bucket was known, in BUCKET."""
        keys = (self.keys & _PAIR) | (np.uint64(bucket) << np.uint64(2 * _ID_BITS))
        return ContextSample(keys, self.counts, self.level, self.pairs)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ContextSample)
            and (self.level, self.pairs) == (other.level, other.pairs)
            and np.array_equal(self.keys, other.keys)
            and np.array_equal(self.counts, other.counts)
        )

    def entropy(self, token_counts: np.ndarray) -> float | None:
        """H(next | previous) in nats, never below 0: H(2-grams) less H(tokens), the tokens TOKEN_COUNTS (the
        corpus's) where every document is kept, else the sample's tokens that begin a 2-gram; None without a
        2-gram kept."""
        if self.counts.size == 0:
            return None
        pairs, inverse = np.unique(self.keys & _PAIR, return_inverse=True)  # a 2-gram of several buckets, once
        joint = np.bincount(inverse, weights=self.counts, minlength=pairs.size)
        if self.level == 0:
            single = _entropy(np.asarray(token_counts, dtype=np.float64))
        else:
            _, first = np.unique(pairs >> np.uint64(_ID_BITS), return_inverse=True)
            single = _entropy(np.bincount(first, weights=joint))
        return max(0.0, _entropy(joint) - single)


def sample(ids: np.ndarray, lengths, buckets, special: np.ndarray | None = None, floor: int = 0) -> ContextSample:
    """The 2-grams inside each document of IDS (documents of LENGTHS, one after another, of BUCKETS), leaving
    out any that holds a SPECIAL id (True per id): the tokenizer's template, not the text. Documents of a
    bucket below FLOOR, the level the counts they join have reached, are counted in `pairs` only: the next
    merge would drop their keys, and sorting them is most of the sample's cost."""
    ids = np.asarray(ids)
    lengths = np.asarray(lengths, dtype=np.int64)
    if len(ids) < 2:
        return ContextSample()
    if ids.max() >= 1 << _ID_BITS:
        raise ValueError(f"token id {int(ids.max())} is past the 2^{_ID_BITS} ids a 2-gram key holds")
    keep = np.ones(len(ids) - 1, dtype=bool)
    ends = np.cumsum(lengths) - 1  # a document's last id starts no 2-gram
    keep[ends[(ends >= 0) & (ends < keep.size)]] = False
    if special is not None and special.any():
        marked = special[ids.astype(np.intp, copy=False)]
        keep &= ~(marked[:-1] | marked[1:])
    pairs = int(np.count_nonzero(keep))
    buckets = np.asarray(buckets, dtype=np.uint64)
    if floor:
        keep &= np.repeat(buckets >= floor, lengths)[:-1]
    wide = ids.astype(np.uint64)
    per_position = np.repeat(buckets, lengths)[:-1]
    keys = (per_position << np.uint64(2 * _ID_BITS)) | (wide[:-1] << np.uint64(_ID_BITS)) | wide[1:]
    unique, counts = np.unique(keys[keep], return_counts=True)
    return _thinned(unique, counts.astype(np.int64), floor, pairs)


def _entropy(counts: np.ndarray) -> float:
    counts = counts[counts > 0].astype(np.float64)
    total = counts.sum()
    return math.log(total) - float(np.sum(counts * np.log(counts))) / total


def _at_level(part: ContextSample, level: int) -> ContextSample:
    """PART with only its documents of bucket LEVEL or more."""
    if part.level == level:
        return part
    kept = (part.keys >> np.uint64(2 * _ID_BITS)) >= level
    return ContextSample(part.keys[kept], part.counts[kept], level, part.pairs)


def _thinned(keys: np.ndarray, counts: np.ndarray, level: int, pairs: int) -> ContextSample:
    """The sample at the lowest level from LEVEL up that keeps at most CAPACITY keys."""
    while keys.size > CAPACITY:
        level += 1
        kept = (keys >> np.uint64(2 * _ID_BITS)) >= level
        keys, counts = keys[kept], counts[kept]
    return ContextSample(keys, counts, level, pairs)
