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
from collections.abc import Sequence

import numpy as np

CAPACITY = 1 << 20  # distinct (bucket, 2-gram) keys counted exactly: 16 MB of keys and counts
STAGED = 1 << 21  # 2-grams held unsorted before they are counted: 16 MB of keys
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


class ContextSample:
    """The kept documents' 2-grams (KEYS, sorted) with their COUNTS, at LEVEL (documents of bucket LEVEL or
    more), and PAIRS, every 2-gram counted, kept or not.

    A batch's 2-grams come unsorted (`sample`), one key per 2-gram, and a sum holds them so until they add up
    to STAGED or the sample is read: then they are sorted once (a sort of many batches together costs far
    less than counting each batch and merging it into the whole's counts), merged into the counts, and the
    level rises to fit CAPACITY. Where that happens does not change the result: the level is always the
    lowest at which the kept documents' 2-grams fit."""

    def __init__(
        self,
        keys: np.ndarray | None = None,
        counts: np.ndarray | None = None,
        level: int = 0,
        pairs: int = 0,
        staged: Sequence[np.ndarray] = (),
    ):
        self._keys = _empty_keys() if keys is None else keys
        self._counts = _empty_counts() if counts is None else counts
        self._staged = [part for part in staged if part.size]  # unsorted keys, one per 2-gram
        self._level, self.pairs = level, pairs

    @property
    def keys(self) -> np.ndarray:
        self._settle()
        return self._keys

    @property
    def counts(self) -> np.ndarray:
        self._settle()
        return self._counts

    @property
    def level(self) -> int:
        self._settle()
        return self._level

    @property
    def level_so_far(self) -> int:
        """The level without counting what is staged: at most `level`, as a floor may use it (`sample`)."""
        return self._level

    @property
    def sampled_pairs(self) -> int:
        return int(self.counts.sum())

    def __add__(self, other: ContextSample) -> ContextSample:
        level = max(self._level, other._level)
        a, b = _at_level(self, level), _at_level(other, level)
        keys, counts = _merge((a._keys, a._counts), (b._keys, b._counts))
        total = ContextSample(keys, counts, level, self.pairs + other.pairs, a._staged + b._staged)
        if keys.size > CAPACITY or sum(part.size for part in total._staged) > STAGED:
            total._settle()
        return total

    def _settle(self) -> None:
        """Count the staged 2-grams into the counts, and thin them to CAPACITY."""
        if not self._staged and self._keys.size <= CAPACITY:
            return
        staged = np.concatenate(self._staged) if self._staged else _empty_keys()
        self._staged = []
        staged.sort()  # in place: the staged keys are held once
        first = np.empty(staged.size, dtype=bool)
        first[:1] = True
        np.not_equal(staged[1:], staged[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        counted = (staged[first], np.diff(np.append(starts, staged.size)))
        del staged, first
        thinned = _thinned(*_merge((self._keys, self._counts), counted), self._level, self.pairs)
        self._keys, self._counts, self._level, self._staged = thinned._keys, thinned._counts, thinned._level, []

    def __getstate__(self) -> dict:
        self._settle()  # a worker's counts travel counted, not as one key per 2-gram
        return self.__dict__

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

    def __repr__(self) -> str:
        return f"ContextSample(level={self.level}, pairs={self.pairs}, keys={self.keys.size})"

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
    return ContextSample(level=floor, pairs=pairs, staged=[keys[keep]])


def _entropy(counts: np.ndarray) -> float:
    counts = counts[counts > 0].astype(np.float64)
    total = counts.sum()
    return math.log(total) - float(np.sum(counts * np.log(counts))) / total


def _at_level(part: ContextSample, level: int) -> ContextSample:
    """PART with only its documents of bucket LEVEL or more."""
    if part._level == level:
        return part
    shift = np.uint64(2 * _ID_BITS)
    kept = (part._keys >> shift) >= level
    staged = [keys[(keys >> shift) >= level] for keys in part._staged]
    return ContextSample(part._keys[kept], part._counts[kept], level, part.pairs, staged)


def _merge(one: tuple[np.ndarray, np.ndarray], two: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Two sorted runs of unique keys and their counts as one. A much smaller one's keys are found in the
    larger's and the rest inserted in order; runs of like size are merged by a stable sort of both, which
    finds the two runs and merges them in one pass (twice as fast there, three times slower for a batch)."""
    (big_keys, big_counts), (small_keys, small_counts) = (one, two) if one[0].size >= two[0].size else (two, one)
    if small_keys.size == 0:
        return big_keys, big_counts
    if 10 * small_keys.size >= big_keys.size:
        keys = np.concatenate((big_keys, small_keys))
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        first = np.empty(keys.size, dtype=bool)
        first[:1] = True
        np.not_equal(keys[1:], keys[:-1], out=first[1:])
        counts = np.add.reduceat(np.concatenate((big_counts, small_counts))[order], np.flatnonzero(first))
        return keys[first], counts
    at = np.searchsorted(big_keys, small_keys)
    found = at < big_keys.size
    found[found] = big_keys[at[found]] == small_keys[found]
    counts = big_counts.copy()
    counts[at[found]] += small_counts[found]  # the smaller's keys are unique, so are the places they land
    new = ~found
    return np.insert(big_keys, at[new], small_keys[new]), np.insert(counts, at[new], small_counts[new])


def _thinned(keys: np.ndarray, counts: np.ndarray, level: int, pairs: int) -> ContextSample:
    """The sample at the lowest level from LEVEL up that keeps at most CAPACITY keys."""
    while keys.size > CAPACITY:
        level += 1
        kept = (keys >> np.uint64(2 * _ID_BITS)) >= level
        keys, counts = keys[kept], counts[kept]
    return ContextSample(keys, counts, level, pairs)
