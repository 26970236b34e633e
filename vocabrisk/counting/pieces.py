"""Why counting a long document in pieces gives exactly the counts of encoding it whole.

Readers cut a long document just before a single ASCII space with a non-space character on
each side, `...word| word...`, and in text without such a space between a letter or digit
and a punctuation mark (`punct`) or between an ASCII letter and digit (`digit`), each piece
saying which (`vocabrisk.corpus.pieces`). Pieces are encoded apart only across the kinds of
cut the tokenizer splits at anyway (`exact_cuts`), and joined again across any other. Each
piece is encoded without special tokens, and the special tokens the post-processor adds to
one document (`<s>`, `[CLS]`/`[SEP]`, `</s>`) are counted once, from an empty document. That
is exact at a space when nothing in the tokenizer joins the text on its two sides:

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
its long documents are joined and encoded whole, up to the size limit (`LongDocument`).

`punct` and `digit` cuts need more of the pre-tokenizer: every one of them must split there.
ByteLevel's regex (with no prefix space) matches letters, digits and other characters in runs
of their own (a `'` starts a contraction, so no cut follows one); BERT's splits off every
punctuation mark, and Whitespace's `\\w+|[^\\w\\s]+` splits word characters from others (`_` is
one, so no cut is next to it). Next to an added token such a cut is not taken, since the text
around one is split off before pre-tokenizing. The test `tests/counting/test_pieces.py` checks the
equality on every shared tokenizer.
"""

from __future__ import annotations

import json

from vocabrisk.corpus.pieces import DIGIT, MAX_UNCUT_CHARS, PUNCT, SPACE
from vocabrisk.counting.counts import TokenCounts, utf8_size

SPLIT_BEFORE_SPACE = "split-before-space"
SENTENCEPIECE_WORDS = "sentencepiece-words"

_CHAR_NORMALIZERS = {"NFC", "NFD", "NFKC", "NFKD", "Lowercase", "BertNormalizer", "Precompiled", "StripAccents", "Nmt"}
_SPLITTING = {"BertPreTokenizer", "Whitespace", "WhitespaceSplit"}
_RUNS_OF_SPACES = (" {2,}", "  +")


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


def exact_cuts(tokenizer_json: str) -> frozenset[str]:
    """The kinds of cut (`vocabrisk.corpus.pieces`) at which pieces count exactly under this tokenizer.

    A `space` cut under either rule. Under `split-before-space`, a `punct` cut too where every
    pre-tokenizer splits a letter or digit from a punctuation mark (GPT-2's ByteLevel regex,
    BERT's, Whitespace), and a `digit` cut where each is ByteLevel's regex, which splits letters
    from digits; ByteLevel must not add a prefix space, which a piece not starting with a space
    would get. Next to an added token no cut but a space is taken (`LongDocument`).
    """
    rule = cut_rule(tokenizer_json)
    if rule is None:
        return frozenset()
    cuts = {SPACE}
    pre_tokenizers = _flatten(json.loads(tokenizer_json).get("pre_tokenizer"), "pretokenizers")
    if rule == SPLIT_BEFORE_SPACE:
        if all(_byte_level_regex(p) or p.get("type") in ("BertPreTokenizer", "Whitespace") for p in pre_tokenizers):
            cuts.add(PUNCT)
        if all(_byte_level_regex(p) for p in pre_tokenizers):
            cuts.add(DIGIT)
    return frozenset(cuts)


def _byte_level_regex(pre: dict) -> bool:
    return pre.get("type") == "ByteLevel" and pre.get("use_regex", True) and not pre.get("add_prefix_space", True)


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


def _touches(before: str, after: str, tokens: tuple[str, ...]) -> bool:
    """Whether an added token (in any case: normalizers may lower-case) crosses or touches the
    cut between `before` and `after`."""
    if not tokens:
        return False
    reach = max(map(len, tokens))
    window = (before[-reach:] + after[:reach]).lower()
    cut = min(len(before), reach)
    for token in tokens:
        token = token.lower()
        start = window.find(token, max(cut - len(token), 0))
        if 0 <= start <= cut:
            return True
    return False


class CannotCount(ValueError):
    """A long document this tokenizer cannot count exactly within the size limit."""


class LongDocument:
    """Counts one document that arrives in pieces, so that the sum is its exact count.

    The pieces since the last cut this tokenizer counts exactly at (`exact_cuts`) are held, and
    encoded joined once the next such cut comes, or the end: at least the last piece (whose
    neighbour decides whether it may be encoded apart), everything for a tokenizer with no rule,
    up to `limit` characters.
    """

    def __init__(self, counter, limit: int = MAX_UNCUT_CHARS):
        self.counter = counter
        self.limit = limit
        self.held: list[str] = []  # pieces not encoded yet, to be joined
        self.drop_space = False  # whether the held text's leading space is the prepended ▁'s

    def add(self, texts: list[str], first_part: int, cuts: list[str]) -> TokenCounts:
        """Take the next pieces and the kind of cut before each; the counts of what could be encoded now."""
        ready = []
        for index, (text, cut) in enumerate(zip(texts, cuts, strict=True), first_part):
            if index > 0 and self._exact(cut, text):
                ready.append(self._take())
                self.drop_space = self.counter.cut_rule == SENTENCEPIECE_WORDS
            self.held.append(text)
        if sum(map(len, self.held)) > self.limit:
            raise CannotCount(self._too_long(self.counter.cut_rule))
        counted = self.counter.encode_plain(ready) if ready else TokenCounts.zeros(self.counter.vocab_size)
        counted.text_bytes = sum(map(utf8_size, texts))
        return counted

    def finish(self) -> TokenCounts:
        """The counts still held, plus the document's special tokens; counts the document."""
        counted = self.counter.encode_plain([self._take()])
        counted.counts += self.counter.document_extras()
        counted.documents = 1
        return counted

    def _exact(self, cut: str, text: str) -> bool:
        """Whether the pieces before and from `text` may be encoded apart."""
        if cut not in self.counter.exact_cuts:
            return False
        tokens = self.counter.matched_tokens
        if cut != SPACE:
            return not _touches(self.held[-1], text, tokens)
        if self.counter.cut_rule != SENTENCEPIECE_WORDS:
            return True
        # the space may be dropped: not next to an added token, since the text after one is
        # normalized apart, with a ▁ of its own
        return not self.held[-1].endswith(tokens) and not text[1:].startswith(tokens)

    def _take(self) -> str:
        """The held pieces, joined, to be encoded; none are held after."""
        text = "".join(self.held)
        if self.drop_space:
            text = text[1:]
        self.held, self.drop_space = [], False
        return text

    def _too_long(self, rule: str | None) -> str:
        why = {
            None: "this tokenizer has no pre-tokenizer split that makes counting it in pieces exact",
            SENTENCEPIECE_WORDS: "no space between words not next to an added token: with no pre-tokenizer,"
            " this tokenizer may join any other text",
            SPLIT_BEFORE_SPACE: "no place in it where this tokenizer's pre-tokenizer splits (BERT's, say, not"
            " between letters and digits), or an added token next to each",
        }[rule]
        return (
            f"document over {self.limit:,} characters that cannot be cut ({why}; see vocabrisk.counting.pieces),"
            " so it cannot be counted in bounded memory; split the document"
        )
