"""Long documents in bounded pieces: peak memory must not depend on the size of a file or line.

A document (a whole text file by default, one long line, or a long record's text) is decoded as
it streams in and handed on in pieces of about `PIECE_CHARS` characters. A piece ends only where
the pre-tokenizers `vocabrisk.counting.pieces` knows split anyway, each piece saying which kind
of place it starts at (its `cut`):

- `space`: just before a single ASCII space with a non-space character on each side
  (`...word| word...`), where every whitespace-splitting pre-tokenizer cuts; preferred.
- `punct`: between a letter or digit and a punctuation mark (ASCII ones but `_`, and the common
  CJK ones), either way round, though not after an apostrophe (`'s` is a pre-token of its own
  in GPT-2's regex): minified JSON and code, base64, URLs, CJK text without spaces.
- `digit`: between an ASCII letter and an ASCII digit, either way round: hashes, hex.

Which kinds count exactly under which tokenizer is the counter's business; it joins pieces again
across a cut its tokenizer does not split at. A run of more than `MAX_UNCUT_CHARS` characters with
no place to cut is skipped with a clear reason, as are records that must be parsed whole (a
JSON Lines line, a JSON file, a CSV line) beyond `MAX_UNCUT_BYTES`.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable, Iterator

from vocabrisk.corpus.datatypes import Document, Skipped

PIECE_CHARS = 1 << 18  # a longer document is handed on in pieces of about this many characters
MAX_UNCUT_CHARS = 2 << 20  # the most text with no place to cut that is held, and encoded, whole
MAX_UNCUT_BYTES = 64 << 20  # the most a record that must be parsed whole may hold
CHUNK_BYTES = 1 << 20  # bytes read per call
SNIFF_BYTES = 8192
MAX_UNCUT_TEXT = f"{MAX_UNCUT_BYTES >> 20} MiB"

SPACE, PUNCT, DIGIT = "space", "punct", "digit"
_WORD = "A-Za-z0-9\u3041-\u3096\u4e00-\u9fa5\uac00-\ud7a3"  # letters since Unicode 1.1: ASCII, kana, CJK, Hangul
_MARKS = "!-&(-/:-@\\[\\]^`{-~\u3001\u3002\u300c-\u300f\uff01\uff08\uff09\uff0c\uff0e\uff1a\uff1b\uff1f"
PUNCTUATION = _MARKS + "'"  # the marks a `punct` cut may be next to (an apostrophe only before it)
_CUTS = {
    PUNCT: re.compile(f"(?<=[{_WORD}])(?=[{PUNCTUATION}])|(?<=[{_MARKS}])(?=[{_WORD}])"),
    DIGIT: re.compile("(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])"),
}

# (byte offset in the document, newlines before it, byte offset of the line it is on) -> reason
Describe = Callable[[int, int, int], str]


class TooLarge(ValueError):
    """A record that must be read whole is over MAX_UNCUT_BYTES."""


def cut_point(text: str, start: int = 1, stop: int | None = None) -> int | None:
    """The last index start <= i < stop where text[i] is a space with non-whitespace on both sides."""
    end = len(text) - 1 if stop is None else min(stop, len(text) - 1)
    start = max(start, 1)
    while end > start:
        i = text.rfind(" ", start, end)
        if i < 0:
            return None
        if not text[i - 1].isspace() and not text[i + 1].isspace():
            return i
        end = i
    return None


def find_cut(text: str, start: int = 1, piece_chars: int = PIECE_CHARS) -> tuple[int, str] | None:
    """Where to end a piece of `text` (no place before `start` was found), and the kind of cut: the last
    `space` cut up to `piece_chars`, else the last after it, else the first `punct`, else `digit`, cut at or
    after `piece_chars`. (A piece ends near `piece_chars`, not at the last space of what was read: 0.2x
    encoders hold ~200 bytes a character while they encode a piece, and a piece of all that one read brings,
    1 MiB, took a scan of short words past 500 MB.)"""
    space = cut_point(text, start, piece_chars + 1)
    if space is None:
        space = cut_point(text, max(start, piece_chars))
    if space is not None:
        return space, SPACE
    for kind, pattern in _CUTS.items():
        found = pattern.search(text, max(start, piece_chars), len(text) - 1)
        if found:
            return found.start(), kind
    return None


class _Cutter:
    """Cuts one document's text, as it comes, into pieces (see the module docstring)."""

    def __init__(self, path: str, locator: str, piece_chars: int):
        self.path, self.locator, self.piece_chars = path, locator, piece_chars
        self.text, self.part, self.cut, self.searched = "", 0, "", 1

    def add(self, text: str) -> Iterator[Document]:
        """The pieces `text` completes; raises _Uncuttable past MAX_UNCUT_CHARS with no place to cut."""
        self.text += text
        while len(self.text) >= 2 * self.piece_chars:
            found = find_cut(self.text, self.searched, self.piece_chars)
            if found is None:
                if len(self.text) > MAX_UNCUT_CHARS:
                    raise _Uncuttable(len(self.text))
                self.searched = len(self.text) - 1
                return
            at, kind = found
            yield Document(self.text[:at], self.path, self.locator, self.part, False, self.cut)
            self.text, self.part, self.cut, self.searched = self.text[at:], self.part + 1, kind, 1

    def finish(self, strip_newline: bool) -> Iterator[Document]:
        text = self.text
        if strip_newline:
            text = text[:-2] if text.endswith("\r\n") else text[:-1] if text.endswith("\n") else text
        if self.part == 0:
            if text:
                yield Document(text, self.path, self.locator)
        else:
            yield Document(text, self.path, self.locator, self.part, True, self.cut)


