"""Token groups: the text rules on known surfaces, and the id-based groups on a real vocabulary."""

from __future__ import annotations

import pytest

from vocabrisk.model.facts import load_facts
from vocabrisk.model.groups import (
    ADDED,
    BYTES,
    CODE,
    DIGITS,
    PUNCTUATION,
    SPECIAL,
    SYMBOLS,
    WHITESPACE,
    classify_texts,
    token_groups,
)
from vocabrisk.model.vocabulary import load_vocabulary

KNOWN = {
    "Hello": "Latin",
    " the": "Latin",  # the leading space of a word piece is ignored
    "Привет": "Cyrillic",
    "αβγ": "Greek",
    "안녕하세요": "Hangul",
    "中文": "CJK",
    "ひらがな": "Japanese kana",
    "カタカナ": "Japanese kana",
    "مرحبا": "Arabic",
    "שלום": "Hebrew",
    "नमस्ते": "Devanagari",
    "ไทย": "Thai",
    "abcд": "Latin",  # majority script of the letters
    "2024": DIGITS,
    "3.14": DIGITS,  # digits among punctuation
    "{}": CODE,
    "=>": CODE,
    "__init__": "Latin",  # letters win over code characters
    "...": PUNCTUATION,
    "¿?": PUNCTUATION,
    "😀": SYMBOLS,
    "€": SYMBOLS,
    "   ": WHITESPACE,
    "\n\n": WHITESPACE,
    "": WHITESPACE,  # nothing left after stripping
}


@pytest.mark.parametrize(("text", "group"), KNOWN.items(), ids=[repr(t) for t in KNOWN])
def test_known_surfaces_get_their_group(text, group):
    assert classify_texts([text])[0] == group


def test_a_token_group_does_not_depend_on_its_neighbours():
    texts = list(KNOWN)
    alone = [classify_texts([t])[0] for t in texts]
    assert list(classify_texts(texts)) == alone
    assert list(classify_texts(texts[::-1])) == alone[::-1]


def test_a_tie_between_scripts_never_depends_on_character_order():
    assert classify_texts(["aд"])[0] == classify_texts(["дa"])[0]


def test_real_vocabularies_group_their_special_byte_and_added_rows(shared_data):
    llama = load_vocabulary(shared_data / "tokenizers" / "llama2" / "tokenizer.json")
    groups = token_groups(llama)
    assert groups[llama.special_mask].tolist() == [SPECIAL] * int(llama.special_mask.sum())
    assert (groups == BYTES).sum() >= 256  # <0x00> ... <0xFF> byte-fallback rows
    bert_path = shared_data / "tokenizers" / "bert-base-uncased" / "tokenizer.json"
    bert = load_vocabulary(bert_path)
    bert_groups = token_groups(bert)
    assert bert_groups[load_facts(bert_path).id_of("[CLS]")] == SPECIAL
    assert ADDED not in set(bert_groups[~bert.added_mask])
    assert (bert_groups == "Latin").sum() > 15_000
