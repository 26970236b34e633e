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

import os
from concurrent.futures import ThreadPoolExecutor

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

    Every 3-gram is hashed, in blocks that stay in the CPU's cache (hashing all at once made a dozen
    passes over arrays of 8 bytes a token, and cost more than encoding them), a large batch in two halves on
    two threads where the process has two cores. The few left out, at documents' ends and around special ids
    (Llama's `<s>`), are then taken back out; where special ids are dense (a Pegasus `<unk>` may be every
    third token of CJK text), each block's are dropped before counting.
    """
    ids = np.asarray(ids)
    starts = len(ids) - 2
    if starts <= 0:
        return empty(), 0
    ends = np.cumsum(np.asarray(lengths, dtype=np.int64))
    crossing = np.concatenate([ends - 2, ends - 1])  # 3-grams that start in one document and end in the next
    dropped = np.zeros(starts, dtype=bool)
    dropped[crossing[(crossing >= 0) & (crossing < starts)]] = True
    if special is not None and special.any():
        marked = special[ids.astype(np.intp, copy=False)]
        dropped |= marked[:-2] | marked[1:-1] | marked[2:]
    left_out = np.flatnonzero(dropped)
    kept = ~dropped if left_out.size * 16 > starts else None  # dense: dropped block by block, not taken back out
    half = starts // 2
    if half >= _THREADED_FROM and _threads() > 1:  # the engine's threads are idle meanwhile: hash on two
        other = _pool().submit(_counted, ids, kept, half, starts, _THREADED_BLOCK)
        counts = _counted(ids, kept, 0, half, _THREADED_BLOCK)
        counts += other.result()
    else:
        counts = _counted(ids, kept, 0, starts, _BLOCK)
    if kept is None and left_out.size:
        grams = ids[left_out], ids[left_out + 1], ids[left_out + 2]
        scratch = np.empty((2, left_out.size), dtype=np.uint64)
        counts -= np.bincount(_cells(*grams, *scratch), minlength=2 * SKETCH_WIDTH)
    return counts[1::2] - counts[0::2], starts - int(left_out.size)


_BLOCK = 1 << 15
# Sketching a batch in two halves, on two threads, where two cores are there for it: the engine's threads are
# idle meanwhile. 1.2x the sketch in one thread, 1.035-1.07x whole scans (docs/PERFORMANCE.md, "Issue 31"). Each
# half in blocks of 128k 3-grams: in smaller ones each thread waits on the other's GIL between numpy's passes.
_THREADED_FROM = 1 << 16  # 3-grams in each half
_THREADED_BLOCK = 1 << 17


def _counted(ids: np.ndarray, kept: np.ndarray | None, first: int, last: int, block: int) -> np.ndarray:
    """The sketch's cells counted for the 3-grams starting at FIRST to LAST (the KEPT ones, where given)."""
    counts = np.zeros(2 * SKETCH_WIDTH, dtype=np.int64)  # bucket i's -1s at 2i, its +1s at 2i + 1
    size = min(block, last - first)
    key, scratch = np.empty(size, dtype=np.uint64), np.empty(size, dtype=np.uint64)
    for start in range(first, last, block):
        stop = min(start + block, last)
        size = stop - start
        cells = _cells(
            ids[start:stop], ids[start + 1 : stop + 1], ids[start + 2 : stop + 2], key[:size], scratch[:size]
        )
        counts += np.bincount(cells if kept is None else cells[kept[start:stop]], minlength=2 * SKETCH_WIDTH)
    return counts


def _threads() -> int:
    """The cores this process may use: the engine's own limit where a worker has one (`limit_threads`)."""
    limit = os.environ.get("RAYON_NUM_THREADS", "")
    if limit.isdigit():
        return int(limit)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


_POOLS: dict[int, ThreadPoolExecutor] = {}  # by process: a forked worker has none of its parent's threads


def _pool() -> ThreadPoolExecutor:
    pid = os.getpid()
    if pid not in _POOLS:
        _POOLS[pid] = ThreadPoolExecutor(1, thread_name_prefix="vocabrisk-sketch")
    return _POOLS[pid]


_PRIME = np.uint64(0x100000001B3)


def _cells(first: np.ndarray, second: np.ndarray, third: np.ndarray, key: np.ndarray, scratch: np.ndarray):
    """Each 3-gram's cell of the sketch, 2 * bucket + (1 for +1, 0 for -1), computed in KEY (with SCRATCH)."""
    np.multiply(first, _PRIME, out=key, dtype=np.uint64, casting="unsafe")
    np.bitwise_xor(key, second, out=key, casting="unsafe")
    key *= _PRIME
    np.bitwise_xor(key, third, out=key, casting="unsafe")
    for shift, mix in ((30, _MIX[0]), (27, _MIX[1])):
        np.right_shift(key, np.uint64(shift), out=scratch)
        key ^= scratch
        key *= mix
    np.right_shift(key, np.uint64(31), out=scratch)
    key ^= scratch
    np.bitwise_and(key, np.uint64(1), out=scratch)  # the sign: bit 0
    key >>= _SHIFT  # the bucket: the top bits
    key <<= np.uint64(1)
    key |= scratch
    return key.view(np.int64)


def collision(buckets: np.ndarray, trigrams: int) -> float | None:
    """Σ f(g)² estimated from a sketch of TRIGRAMS 3-grams; None without any, never below 1 / TRIGRAMS."""
    if trigrams <= 0:
        return None
    squares = float(np.sum(np.asarray(buckets, dtype=np.float64) ** 2))
    return max(squares / float(trigrams) ** 2, 1.0 / trigrams)
