"""The 2-gram counts: exact counts of the 2-grams inside documents, of every document while they fit and of a
sample of documents chosen by their content after; counts of parts merge into the whole's in any order; H(next |
previous) from them is the plug-in entropy of what was kept (`vocabrisk.counting.contexts`)."""

from __future__ import annotations

import math
from collections import Counter
from functools import reduce
from itertools import pairwise
from unittest import mock

import numpy as np
import pytest
from helpers import REPO, SAMPLES
from hypothesis import given, settings
from hypothesis import strategies as st

from vocabrisk import scan
from vocabrisk.counting import contexts
from vocabrisk.counting.contexts import ContextSample

documents_strategy = st.lists(st.lists(st.integers(0, 40), max_size=60), max_size=8)


def pairs_by_definition(documents: list[list[int]], special: set[int] = frozenset()) -> Counter:
    return Counter(g for ids in documents for g in pairwise(ids) if special.isdisjoint(g))


def h(counter: Counter) -> float:
    n = sum(counter.values())
    return -sum(c / n * math.log(c / n) for c in counter.values())


def entropy_by_definition(documents: list[list[int]]) -> float:
    """H(2-grams) - H(tokens), plug-in, in nats, written out with Python numbers."""
    return max(0.0, h(pairs_by_definition(documents)) - h(Counter(i for d in documents for i in d)))


def sampled_entropy_by_definition(documents: list[list[int]]) -> float:
    """The same over a sample of documents, its tokens those that begin a 2-gram."""
    pairs = pairs_by_definition(documents)
    return max(0.0, h(pairs) - h(Counter(a for (a, _), n in pairs.items() for _ in range(n))))


