"""The fast counting path equals the plain path: one `encode` per document, truncation off.

Runs on whichever `tokenizers` engine is installed (0.2x or 1.0); run it under both.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from vocabrisk.counting import SpecialTokenPolicy, TokenCounter
from vocabrisk.model import load_vocabulary
from vocabrisk.model.tokenizer import is_fast_api

TOKENIZERS = ["gpt2", "gpt-neox-20b", "llama2", "bert-base-uncased", "pegasus"]
VECTORS = {"gpt-2": "gpt2", "mpt": "gpt-neox-20b", "llama-spm": "llama2", "bert-bge": "bert-base-uncased"}
CORPORA = [
    "en-shakespeare/input.txt",
    "en-wikitext2/valid.txt",
    "code-lua/lua_src_c.txt",
    "ko-chatbot/ChatbotData.csv",
    "de-grimm/de-grimm.txt",
]
POLICIES = [
    SpecialTokenPolicy(),
    SpecialTokenPolicy(add_special_tokens=False),
    SpecialTokenPolicy(split_special_tokens=True),
    SpecialTokenPolicy(append_eos=True),
]
FRAGMENTS = [" ", "   ", "\t", "\t\t ", "\n", "\n\n", "\r\n", " \n ", "'s", "'ll", "'", "''", "0", "42", "1234567"]
FRAGMENTS += ["😀", "👍🏽", "é", "é", "ß", "İ", "한국어", "中文", "ﬁ", "\u200b", "\u00a0", "Ⅻ", "<unk>", "</s>"]


def tokenizer_path(shared_data: Path, name: str) -> Path:
    return shared_data / "tokenizers" / name / "tokenizer.json"


@functools.cache
def counter(path: Path, policy: SpecialTokenPolicy) -> TokenCounter:
    eos = 0 if policy.append_eos else None
    return TokenCounter(path, load_vocabulary(path).size, policy, eos_id=eos)


@functools.cache
def plain_tokenizer(path: Path) -> Tokenizer:
    return Tokenizer.from_file(str(path))


def plain_ids(path: Path, text: str, policy: SpecialTokenPolicy) -> list[int]:
    """The reference: one plain `encode` of one document, on either engine's API."""
    tokenizer = plain_tokenizer(path)
    if is_fast_api():
        ids = tokenizer.encode(
            text,
            add_special_tokens=policy.add_special_tokens,
            encode_special_tokens=policy.split_special_tokens,
            truncation=None,
        ).ids
    else:
        tokenizer.no_truncation()
        tokenizer.encode_special_tokens = policy.split_special_tokens
        ids = tokenizer.encode(text, add_special_tokens=policy.add_special_tokens).ids
    return [*ids, 0] if policy.append_eos else ids


def assert_fast_equals_plain(path: Path, texts: list[str], policy: SpecialTokenPolicy) -> None:
    fast = counter(path, policy)
    want = np.bincount(
        np.array([i for t in texts for i in plain_ids(path, t, policy)], dtype=np.int64), minlength=fast.vocab_size
    )
    assert np.array_equal(fast.count(texts).counts, want)
    assert [list(i) for i in fast.encode(texts)] == [plain_ids(path, t, policy) for t in texts]


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
@pytest.mark.parametrize("corpus", CORPORA)
def test_fast_equals_plain_on_shared_corpora(shared_data, tokenizer, corpus):
    text = (shared_data / "corpora" / corpus).read_text(encoding="utf-8")[:40_000]
    documents = [text[:30_000], *text[30_000:].split("\n\n"), ""]
    assert_fast_equals_plain(tokenizer_path(shared_data, tokenizer), documents, SpecialTokenPolicy())


@pytest.mark.parametrize(("vectors", "tokenizer"), sorted(VECTORS.items()))
@pytest.mark.parametrize("policy", POLICIES)
def test_fast_equals_plain_on_shared_vectors(shared_data, vectors, tokenizer, policy):
    texts = (shared_data / "vectors" / f"{vectors}.inp").read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n")
    assert_fast_equals_plain(tokenizer_path(shared_data, tokenizer), texts[:-1], policy)


def test_truncation_in_the_file_is_off_on_the_fast_path(shared_data):
    """Pegasus's file truncates at 192 tokens; the plain reference above turns it off too."""
    path = tokenizer_path(shared_data, "pegasus")
    assert json.loads(path.read_text(encoding="utf-8"))["truncation"]["max_length"] == 192
    text = (shared_data / "corpora" / "en-shakespeare" / "input.txt").read_text(encoding="utf-8")[:20_000]
    assert counter(path, SpecialTokenPolicy()).count([text]).tokens > 192


@functools.cache
def added_tokens(path: Path) -> list[str]:
    return [t["content"] for t in json.loads(path.read_text(encoding="utf-8"))["added_tokens"]][:20]


@st.composite
def documents(draw, path: Path) -> list[str]:
    """Documents mixing whitespace runs, digits, emoji, scripts and the file's added tokens."""
    piece = st.one_of(
        st.sampled_from(FRAGMENTS + added_tokens(path)),
        st.text(st.characters(exclude_categories=("Cs",)), max_size=8),
        st.text(" \t\n'0123456789aZ", max_size=12),
    )
    return draw(st.lists(st.lists(piece, max_size=16).map("".join), max_size=6))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), policy=st.sampled_from(POLICIES))
@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_fast_equals_plain_on_random_text(shared_data, tokenizer, data, policy):
    path = tokenizer_path(shared_data, tokenizer)
    assert_fast_equals_plain(path, data.draw(documents(path)), policy)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.sampled_from(FRAGMENTS), max_size=40).map(lambda f: ["".join(f)] * 3), cut=st.integers(0, 3))
def test_counts_do_not_depend_on_batching(shared_data, texts, cut):
    fast = counter(tokenizer_path(shared_data, "gpt2"), SpecialTokenPolicy(append_eos=True))
    assert fast.count(texts[:cut]) + fast.count(texts[cut:]) == fast.count(texts)
