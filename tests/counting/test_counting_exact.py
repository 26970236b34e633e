"""Counts equal the reference ids shipped with the shared tokenizers, under each special-token policy.

The differential tests against a plain `encode` per document are in test_counting_fast.py.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from vocabrisk.counting import SpecialTokenPolicy, TokenCounter, TokenCounts
from vocabrisk.counting.counts import utf8_size
from vocabrisk.model import load_vocabulary
from vocabrisk.model.facts import load_facts

VECTORS = {"gpt-2": "gpt2", "mpt": "gpt-neox-20b", "llama-spm": "llama2", "bert-bge": "bert-base-uncased"}
SEPARATOR = "\n__ggml_vocab_test__\n"


@functools.cache
def vocab_size(path: Path) -> int:
    return load_vocabulary(path).size


@functools.cache
def _counter(path: Path, policy: SpecialTokenPolicy) -> TokenCounter:
    return TokenCounter(path, vocab_size(path), policy, eos_id=None)


def make_counter(shared_data: Path, name: str, **policy) -> TokenCounter:
    return _counter(shared_data / "tokenizers" / name / "tokenizer.json", SpecialTokenPolicy(**policy))


@pytest.mark.parametrize(("vectors", "tokenizer"), sorted(VECTORS.items()))
def test_counts_match_reference_vectors(shared_data, vectors, tokenizer):
    inputs = (shared_data / "vectors" / f"{vectors}.inp").read_text(encoding="utf-8").split(SEPARATOR)[:-1]
    expected = (shared_data / "vectors" / f"{vectors}.out").read_text(encoding="utf-8").split("\n")[: len(inputs)]
    counter = make_counter(shared_data, tokenizer, add_special_tokens=False)
    for text, line in zip(inputs, expected, strict=True):
        want = np.bincount(np.array([int(x) for x in line.split()], dtype=np.int64), minlength=counter.vocab_size)
        assert np.array_equal(counter.count([text]).counts, want), f"mismatch on {text!r}"
    all_ids = np.array([int(x) for line in expected for x in line.split()], dtype=np.int64)
    assert np.array_equal(counter.count(inputs).counts, np.bincount(all_ids, minlength=counter.vocab_size))


def test_default_policy_counts_the_tokens_the_post_processor_adds(shared_data):
    docs = ["Hello world.", "A second document."]
    with_bos = make_counter(shared_data, "llama2").count(docs)
    without = make_counter(shared_data, "llama2", add_special_tokens=False).count(docs)
    bos = 1  # <s>
    assert with_bos.counts[bos] == 2 and without.counts[bos] == 0
    assert with_bos.tokens - without.tokens == 2


def test_append_eos_adds_one_eos_per_document(shared_data):
    path = shared_data / "tokenizers" / "gpt2" / "tokenizer.json"
    vocab = load_vocabulary(path)
    eos = load_facts(path).id_of("<|endoftext|>")
    counter = TokenCounter(path, vocab.size, SpecialTokenPolicy(append_eos=True), eos_id=eos)
    counts = counter.count(["one", "two", "three"])
    assert counts.counts[eos] == 3


def test_special_token_strings_in_text_follow_the_policy(shared_data):
    """wikitext is full of literal `<unk>`: by default it is Llama's unk token, as the tokenizer does."""
    text = "the <unk> river"
    matched = make_counter(shared_data, "llama2", add_special_tokens=False).count([text])
    split = make_counter(shared_data, "llama2", add_special_tokens=False, split_special_tokens=True).count([text])
    assert matched.counts[0] == 1
    assert split.counts[0] == 0


def test_token_counts_reject_mismatched_vocabularies():
    with pytest.raises(ValueError, match="cannot add counts"):
        TokenCounts.zeros(3) + TokenCounts.zeros(4)


@given(st.text())
def test_utf8_size_is_the_length_of_the_utf8_encoding(text):
    assert utf8_size(text) == len(text.encode("utf-8", errors="surrogatepass"))
