"""The 2-gram counts: exact counts of the 2-grams inside documents while they fit, an overflow said after;
counts of parts merge into the whole's in any order; H(next | previous) from them is the plug-in entropy
(`vocabrisk.counting.contexts`)."""

from __future__ import annotations

import math
from collections import Counter
from functools import reduce
from itertools import pairwise

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import REPO, SAMPLES
from hypothesis import given, settings
from hypothesis import strategies as st

from vocabrisk import scan
from vocabrisk.cli.commands import main
from vocabrisk.counting import contexts
from vocabrisk.counting.contexts import ContextSample

documents_strategy = st.lists(st.lists(st.integers(0, 40), max_size=60), max_size=8)


def pairs_by_definition(documents: list[list[int]], special: set[int]) -> Counter:
    return Counter(g for ids in documents for g in pairwise(ids) if special.isdisjoint(g))


def entropy_by_definition(documents: list[list[int]]) -> float:
    """H(2-grams) - H(tokens), plug-in, in nats, written out with Python numbers."""

    def h(counter: Counter) -> float:
        n = sum(counter.values())
        return -sum(c / n * math.log(c / n) for c in counter.values())

    return max(0.0, h(pairs_by_definition(documents, set())) - h(Counter(i for d in documents for i in d)))


def real_documents() -> list[np.ndarray]:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(REPO / "vocabrisk" / "demo_model" / "tokenizer.json"))
    texts = [SAMPLES / "korean-notes.txt", *sorted((SAMPLES / "english-prose").iterdir())]
    return [np.array(tokenizer.encode(p.read_text(encoding="utf-8")).ids, dtype=np.uint32) for p in texts]


@settings(max_examples=60, deadline=None)
@given(documents=documents_strategy, special=st.sets(st.integers(0, 40), max_size=3))
def test_the_sample_is_every_2_gram_inside_a_document_counted(documents, special):
    ids = np.array([i for d in documents for i in d], dtype=np.uint32)
    mask = np.zeros(41, dtype=bool)
    mask[list(special)] = True
    found = contexts.sample(ids, [len(d) for d in documents], mask)
    expected = pairs_by_definition(documents, special)
    assert not found.overflowed and found.pairs == sum(expected.values())
    kept = {(int(k) >> 32, int(k) & 0xFFFFFFFF): int(c) for k, c in zip(found.keys, found.counts, strict=True)}
    assert kept == expected


@settings(max_examples=40, deadline=None)
@given(documents=documents_strategy, cut=st.integers(0, 8), data=st.data())
def test_samples_of_parts_merge_into_the_whole_s_in_any_order(documents, cut, data):
    whole = contexts.sample(np.array([i for d in documents for i in d], dtype=np.uint32), [len(d) for d in documents])
    parts = [contexts.sample(np.array(d, dtype=np.uint32), [len(d)]) for d in documents]
    order = data.draw(st.permutations(range(len(parts))))
    assert reduce(lambda a, b: a + b, [parts[i] for i in order], ContextSample()) == whole


@settings(max_examples=40, deadline=None)
@given(documents=st.lists(st.lists(st.integers(0, 40), min_size=1, max_size=60), min_size=1, max_size=8))
def test_the_entropy_is_the_plug_in_entropy_of_a_token_given_the_one_before(documents):
    ids = np.array([i for d in documents for i in d], dtype=np.uint32)
    found = contexts.sample(ids, [len(d) for d in documents]).entropy(np.bincount(ids, minlength=41))
    if found is None:
        assert all(len(d) < 2 for d in documents)  # no 2-gram
    else:
        assert found == pytest.approx(entropy_by_definition(documents), abs=1e-9)


def test_past_capacity_the_sample_overflows_keeps_nothing_and_says_so_in_any_order(monkeypatch):
    """Real text (the demo tokenizer on the sample corpora, 3,709 distinct 2-grams): under the capacity the
    documents merge one at a time into the whole's exact counts; past it the whole overflows, whatever the
    order its parts merge in, counts every 2-gram still and has no entropy."""
    documents = real_documents()
    ids, lengths = np.concatenate(documents), [len(d) for d in documents]
    counts = np.bincount(ids)
    exact = contexts.sample(ids, lengths)
    parts = [contexts.sample(d, [len(d)]) for d in documents]
    assert not exact.overflowed and exact.keys.size > 3_000 and reduce(lambda a, b: a + b, parts) == exact
    monkeypatch.setattr(contexts, "CAPACITY", 3_000)
    parts = [contexts.sample(d, [len(d)]) for d in documents]
    assert not any(p.overflowed for p in parts)  # each document alone fits
    for merged in (reduce(lambda a, b: a + b, parts), reduce(lambda a, b: b + a, parts[::-1])):
        assert merged == contexts.sample(ids, lengths) == ContextSample(pairs=exact.pairs, overflowed=True)
        assert merged.entropy(counts) is None


def test_a_scan_s_profile_holds_the_entropy_of_its_corpus_and_a_loaded_one_keeps_it(tmp_path):
    from vocabrisk.profile.profile import Profile

    profile = scan([str(SAMPLES / "korean-notes.txt")], "demo")
    documents = real_documents()[:1]
    assert profile.contexts["pairs"] == len(documents[0]) - 1 and not profile.contexts["overflowed"]
    assert profile.contexts["entropy"] == pytest.approx(entropy_by_definition([d.tolist() for d in documents]))
    assert Profile.load(profile.save(tmp_path / "korean")).contexts == profile.contexts
    assert (profile + profile).contexts is None  # a sum's entropy is not its parts': it says it has none


def test_a_corpus_past_capacity_gets_a_forecast_that_says_its_h_was_not_measured(monkeypatch, tmp_path):
    import json

    from vocabrisk.errors import ProfileError
    from vocabrisk.profile.profile import Profile
    from vocabrisk.risk.forecast import UNMEASURED_ENTROPY
    from vocabrisk.risk.summary import Summary

    monkeypatch.setattr(contexts, "CAPACITY", 100)
    profile = scan([str(SAMPLES / "korean-notes.txt")], "demo")
    assert profile.contexts == {"pairs": profile.contexts["pairs"], "entropy": None, "overflowed": True}
    forecast = Summary.of(profile).forecast
    assert forecast.terms.entropy == UNMEASURED_ENTROPY and not forecast.terms.entropy_known
    assert "distinct 2-grams the scan counts exactly): H taken as 2.07 nats" in forecast.basis
    folder = profile.save(tmp_path / "korean")
    gated = CliRunner().invoke(main, ["gate", str(folder), "--max-forgetting", "10", "--format", "json"])
    assert gated.exit_code == 0 and "no 2-gram entropy: H taken as 2.07 nats" in gated.stdout, gated.output
    data = json.loads((folder / "profile.json").read_text(encoding="utf-8"))
    data["contexts"] = {"pairs": 10, "entropy": None, "overflowed": False}  # pairs without an entropy: edited
    (folder / "profile.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ProfileError, match="contexts of the wrong kind"):
        Profile.load(folder)