class _Uncuttable(Exception):
    def __init__(self, chars: int):
        super().__init__(
            f"over {MAX_UNCUT_CHARS:,} characters of text ({chars:,} so far) with no place to cut it at"
            " (a space between words, punctuation, or a digit next to a letter), so it cannot be counted"
            " in bounded memory; split the document"
        )


def text_pieces(document: Document, piece_chars: int = PIECE_CHARS) -> Iterator[Document | Skipped]:
    """A long document already in memory (a record's text), in pieces."""
    cutter = _Cutter(document.source, document.locator, piece_chars)
    try:
        yield from cutter.add(document.text)
    except _Uncuttable as exc:
        yield Skipped(document.source, document.locator, str(exc), len(document.text.encode("utf-8")))
        return
    yield from cutter.finish(strip_newline=False)


def read_document(
    parts: Iterator[bytes], path: str, locator: str, describe_error: Describe, strip_newline: bool = False
) -> Iterator[Document | Skipped]:
    """One document from its bytes in bounded `parts`: decoded at once when it is short (the
    common, fast case), else streamed in pieces by `document_pieces`."""
    head: list[bytes] = []
    size = 0
    for part in parts:
        head.append(part)
        size += len(part)
        if size > PIECE_CHARS:
            yield from document_pieces(itertools.chain(head, parts), path, locator, describe_error, strip_newline)
            return
    yield from whole_document(b"".join(head), path, locator, describe_error, strip_newline)


def whole_document(
    data: bytes, path: str, locator: str, describe_error: Describe, strip_newline: bool = False
) -> Iterator[Document | Skipped]:
    """A short document held whole: decoded at once."""
    size = len(data)
    if strip_newline:
        data = data[:-2] if data.endswith(b"\r\n") else data[:-1] if data.endswith(b"\n") else data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        yield Skipped(path, locator, describe_error(exc.start, data.count(b"\n", 0, exc.start), line_start), size)
        return
    if text:
        yield Document(text, path, locator)


def document_pieces(
    fragments: Iterable[bytes],
    path: str,
    locator: str,
    describe_error: Describe,
    strip_newline: bool = False,
    piece_chars: int = PIECE_CHARS,
) -> Iterator[Document | Skipped]:
    """One document read from `fragments` (its bytes, in bounded parts): a single Document when
    it is short, else pieces (`part` 0, 1, ... with `last` on the final one, `cut` on all but
    the first).

    Invalid UTF-8 or a run of text with no place to cut ends the document with a Skipped,
    after which the pieces already handed on must be discarded (the counter does).
    `strip_newline` drops a final "\\n" or "\\r\\n" (line and paragraph documents).
    """
    cutter, pending = _Cutter(path, locator, piece_chars), b""
    consumed = newlines = line_start = 0  # over the bytes decoded so far
    for fragment in fragments:
        data = pending + fragment
        decoded, pending, error = _decode(data)
        if error is not None:
            offset = consumed + error
            newlines_before = newlines + data.count(b"\n", 0, error)
            last_newline = data.rfind(b"\n", 0, error)
            start = consumed + last_newline + 1 if last_newline >= 0 else line_start
            yield Skipped(path, locator, describe_error(offset, newlines_before, start), consumed + len(data))
            return
        size = len(data) - len(pending)
        newlines += data.count(b"\n", 0, size)
        last_newline = data.rfind(b"\n", 0, size)
        if last_newline >= 0:
            line_start = consumed + last_newline + 1
        consumed += size
        try:
            yield from cutter.add(decoded)
        except _Uncuttable as exc:
            yield Skipped(path, locator, str(exc), consumed)
            return
    if pending:  # ends inside a multi-byte character
        yield Skipped(path, locator, describe_error(consumed, newlines, line_start), consumed + len(pending))
        return
    yield from cutter.finish(strip_newline)


def _decode(data: bytes) -> tuple[str, bytes, int | None]:
    """(text, trailing bytes of an unfinished character, offset of invalid UTF-8 or None)."""
    try:
        return data.decode("utf-8"), b"", None
    except UnicodeDecodeError as exc:
        if exc.end == len(data) and len(data) - exc.start < 4 and exc.reason == "unexpected end of data":
            return data[: exc.start].decode("utf-8"), data[exc.start :], None
        return "", b"", exc.start


def bounded_lines(stream, limit: int = MAX_UNCUT_BYTES) -> Iterator[bytes]:
    """The stream's lines; a line over `limit` bytes raises TooLarge (after its line number is known)."""
    number = 0
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        number += 1
        if len(line) > limit:
            raise TooLarge(f"line {number} is over {MAX_UNCUT_TEXT}, the most read whole")
        yield line


def line_fragments(stream, head: bytes = b"") -> Iterator[bytes]:
    """The stream's bytes in parts that end where lines end; a part not ending in a newline is
    either at least CHUNK_BYTES long (a long line goes on) or the last (`head`: bytes already
    read from the stream's start)."""
    start = 0
    while (end := head.find(b"\n", start)) >= 0:
        yield head[start : end + 1]
        start = end + 1
    part = head[start:] + stream.readline(CHUNK_BYTES)  # a line begun in `head` goes on in one part
    if part:
        yield part
        yield from iter(functools.partial(stream.readline, CHUNK_BYTES), b"")


def skip_rest_of_line(first: bytes, stream) -> int:
    """Read past the rest of a line whose start `first` was too long; its length in bytes."""
    size, part = len(first), first
    while part and not part.endswith(b"\n"):
        part = stream.readline(CHUNK_BYTES)
        size += len(part)
    return size
