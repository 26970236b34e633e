"""Why counting a long document in pieces gives exactly the counts of encoding it whole.

Readers cut a long document only just before a single ASCII space with a non-space character
on each side, `...word| word...` (`vocabrisk.corpus.pieces`). Each piece is encoded without
special tokens, and the special tokens the post-processor adds to one document (`<s>`,
`[CLS]`/`[SEP]`, `</s>`) are counted once, from an empty document. That is exact when nothing
in the tokenizer joins the text on the two sides of such a space:

- `split-before-space`: the pre-tokenizer splits there anyway. ByteLevel with its regex
  (GPT-2, GPT-NeoX: the space starts the next pre-token, ` ?\\p{L}+`), BERT's, Whitespace and
  WhitespaceSplit (the space is dropped), Metaspace with splitting (the `▁` it becomes starts
  the next word, so no second `▁` is prepended), and GPT-4-style Split regexes. The piece
  after the cut starts with the space and is encoded with it.
- `sentencepiece-words`: no pre-tokenizer, the normalizer prepends `▁` and turns spaces into
  `▁` (Llama 2), and no vocabulary entry holds a `▁` after another character, so no BPE merge
  can cross the `▁` that starts a word. The piece after the cut is encoded without its space:
  the prepended `▁` stands for it. Next to an added token (`<unk>`) that does not hold, as the
  text around one is normalized apart, so there the pieces are joined and encoded together.

The normalizer must act on single characters (Unicode forms, lower-casing, BERT's cleaning,
SentencePiece's precompiled map, replacing runs of 2+ spaces), and no added token may hold a
space next to other text or strip the whitespace after it. Any other tokenizer gets no rule:
its long documents are joined and encoded whole, up to the one size limit (`LongDocument`). The test
`tests/test_pieces.py` checks the equality on every shared tokenizer.
"""

from __future__ import annotations

import json

import numpy as np

from vocabrisk.counting.counts import TokenCounts, utf8_size

SPLIT_BEFORE_SPACE = "split-before-space"
SENTENCEPIECE_WORDS = "sentencepiece-words"

_CHAR_NORMALIZERS = {"NFC", "NFD", "NFKC", "NFKD", "Lowercase", "BertNormalizer", "Precompiled", "StripAccents", "Nmt"}
_SPLITTING = {"BertPreTokenizer", "Whitespace", "WhitespaceSplit"}
_RUNS_OF_SPACES = (" {2,}", "  +")
MAX_HELD_CHARS = 64 << 20  # the most of one document held unencoded (vocabrisk.corpus.pieces.MAX_UNCUT_BYTES)


def cut_rule(tokenizer_json: str) -> str | None:
    """How pieces of a long document add up exactly under this tokenizer (see module docstring),
    or None when no rule is known to be exact."""
    spec = json.loads(tokenizer_json)
    if not _added_tokens_allow(spec.get("added_tokens") or []):
        return None
    normalizers = _flatten(spec.get("normalizer"), "normalizers")
    prepends = [n for n in normalizers if n.get("type") == "Prepend"]
    if not all(_char_local(n) or n in prepends for n in normalizers):
        return None
    pre_tokenizers = _flatten(spec.get("pre_tokenizer"), "pretokenizers")
    if not prepends and any(_splits_before_space(p) for p in pre_tokenizers):
        return SPLIT_BEFORE_SPACE
    if not pre_tokenizers and _sentencepiece_words(normalizers, prepends, spec.get("model") or {}):
        return SENTENCEPIECE_WORDS
    return None


def matched_added_tokens(tokenizer_json: str, split_special_tokens: bool) -> tuple[str, ...]:
    """The added tokens the tokenizer finds in text: all, less special ones when they are split."""
    added = json.loads(tokenizer_json).get("added_tokens") or []
    return tuple(t["content"] for t in added if t.get("content") and not (split_special_tokens and t.get("special")))


def _flatten(node: dict | None, key: str) -> list[dict]:
    if not node:
        return []
    if node.get("type") == "Sequence":
        return [leaf for child in node.get(key, []) for leaf in _flatten(child, key)]
    return [node]