def real_documents() -> tuple[list[str], list[np.ndarray]]:
    """The sample corpora's paragraphs (1,700 documents) by the demo model's tokenizer."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(REPO / "vocabrisk" / "demo_model" / "tokenizer.json"))
    paths = [SAMPLES / "korean-notes.txt", *sorted((SAMPLES / "english-prose").iterdir())]
    texts = [p for path in paths for p in path.read_text(encoding="utf-8").split("\n\n") if p.strip()]
    return texts, [np.array(e.ids, dtype=np.uint32) for e in tokenizer.encode_batch(texts)]


@settings(max_examples=60, deadline=None)
@given(documents=documents_strategy, special=st.sets(st.integers(0, 40), max_size=3), data=st.data())
def test_the_counts_are_every_2_gram_inside_a_document(documents, special, data):
    ids = np.array([i for d in documents for i in d], dtype=np.uint32)
    mask = np.zeros(41, dtype=bool)
    mask[list(special)] = True
    buckets = data.draw(st.lists(st.integers(0, 32), min_size=len(documents), max_size=len(documents)))
    found = contexts.sample(ids, [len(d) for d in documents], buckets, mask)
    expected = pairs_by_definition(documents, special)
    assert found.level == 0 and found.pairs == found.sampled_pairs == sum(expected.values())
    bits = contexts._ID_BITS
    kept = Counter()
    for key, count in zip(found.keys.tolist(), found.counts.tolist(), strict=True):
        kept[(key >> bits) & ((1 << bits) - 1), key & ((1 << bits) - 1)] += count
    assert kept == expected


@settings(max_examples=40, deadline=None)
@given(documents=documents_strategy, data=st.data())
def test_counts_of_parts_merge_into_the_whole_s_in_any_order(documents, data):
    buckets = data.draw(st.lists(st.integers(0, 32), min_size=len(documents), max_size=len(documents)))
    whole = contexts.sample(
        np.array([i for d in documents for i in d], dtype=np.uint32), [len(d) for d in documents], buckets
    )
    parts = [
        contexts.sample(np.array(d, dtype=np.uint32), [len(d)], [b]) for d, b in zip(documents, buckets, strict=True)
    ]
    order = data.draw(st.permutations(range(len(parts))))
    assert reduce(lambda a, b: a + b, [parts[i] for i in order], ContextSample()) == whole


@settings(max_examples=60, deadline=None)
@given(documents=documents_strategy, capacity=st.integers(1, 40), data=st.data())
def test_past_capacity_parts_merge_into_the_whole_s_sample_however_they_are_grouped(documents, capacity, data):
    """Wherever the thinning happens along a sum (parts added one by one, or in two groups first), a sum of parts
    is the sample of all their documents at once, and never holds more than CAPACITY keys."""
    buckets = data.draw(st.lists(st.integers(0, 6), min_size=len(documents), max_size=len(documents)))
    with mock.patch.object(contexts, "CAPACITY", capacity):
        whole = contexts.sample(
            np.array([i for d in documents for i in d], dtype=np.uint32), [len(d) for d in documents], buckets
        )
        kept = zip(documents, buckets, strict=True)
        parts = [contexts.sample(np.array(d, dtype=np.uint32), [len(d)], [b]) for d, b in kept]
        order = data.draw(st.permutations(parts))
        left = reduce(lambda a, b: a + b, order, ContextSample())
        split = data.draw(st.integers(0, len(order)))
        halves = reduce(lambda a, b: a + b, order[:split], ContextSample()) + reduce(
            lambda a, b: a + b, order[split:], ContextSample()
        )
        assert left == whole == halves and left.keys.size <= capacity


@settings(max_examples=40, deadline=None)
@given(documents=documents_strategy, floor=st.integers(0, 6), data=st.data())
def test_a_floor_leaves_out_only_what_merging_into_counts_at_that_level_drops(documents, floor, data):
    buckets = data.draw(st.lists(st.integers(0, 8), min_size=len(documents), max_size=len(documents)))
    ids, lengths = np.array([i for d in documents for i in d], dtype=np.uint32), [len(d) for d in documents]
    floored = contexts.sample(ids, lengths, buckets, floor=floor)
    assert floored == contexts.sample(ids, lengths, buckets) + ContextSample(level=floor) or len(ids) < 2


@settings(max_examples=40, deadline=None)
@given(documents=st.lists(st.lists(st.integers(0, 40), min_size=1, max_size=60), min_size=1, max_size=8))
def test_the_entropy_is_the_plug_in_entropy_of_a_token_given_the_one_before(documents):
    ids = np.array([i for d in documents for i in d], dtype=np.uint32)
    found = contexts.sample(ids, [len(d) for d in documents], [0] * len(documents))
    entropy = found.entropy(np.bincount(ids, minlength=41))
    if entropy is None:
        assert all(len(d) < 2 for d in documents)  # no 2-gram
    else:
        assert entropy == pytest.approx(entropy_by_definition(documents), abs=1e-9)


def test_past_capacity_a_sample_of_documents_is_kept_whatever_the_order_and_h_is_its_own(monkeypatch):
    """Real text, 1,700 paragraphs: with room for a fifth of their distinct 2-grams, the documents kept are
    those of bucket LEVEL or more (about 2^-LEVEL of them), the same whether they come together or one at a
    time in either order, and H is the plug-in entropy of exactly those documents."""
    texts, documents = real_documents()
    ids, lengths = np.concatenate(documents), [len(d) for d in documents]
    buckets = [contexts.bucket(t) for t in texts]
    exact = contexts.sample(ids, lengths, buckets)
    monkeypatch.setattr(contexts, "CAPACITY", exact.keys.size // 5)
    thinned = contexts.sample(ids, lengths, buckets)
    kept = [d.tolist() for d, b in zip(documents, buckets, strict=True) if b >= thinned.level]
    assert thinned.level >= 2 and 0 < len(kept) < len(documents) / 3 and thinned.pairs == exact.pairs
    assert thinned.sampled_pairs == sum(pairs_by_definition(kept).values())
    assert thinned.entropy(np.bincount(ids)) == pytest.approx(sampled_entropy_by_definition(kept), abs=1e-9)
    parts = [contexts.sample(d, [len(d)], [b]) for d, b in zip(documents, buckets, strict=True)]
    assert reduce(lambda a, b: a + b, parts) == thinned == reduce(lambda a, b: b + a, parts[::-1])


def test_a_scan_past_capacity_leaves_out_the_documents_below_its_level_and_counts_the_same(monkeypatch):
    """Batches of a few documents into a scan's counts at a level past 0: once the counts reach a level, later
    batches are sampled from it (`contexts.sample`'s floor), and the sample is the one of every document at
    once."""
    from vocabrisk.counting.executors import pipeline

    texts, documents = real_documents()
    ids, lengths = np.concatenate(documents), [len(d) for d in documents]
    capacity = contexts.sample(ids, lengths, [contexts.bucket(t) for t in texts]).keys.size // 5
    monkeypatch.setattr(contexts, "CAPACITY", capacity)
    whole = contexts.sample(ids, lengths, [contexts.bucket(t) for t in texts])
    floors = []
    original = contexts.sample
    monkeypatch.setattr(contexts, "sample", lambda *a, **k: floors.append(a[4] if len(a) > 4 else 0) or original(*a))
    monkeypatch.setattr(pipeline, "BATCH_DOCUMENTS", 64)
    profile = scan([texts], "demo")
    assert profile.contexts["level"] == whole.level >= 2 and max(floors) >= 1
    assert profile.contexts["sampled_pairs"] == whole.sampled_pairs
    assert profile.contexts["entropy"] == pytest.approx(whole.entropy(np.bincount(ids)))


def test_a_document_s_bucket_is_a_share_of_documents_by_their_first_characters():
    texts, _ = real_documents()
    buckets = np.array([contexts.bucket(t) for t in texts])
    assert 0.4 < np.mean(buckets >= 1) < 0.6 and 0.15 < np.mean(buckets >= 2) < 0.35  # about 1/2, 1/4
    long = texts[0] * 100
    assert contexts.bucket(long) == contexts.bucket(long[: contexts.HASHED_CHARS] + "a different ending")


def test_a_scan_s_profile_holds_the_entropy_of_its_corpus_and_a_loaded_one_keeps_it(tmp_path):
    from vocabrisk.profile.profile import Profile

    profile = scan([str(SAMPLES / "korean-notes.txt")], "demo")
    whole = (SAMPLES / "korean-notes.txt").read_text(encoding="utf-8")  # one document
    from tokenizers import Tokenizer

    ids = Tokenizer.from_file(str(REPO / "vocabrisk" / "demo_model" / "tokenizer.json")).encode(whole).ids
    assert profile.contexts == {
        "pairs": len(ids) - 1,
        "level": 0,
        "sampled_pairs": len(ids) - 1,
        "entropy": pytest.approx(entropy_by_definition([ids])),
    }
    assert Profile.load(profile.save(tmp_path / "korean")).contexts == profile.contexts
    assert (profile + profile).contexts is None  # a sum's entropy is not its parts': it says it has none
