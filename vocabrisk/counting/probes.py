"""Hard strings an accelerated engine must encode exactly as the reference does before it may count.

Tokenizers differ most where text is unusual: runs and mixes of whitespace, emoji sequences, scripts
without spaces, characters a vocabulary lacks (byte fallback), text that normalizes (NFC, NFKC
compatibility forms), added and special tokens in every position, and what a pre-tokenizer splits
(contractions, digits, punctuation, code). `probe_texts` gives these, plus each added token of the
tokenizer itself in context; `vocabrisk.counting.engines` compares both engines' ids on them, and on
the first documents of every scan.
"""

from __future__ import annotations

import numpy as np

PROBES: tuple[str, ...] = (
    # whitespace: runs, mixes, at the ends, alone
    "",
    " ",
    "   ",
    "\t",
    "\n",
    "\n\n\n",
    "\r\n",
    " \n \t \r\n ",
    "a  b   c    d",
    "a\t\tb\n\nc \n d",
    "   leading spaces",
    "trailing spaces   ",
    "line one\nline two\n\n\nline five\n",
    "\u00a0no-break\u2009thin\u3000ideographic\u2028line\u2029paragraph\u0085next",
    "zero\u200bwidth\u200djoiner\u200cnon\ufeffbom",
    # what pre-tokenizers split: contractions, case, digits, punctuation
    "Hello, world! How are you?",
    "don't won't I'm you're we've they'd it's O'Neil 'quoted'",
    "DON'T WON'T I'M YOU'RE",
    "HeLLo WoRLD camelCaseWords snake_case_words kebab-case-words",
    "0 12 345 6789 1234567890 3.14159 -2.5e-10 1,000,000 2024-01-31 12:30:45",
    "½ ¾ ² ³ ① ⑳ Ⅻ ٣ ४ ๕ ５",
    "!!! ??? ... --- === *** ### $$$ %%% &&& ((())) [[[]]] {{{}}}",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "Donaudampfschifffahrtsgesellschaftskapitän pneumonoultramicroscopicsilicovolcanoconiosis",
    # code and markup
    "def f(x):\n    return x ** 2  # square\n\n\nclass A:\n\tpass\n",
    "for (int i = 0; i < n; ++i) { a[i] += b[i] >> 2; }",
    '<html><body class="x">&amp;&lt;&#x27;</body></html>',
    "https://example.com/a/b?c=1&d=%20e#frag user@example.org",
    "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=",
    "3f786850e387550fdab836ed7e6dc881de23001b",
    '{"key": [1, 2.5, null, true], "nested": {"a": "b"}}',
    # emoji: modifiers, joiners, flags, keycaps
    "😀 😂 👍 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇩🇪🇯🇵 1️⃣ ❤️",
    "😀😀😀😀😀",
    # scripts without spaces, and many others
    "中文字符的测试，包括标点。还有数字123。",
    "日本語のテキスト、ひらがなとカタカナ（全角）。",
    "한국어 문장입니다. 띄어쓰기도 있습니다!",
    "Ελληνικά Русский текст Українська עברית العربية हिन्दी ไทยภาษา ქართული Հայերեն",
    "𠀀𠀁𪚥 𓀀𓁐 ꙮ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \U0010fffd \ue000",
    # normalization: NFC/NFD pairs, NFKC compatibility forms, case
    "café cafe\u0301 Å A\u030a \u212b ñ n\u0303",
    "ﬁ ﬂ ﬀ ﬃ Ａ Ｂ ｃ ｶﾀｶﾅ ㎏ ㎞ ℌ ℍ ™ …",
    "İstanbul ß ẞ ǅ Σίσυφος",
    # control characters and rare bytes
    "\x00\x01\x02\x07\x08\x0b\x0c\x0e\x1b\x7f",
    "\x80\x9f\u00ad soft\u00adhyphen",
)

# Letters of recent Unicode versions (15.0 to 17.0), a few from each new block. An engine built on older tables
# reads them as symbols, and a regex pre-tokenizer then splits around them otherwise: tokenizers 1.0.0rc3 knows
# Unicode 17, and gives GPT-2 "\U000323b0's" as the letter's bytes and "'s", where tokenizers 0.23 and fastokens
# 0.3.5 give the letter's bytes with "'", then "s" (4,657 code points differ so; docs/PERFORMANCE.md, "Engines").
RECENT_LETTERS = (
    0x0088F, 0x00C5C, 0x00CDC, 0x0A7CE, 0x10940, 0x10EC5, 0x11DB0, 0x16EA0, 0x16FF2, 0x187F8, 0x18D09, 0x18D80,
    0x1E6C0, 0x2B73A, 0x2CEA2, 0x323B0, 0x33479,  # 17.0
    0x10D40, 0x11380, 0x16D40, 0x1E5D0, 0x105C0,  # 16.0
    0x11F04, 0x1E4D0, 0x31350, 0x0A7D5,  # 15.0 and 15.1
)  # fmt: skip
PROBES += tuple(f"{chr(c)}'s {chr(c)}1 x{chr(c)}! {chr(c) * 2}" for c in RECENT_LETTERS)


def probe_texts(spec: dict, limit: int = 400) -> list[str]:
    """The built-in probes, and each added token of the tokenizer (SPEC, its parsed tokenizer.json; up to LIMIT
    of them) alone, doubled, inside a word, between spaces and at a line's end: where added-token matching
    (its lstrip, rstrip, single_word and normalized flags) decides the ids."""
    texts = list(PROBES)
    added = spec.get("added_tokens") if isinstance(spec, dict) else None
    for token in (added if isinstance(added, list) else [])[:limit]:
        content = token.get("content") if isinstance(token, dict) else None
        if content:
            texts += [content, content * 2, f"a{content}b", f" {content} ", f"x  {content}\n", content.upper()]
    texts.append("".join(PROBES))  # all of it as one document
    return texts


def first_difference(texts: list[str], expected: list[np.ndarray], found: list[np.ndarray]) -> str | None:
    """Where two engines' ids first differ, in words (None where they never do)."""
    for text, want, got in zip(texts, expected, found, strict=True):
        if np.array_equal(want, got):
            continue
        at = next((i for i, (a, b) in enumerate(zip(want, got, strict=False)) if a != b), min(len(want), len(got)))
        shown = text if len(text) <= 60 else text[:57] + "..."
        return (
            f"{shown!r} ({len(text):,} characters): {len(want):,} ids against {len(got):,}, first different at"
            f" id {at} ({_ids(want, at)} against {_ids(got, at)})"
        )
    return None


def _ids(ids: np.ndarray, at: int) -> str:
    return "[" + ", ".join(str(int(i)) for i in ids[at : at + 4]) + (", ...]" if len(ids) > at + 4 else "]")