def _char_local(normalizer: dict) -> bool:
    kind = normalizer.get("type")
    if kind == "Replace":
        pattern = normalizer.get("pattern") or {}
        if "String" in pattern:
            return " " not in pattern["String"] or pattern["String"] == " "
        return pattern.get("Regex") in _RUNS_OF_SPACES
    return kind in _CHAR_NORMALIZERS


def _splits_before_space(pre: dict) -> bool:
    kind = pre.get("type")
    if kind == "ByteLevel":
        return pre.get("use_regex", True)
    if kind == "Metaspace":
        return pre.get("split", True)
    if kind == "Split":
        regex = (pre.get("pattern") or {}).get("Regex", "")
        return "\\s+(?!\\S)" in regex and pre.get("behavior") in ("Isolated", "Removed")
    return kind in _SPLITTING


def _sentencepiece_words(normalizers: list[dict], prepends: list[dict], model: dict) -> bool:
    replaces_spaces = any(
        n.get("type") == "Replace" and (n.get("pattern") or {}).get("String") == " " and n.get("content") == "▁"
        for n in normalizers
    )
    if not (replaces_spaces and [p.get("prepend") for p in prepends] == ["▁"]):
        return False
    vocab = model.get("vocab")
    tokens = vocab.keys() if isinstance(vocab, dict) else [entry[0] for entry in vocab or []]
    return not any("▁" in token.lstrip("▁") for token in tokens)


def _added_tokens_allow(added: list[dict]) -> bool:
    for token in added:
        content = token.get("content", "")
        if token.get("rstrip") or (" " in content and (content.strip() or content == " ")):
            return False
    return True


class CannotCount(ValueError):
    """A long document this tokenizer cannot count exactly within the size limit."""


class LongDocument:
    """Counts one document that arrives in pieces, so that the sum is its exact count.

    Pieces are encoded as they come where the cut rule allows; what cannot be encoded yet is
    held (the last piece under `sentencepiece-words`, whose neighbour decides how its space is
    encoded; everything for a tokenizer with no rule), up to `limit` characters.
    """

    def __init__(self, counter, limit: int = MAX_HELD_CHARS):
        self.counter = counter
        self.limit = limit
        self.held: list[str] = []  # pieces not encoded yet, to be joined
        self.drop_space = False  # whether the held text's leading space is the prepended ▁'s

    def add(self, texts: list[str], first_part: int) -> TokenCounts:
        """Take the next pieces; the counts of what could be encoded now."""
        rule, counter = self.counter.cut_rule, self.counter
        text_bytes = sum(map(utf8_size, texts))
        counts = np.zeros(counter.vocab_size, dtype=np.int64)
        if rule == SPLIT_BEFORE_SPACE:
            counts += counter.encode_plain(texts)
        else:
            for index, text in enumerate(texts, first_part):
                if rule == SENTENCEPIECE_WORDS and index > 0 and self._safe_cut(text):
                    counts += self._flush()
                    self.drop_space = True
                self.held.append(text)
            if sum(map(len, self.held)) > self.limit:
                raise CannotCount(self._too_long(rule))
        return TokenCounts(counts, 0, text_bytes)

    def finish(self) -> TokenCounts:
        """The counts still held, plus the document's special tokens; counts the document."""
        counts = self._flush() + self.counter.document_extras()
        return TokenCounts(counts, documents=1)

    def _safe_cut(self, text: str) -> bool:
        """Whether the cut before `text` may drop its space: not next to an added token, since
        the text after one is normalized apart, with a ▁ of its own."""
        tokens = self.counter.matched_tokens
        return not (self.held and self.held[-1].endswith(tokens)) and not text[1:].startswith(tokens)

    def _flush(self) -> np.ndarray:
        if not self.held:
            return np.zeros(self.counter.vocab_size, dtype=np.int64)
        text = "".join(self.held)
        if self.drop_space:
            text = text[1:]
        self.held, self.drop_space = [], False
        return self.counter.encode_plain([text])

    def _too_long(self, rule: str | None) -> str:
        why = (
            "this tokenizer has no pre-tokenizer split that makes counting it in pieces exact"
            if rule is None
            else "added tokens next to every place it could be cut"
        )
        return (
            f"document over {self.limit:,} characters that cannot be cut ({why}; see vocabrisk.counting.pieces),"
            " so it cannot be counted in bounded memory; split the document"
        )
