"""Long documents in bounded pieces: peak memory must not depend on the size of a file or line.

A document (a whole text file by default, or one long line) is decoded as it streams in and
handed on in pieces of about `PIECE_CHARS` characters. A piece ends just before a single
ASCII space that has a non-space character on each side (`...word| word...`), the one place
where every whitespace-splitting pre-tokenizer cuts anyway; `vocabrisk.counting.pieces` says
which tokenizers that makes exact and how the counter joins the pieces' counts. Text with no
such place for `MAX_UNCUT_BYTES` is skipped with a clear reason, as are records that must be
parsed whole (a JSON Lines line, a JSON file, a CSV line) beyond that size.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Iterator

from vocabrisk.corpus.datatypes import Document, Skipped

PIECE_CHARS = 1 << 18  # a longer document is handed on in pieces of about this many characters (at most twice)
MAX_UNCUT_BYTES = 64 << 20  # the one size limit: what must be held whole (a record, a run with no place to cut)
CHUNK_BYTES = 1 << 20  # bytes read per call
SNIFF_BYTES = 8192
MAX_UNCUT_TEXT = f"{MAX_UNCUT_BYTES >> 20} MiB"

# (byte offset in the document, newlines before it, byte offset of the line it is on) -> reason
Describe = Callable[[int, int, int], str]


class TooLarge(ValueError):
    """A record that must be read whole is over MAX_UNCUT_BYTES."""


def cut_point(text: str, start: int = 1) -> int | None:
    """The last index i >= start where text[i] is a space with non-whitespace on both sides."""
    end = len(text) - 1
    start = max(start, 1)
    while end > start:
        i = text.rfind(" ", start, end)
        if i < 0:
            return None
        if not text[i - 1].isspace() and not text[i + 1].isspace():
            return i
        end = i
    return None


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
    it is short, else pieces (`part` 0, 1, ... with `last` on the final one).

    Invalid UTF-8 or a run of text with no place to cut ends the document with a Skipped,
    after which the pieces already handed on must be discarded (the counter does).
    `strip_newline` drops a final "\\n" or "\\r\\n" (line and paragraph documents).
    """
    text, pending = "", b""
    consumed = newlines = line_start = 0  # over the bytes decoded so far
    part, searched = 0, 1
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
        text += decoded
        while len(text) >= 2 * piece_chars:
            cut = cut_point(text, searched)
            if cut is None:
                if len(text.encode("utf-8")) > MAX_UNCUT_BYTES:
                    yield Skipped(path, locator, _uncuttable(len(text)), consumed)
                    return
                searched = len(text) - 1
                break
            yield Document(text[:cut], path, locator, part=part, last=False)
            text, part, searched = text[cut:], part + 1, 1
    if pending:  # ends inside a multi-byte character
        yield Skipped(path, locator, describe_error(consumed, newlines, line_start), consumed + len(pending))
        return
    if strip_newline:
        text = text[:-2] if text.endswith("\r\n") else text[:-1] if text.endswith("\n") else text
    if part == 0:
        if text:
            yield Document(text, path, locator)
    else:
        yield Document(text, path, locator, part=part, last=True)


def _decode(data: bytes) -> tuple[str, bytes, int | None]:
    """(text, trailing bytes of an unfinished character, offset of invalid UTF-8 or None)."""
    try:
        return data.decode("utf-8"), b"", None
    except UnicodeDecodeError as exc:
        if exc.end == len(data) and len(data) - exc.start < 4 and exc.reason == "unexpected end of data":
            return data[: exc.start].decode("utf-8"), data[exc.start :], None
        return "", b"", exc.start


def _uncuttable(chars: int) -> str:
    return (
        f"over {MAX_UNCUT_TEXT} of text ({chars:,} characters so far) with no single space between words to cut"
        " it at, so it cannot be counted in bounded memory; split the document"
    )


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
