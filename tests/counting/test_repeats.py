"""The 3-gram sketch: each 3-gram inside a document adds its sign to its bucket, whatever the blocks it is
hashed in; sketches of parts add up to the whole's; Σ bucket² estimates Σ f(g)² (`vocabrisk.counting.repeats`)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from helpers import REPO, SAMPLES
from hypothesis import given, settings
from hypothesis import strategies as st

from vocabrisk.counting import repeats

MASK = (1 << 64) - 1


def bucket_and_sign(a: int, b: int, c: int) -> tuple[int, int]:
    """The sketch's hash of one 3-gram, written out with Python integers: FNV-style mixing of the ids, then
    splitmix64's finaliser; the top 14 bits choose the bucket, bit 0 the sign."""
    prime = 0x100000001B3
    key = ((((a * prime) & MASK) ^ b) * prime & MASK) ^ c
    key ^= key >> 30
    key = key * 0xBF58476D1CE4E5B9 & MASK
    key ^= key >> 27
    key = key * 0x94D049BB133111EB & MASK
    key ^= key >> 31
    return key >> 50, 1 if key & 1 else -1


def sketch_by_definition(documents: list[list[int]], special: set[int]) -> tuple[np.ndarray, int]:
    buckets, counted = np.zeros(repeats.SKETCH_WIDTH, dtype=np.int64), 0
    for ids in documents:
        for gram in zip(ids, ids[1:], ids[2:], strict=False):
            if special.isdisjoint(gram):
                bucket, sign = bucket_and_sign(*gram)
                buckets[bucket] += sign
                counted += 1
    return buckets, counted


documents_strategy = st.lists(st.lists(st.integers(0, 40), max_size=60), max_size=8)


@settings(max_examples=60, deadline=None)
@given(documents=documents_strategy, special=st.sets(st.integers(0, 40), max_size=3))
def test_the_sketch_is_its_definition(documents, special):
    ids = np.array([i for d in documents for i in d], dtype=np.uint32)
    mask = np.zeros(41, dtype=bool)
    mask[list(special)] = True
    found, counted = repeats.sketch(ids, [len(d) for d in documents], mask)
    expected, expected_counted = sketch_by_definition(documents, special)
    assert counted == expected_counted
    assert np.array_equal(found, expected)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("every", [97, 3])  # special ids sparse (taken back out) or dense (dropped per block)
def test_a_long_batch_hashed_in_blocks_is_its_documents_sketches_added(monkeypatch, threads, every):
    """Blocks of the hash (`_BLOCK`, and halves on two threads) fall anywhere in a batch: the batch's sketch is
    still the sum of its documents' own, specials and all."""
    monkeypatch.setattr(repeats, "_threads", lambda: threads)
    pools, pool = [], repeats._pool
    monkeypatch.setattr(repeats, "_pool", lambda: pools.append(1) or pool())
    rng = np.random.default_rng(7)
    lengths = [0, 1, 2, 3, repeats._BLOCK - 1, repeats._BLOCK + 2, 5, 3 * repeats._BLOCK + 11]
    assert sum(lengths) // 2 >= repeats._THREADED_FROM  # the batch is hashed in halves where two threads may
    documents = [rng.integers(0, 50_000, n).astype(np.uint32) for n in lengths]
    documents[5][::every] = 49_999
    special = np.zeros(50_000, dtype=bool)
    special[49_999] = True
    whole, counted = repeats.sketch(np.concatenate(documents), lengths, special)
    assert bool(pools) == (threads == 2)
    parts = [repeats.sketch(d, [len(d)], special) for d in documents]
    assert np.array_equal(whole, sum(p[0] for p in parts))
    assert counted == sum(p[1] for p in parts)


def test_the_collision_is_close_to_the_exact_sum_of_squared_3_gram_frequencies():
    """On real text (every sample corpus, by the demo model's tokenizer): within a few per cent of Σ f(g)²,
    the sketch's error being about √(2 / width) ≈ 1%."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(REPO / "vocabrisk" / "demo_model" / "tokenizer.json"))
    texts = [SAMPLES / "korean-notes.txt", *sorted((SAMPLES / "english-prose").iterdir())]
    documents = [np.array(tokenizer.encode(p.read_text(encoding="utf-8")).ids, dtype=np.uint32) for p in texts]
    buckets, counted = repeats.sketch(np.concatenate(documents), [len(d) for d in documents])
    grams = Counter(g for d in documents for g in zip(d[:-2].tolist(), d[1:-1].tolist(), d[2:].tolist(), strict=True))
    assert counted == sum(grams.values()) > 10_000
    exact = sum(n * n for n in grams.values()) / counted**2
    assert repeats.collision(buckets, counted) == pytest.approx(exact, rel=0.05)
