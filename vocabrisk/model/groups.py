"""Token groups: what kind of text each vocabulary row stands for.

A profile reports starved rows by group (a script, digits, whitespace, code symbols, byte
pieces, special tokens) because that is what a user can act on: "add Hangul text" or
"your corpus has no digits" is advice; "row 31,337 is starved" is not.

A 150k-token vocabulary holds about a million characters, so the rules are applied to the
whole vocabulary at once: each distinct character's properties are looked up once, and
the per-token tallies are numpy sums over the concatenated characters.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

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
OTHER_SCRIPTS = "other scripts"
# Column order of the per-token script tallies: a tie goes to the first column, i.e. the
# name that sorts last, so that the choice never depends on the order of the characters.
_SCRIPT_NAMES = sorted({name for _, name in _SCRIPTS} | {OTHER_SCRIPTS}, reverse=True)
_SCRIPT_COLUMN = {name: column for column, name in enumerate(_SCRIPT_NAMES)}


def _script(char: str) -> str:
    name = unicodedata.name(char, "")
    for prefix, script in _SCRIPTS:
        if name.startswith(prefix):
            return script
    return OTHER_SCRIPTS


class _CharTable:
    """The properties the rules read, one array entry per distinct code point (in ascending order)."""

    def __init__(self, codepoints: np.ndarray):
        chars = [chr(c) for c in codepoints]
        self.space = np.array([c.isspace() for c in chars], dtype=bool)
        self.alpha = np.array([c.isalpha() for c in chars], dtype=bool)
        self.digit = np.array([c.isdigit() for c in chars], dtype=bool)
        self.code = np.array([c in CODE_CHARS for c in chars], dtype=bool)
        self.ascii = codepoints < 128
        major = [unicodedata.category(c)[0] for c in chars]
        self.punctuation = np.array([m == "P" for m in major], dtype=bool)
        self.symbol = np.array([m == "S" for m in major], dtype=bool)
        self.number = np.array([m == "N" for m in major], dtype=bool)
        self.script = np.array(
            [_SCRIPT_COLUMN[_script(c)] if a else 0 for c, a in zip(chars, self.alpha, strict=True)], dtype=np.int64
        )


def classify_texts(texts: Sequence[str]) -> np.ndarray:
    """The group of each token text: the majority script of its letters, else its character class.

    Whitespace at either end is ignored (as `str.strip` does). A text with no letters is
    digits if every character is one, code symbols if it is ASCII with a code character,
    then punctuation, emoji & symbols, digits among punctuation, or other.
    """
    n = len(texts)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    codepoints = np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.uint32)
    present = np.bincount(codepoints) if codepoints.size else np.zeros(0, dtype=np.int64)
    distinct = np.flatnonzero(present)
    index = np.zeros(present.size, dtype=np.int64)
    index[distinct] = np.arange(distinct.size)
    which = index[codepoints]  # each character's row in the table of distinct characters
    table = _CharTable(distinct)
    owner = np.repeat(np.arange(n), lengths)  # the token of each character, non-decreasing

    # The stripped text: from each token's first to its last non-space character.
    solid = np.flatnonzero(~table.space[which])
    solid_owner = owner[solid]
    starts = np.flatnonzero(np.diff(solid_owner, prepend=-1))  # each token's first non-space
    ends = np.append(starts[1:] - 1, solid.size - 1)[: starts.size]
    first = np.full(n, codepoints.size)
    last = np.full(n, -1)
    first[solid_owner[starts]] = solid[starts]
    last[solid_owner[starts]] = solid[ends]
    position = np.arange(codepoints.size)
    inside = (position >= first[owner]) & (position <= last[owner])

    def tally(prop: np.ndarray) -> np.ndarray:
        return np.bincount(owner[inside & prop[which]], minlength=n)

    stripped = np.bincount(owner[inside], minlength=n)
    digits = tally(table.digit)
    punctuation = tally(table.punctuation)
    letters = inside & table.alpha[which]
    scripts = np.bincount(
        owner[letters] * len(_SCRIPT_NAMES) + table.script[which[letters]], minlength=n * len(_SCRIPT_NAMES)
    ).reshape(n, len(_SCRIPT_NAMES))

    groups = np.full(n, OTHER, dtype=object)
    punctuation_or_numbers = punctuation + tally(table.number) == stripped
    by_class = [  # first match wins: listed from the last rule to the first, each overwriting
        (punctuation_or_numbers & (digits == 0), PUNCTUATION),
        (punctuation_or_numbers & (digits > 0), DIGITS),
        (tally(table.symbol) > 0, SYMBOLS),
        (punctuation == stripped, PUNCTUATION),
        ((tally(table.code) > 0) & (tally(~table.ascii) == 0), CODE),
        (digits == stripped, DIGITS),
    ]
    for mask, group in by_class:
        groups[mask] = group
    has_letters = scripts.sum(axis=1) > 0
    groups[has_letters] = np.array(_SCRIPT_NAMES, dtype=object)[scripts[has_letters].argmax(axis=1)]
    groups[stripped == 0] = WHITESPACE
    return groups


def token_groups(vocab: Vocabulary) -> np.ndarray:
    """The group name of every token id, as an array of strings."""
    groups = np.full(vocab.size, BYTES, dtype=object)  # what has a surface but is no text is bytes
    text_ids = [token_id for token_id, text in enumerate(vocab.texts) if text is not None]
    groups[text_ids] = classify_texts([vocab.texts[token_id] for token_id in text_ids])
    groups[vocab.byte_fallback_mask] = BYTES
    groups[vocab.added_mask] = ADDED
    groups[vocab.special_mask] = SPECIAL
    groups[vocab.reserved_mask] = UNUSED
    return groups
