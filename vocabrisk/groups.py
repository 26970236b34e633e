"""Token groups: what kind of text each vocabulary row stands for.

A profile reports starved rows by group (a script, digits, whitespace, code symbols, byte
pieces, special tokens) because that is what a user can act on: "add Hangul text" or
"your corpus has no digits" is advice; "row 31,337 is starved" is not.
"""

from __future__ import annotations

import unicodedata

import numpy as np

from vocabrisk.model.vocabulary import Vocabulary

SPECIAL = "special tokens"
ADDED = "added tokens"
BYTES = "byte pieces"
WHITESPACE = "whitespace"
DIGITS = "digits"
CODE = "code symbols"
PUNCTUATION = "punctuation"
SYMBOLS = "emoji & symbols"
UNUSED = "unused ids"
OTHER = "other"

CODE_CHARS = frozenset("{}[]()<>=+-*/\\|&^%$#@~`;:_")

# Unicode character-name prefixes → script group. Ordered: first match wins.
_SCRIPTS = (
    ("LATIN", "Latin"),
    ("CYRILLIC", "Cyrillic"),
    ("GREEK", "Greek"),
    ("HANGUL", "Hangul"),
    ("CJK", "CJK"),
    ("HIRAGANA", "Japanese kana"),
    ("KATAKANA", "Japanese kana"),
    ("ARABIC", "Arabic"),
    ("HEBREW", "Hebrew"),
    ("DEVANAGARI", "Devanagari"),
    ("BENGALI", "Bengali"),
    ("TAMIL", "Tamil"),
    ("THAI", "Thai"),
    ("GEORGIAN", "Georgian"),
    ("ARMENIAN", "Armenian"),
    ("ETHIOPIC", "Ethiopic"),
)


def _script(char: str) -> str:
    name = unicodedata.name(char, "")
    for prefix, script in _SCRIPTS:
        if name.startswith(prefix):
            return script
    return "other scripts"


def classify_text(text: str) -> str:
    """The group of a token's text: the majority script of its letters, else its character class."""
    stripped = text.strip()
    if not stripped:
        return WHITESPACE
    letters = [c for c in stripped if c.isalpha()]
    if letters:
        scripts: dict[str, int] = {}
        for c in letters:
            s = _script(c)
            scripts[s] = scripts.get(s, 0) + 1
        return max(scripts, key=lambda k: (scripts[k], k))
    if all(c.isdigit() for c in stripped):
        return DIGITS
    if any(c in CODE_CHARS for c in stripped) and all(ord(c) < 128 for c in stripped):
        return CODE
    categories = {unicodedata.category(c)[0] for c in stripped}
    if categories <= {"P"}:
        return PUNCTUATION
    if "S" in categories:
        return SYMBOLS
    if categories <= {"P", "N"}:
        return DIGITS if any(c.isdigit() for c in stripped) else PUNCTUATION
    return OTHER


def classify_token(vocab: Vocabulary, token_id: int) -> str:
    if vocab.is_reserved(token_id):
        return UNUSED
    if token_id in vocab.special_ids:
        return SPECIAL
    if token_id in vocab.added_ids:
        return ADDED
    if vocab.is_byte_fallback(token_id):
        return BYTES
    raw = vocab.surface(token_id)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return BYTES
    if len(raw) == 1 and raw[0] >= 0x80:
        return BYTES
    return classify_text(text)


def token_groups(vocab: Vocabulary) -> np.ndarray:
    """The group name of every token id, as an array of strings."""
    return np.array([classify_token(vocab, i) for i in range(vocab.size)], dtype=object)
