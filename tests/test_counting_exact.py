"""Counts equal, token for token, what each model's own tokenizer gives per document."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from vocabrisk.counting import SpecialTokenPolicy, TokenCounter, TokenCounts
from vocabrisk.model import load_vocabulary

TOKENIZERS = ["gpt2", "gpt-neox-20b", "llama2", "bert-base-uncased", "pegasus"]
VECTORS = {"gpt-2": "gpt2", "mpt": "gpt-neox-20b", "llama-spm": "llama2", "bert-bge": "bert-base-uncased"}
CORPORA = [
    "en-shakespeare/input.txt",
    "en-wikitext2/valid.txt",
    "code-lua/lua_src_c.txt",
    "ko-chatbot/ChatbotData.csv",
    "de-grimm/de-grimm.txt",
]
SEPARATOR = "\n__ggml_vocab_test__\n"


@functools.cache
def vocab_size(path: Path) -> int:
    return load_vocabulary(path).size


@functools.cache
def _counter(path: Path, policy: SpecialTokenPolicy) -> TokenCounter:
    return TokenCounter(path, vocab_size(path), policy, eos_id=None)


def make_counter(shared_data: Path, name: str, **policy) -> TokenCounter:
    return _counter(shared_data / "tokenizers" / name / "tokenizer.json", SpecialTokenPolicy(**policy))


@functools.cache
def plain_tokenizer(path: Path) -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(path))
    if hasattr(tokenizer, "no_truncation"):
        tokenizer.no_truncation()
    return tokenizer


def plain_counts(shared_data: Path, name: str, texts: list[str], add_special_tokens: bool) -> np.ndarray:
    """The reference: truncation off, one plain `encode` call per document."""
    path = shared_data / "tokenizers" / name / "tokenizer.json"
    tokenizer = plain_tokenizer(path)
    ids = [i for t in texts for i in tokenizer.encode(t, add_special_tokens=add_special_tokens).ids]
    return np.bincount(np.array(ids, dtype=np.int64), minlength=vocab_size(path))


def corpus_documents(shared_data: Path, relative: str, limit_bytes: int = 150_000) -> list[str]:
    """Paragraph-sized documents from the start of a shared corpus."""
    text = (shared_data / "corpora" / relative).read_text(encoding="utf-8")[:limit_bytes]
    return [p for p in text.split("\n\n") if p]


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


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
@pytest.mark.parametrize("corpus", CORPORA)
def test_counts_match_plain_encode_on_shared_corpora(shared_data, tokenizer, corpus):
    texts = corpus_documents(shared_data, corpus)
    counter = make_counter(shared_data, tokenizer)
    counts = counter.count(texts)
    assert np.array_equal(counts.counts, plain_counts(shared_data, tokenizer, texts, add_special_tokens=True))
    assert counts.documents == len(texts)
    assert counts.text_bytes == sum(len(t.encode("utf-8")) for t in texts)


def test_truncation_in_tokenizer_file_never_cuts_documents(shared_data):
    """Pegasus's tokenizer.json truncates at 192 tokens; counting must see the whole play."""
    text = (shared_data / "corpora" / "en-shakespeare" / "input.txt").read_text(encoding="utf-8")
    truncating = Tokenizer.from_file(str(shared_data / "tokenizers" / "pegasus" / "tokenizer.json"))
    assert len(truncating.encode(text).ids) == 192  # the trap is real
    counts = make_counter(shared_data, "pegasus").count([text])
    assert counts.tokens > 200_000
    assert np.array_equal(counts.counts, plain_counts(shared_data, "pegasus", [text], add_special_tokens=True))


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
    eos = vocab.id_of("<|endoftext|>")
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


FRAGMENTS = [
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "'s",
    "'",
    "0",
    "42",
    "😀",
    "é",
    "ß",
    "한",
    "中",
    "<|endoftext|>",
    "<unk>",
    "</s>",
]
document = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(st.characters(exclude_categories=("Cs",)), max_size=6)),
    max_size=12,
).map("".join)
texts_strategy = st.lists(document, max_size=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=texts_strategy, second=texts_strategy)
def test_counts_merge_by_addition(shared_data, first, second):
    counter = make_counter(shared_data, "gpt2")
    assert counter.count(first) + counter.count(second) == counter.count(first + second)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=texts_strategy)
@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_batched_counts_equal_plain_encode_on_random_text(shared_data, tokenizer, texts):
    counter = make_counter(shared_data, tokenizer)
    assert np.array_equal(counter.count(texts).counts, plain_counts(shared_data, tokenizer, texts, True))


def test_token_counts_reject_mismatched_vocabularies():
    with pytest.raises(ValueError, match="cannot add counts"):
        TokenCounts.zeros(3) + TokenCounts.zeros(4)
