"""Plain text: a file, a line or a paragraph is one document.

Everything is streamed in bounded parts (`vocabrisk.corpus.pieces`): a document longer than
a piece, a whole file by default, is handed on in pieces, so memory does not grow with the
size of a file or a line.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import BinaryIO

from vocabrisk.corpus.datatypes import Document, ReadOptions, Skipped, Source
from vocabrisk.corpus.pieces import CHUNK_BYTES, SNIFF_BYTES, line_fragments, read_document, whole_document
from vocabrisk.corpus.positions import Position

BINARY_REASON = (
    "looks like a binary file (NUL bytes in the first 8 KiB), so it was not read;"
    " if it is UTF-16 or UTF-32 text, re-encode it as UTF-8"
)
REENCODE = "re-encode the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)"


def read_text(
    stream: BinaryIO, source: Source, options: ReadOptions, position: Position
) -> Iterator[Document | Skipped]:
    """Documents of a text file, exactly as stored (no stripping, "\\r\\n" kept).

    With text_unit "file" the whole file is one document; with "line" or "paragraph"
    (blank-line separated) the line ending after each document is dropped. Empty documents
    are not yielded. A file whose first 8 KiB hold a NUL byte is skipped as binary before
    anything more of it is read.
    """
    head = stream.read(SNIFF_BYTES)
    if b"\0" in head:
        yield Skipped(source.path, "file", BINARY_REASON, source.size)
        return
    if options.text_unit == "file":
        chunks = itertools.chain([head], iter(lambda: stream.read(CHUNK_BYTES), b""))
        for item in read_document(chunks, source.path, "file", _file_error):
            # a file given up on part-way is left out whole: all its bytes on disk
            yield replace(item, size=source.size) if isinstance(item, Skipped) and source.size else item
    elif options.text_unit == "line":
        yield from _by_line(line_fragments(stream, head), source.path, position)
    else:
        yield from _by_paragraph(_Fragments(line_fragments(stream, head)), source.path, position)


def _file_error(offset: int, newlines: int, line_start: int) -> str:
    return f"invalid UTF-8 at byte {offset} (line {newlines + 1}); {REENCODE}"


def _line_error(offset: int, newlines: int, line_start: int) -> str:
    return f"invalid UTF-8 at byte {offset} of the line; {REENCODE}"


def _paragraph_error(first: int) -> Callable[[int, int, int], str]:
    def error_at(offset: int, newlines: int, line_start: int) -> str:
        return f"invalid UTF-8 on line {first + newlines} (byte {offset - line_start} of that line); {REENCODE}"

    return error_at


class _Fragments:
    """The stream's line fragments (`line_fragments`), with the number of the line being read."""

    def __init__(self, fragments: Iterator[bytes]):
        self._fragments = fragments
        self.line = 0  # lines begun so far
        self.line_ended = True  # whether the last fragment handed out ended its line

    def next_line_start(self) -> bytes | None:
        """The first fragment of the next line, None at the end."""
        fragment = next(self._fragments, None)
        if fragment is not None:
            self.line += 1
            self.line_ended = fragment.endswith(b"\n")
        return fragment

    def rest_of_line(self) -> Iterator[bytes]:
        """The remaining fragments of the line begun last."""
        while not self.line_ended:
            fragment = next(self._fragments, None)
            if fragment is None:
                return
            self.line_ended = fragment.endswith(b"\n")
            yield fragment


def _by_line(fragments: Iterator[bytes], path: str, position: Position) -> Iterator[Document | Skipped]:
    number = 0
    for first in fragments:
        number += 1
        position.done = number
        if first[-1:] == b"\n" or len(first) < CHUNK_BYTES:  # the whole line in one part: the common case
            data = first[:-2] if first[-2:] == b"\r\n" else first[:-1] if first[-1:] == b"\n" else first
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                yield from whole_document(first, path, f"line {number}", _line_error, strip_newline=True)
                continue
            if text:
                yield Document(text, path, f"line {number}")
            continue
        parts = _rest_of_line(first, fragments)
        yield from read_document(parts, path, f"line {number}", _line_error, strip_newline=True)
        for _ in parts:  # what an invalid line left unread
            pass


def _rest_of_line(first: bytes, fragments: Iterator[bytes]) -> Iterator[bytes]:
    """A long line's parts: `first`, then the fragments up to the one that ends the line."""
    part = first
    yield part
    while part[-1:] != b"\n" and (part := next(fragments, b"")):
        yield part


def _by_paragraph(fragments: _Fragments, path: str, position: Position) -> Iterator[Document | Skipped]:
    first = fragments.next_line_start()
    while first is not None:
        if _is_blank(first):
            position.done = fragments.line
            first = fragments.next_line_start()
            continue
        start = fragments.line
        following: list[bytes | None] = []  # the first fragment after the paragraph, once met
        parts = _paragraph_parts(first, fragments, following)
        yield from read_document(parts, path, f"line {start}", _paragraph_error(start), strip_newline=True)
        for _ in parts:  # what an invalid paragraph left unread
            pass
        first = following[0]  # the blank line after it, or None at the end


def _paragraph_parts(first: bytes, fragments: _Fragments, following: list) -> Iterator[bytes]:
    """The fragments of the paragraph starting with `first`; the blank line (or None at the end)
    that ends it goes into `following`."""
    line = first
    while True:
        yield line
        yield from fragments.rest_of_line()
        line = fragments.next_line_start()
        if line is None or _is_blank(line):
            following.append(line)
            return


def _is_blank(fragment: bytes) -> bool:
    """A line holding only whitespace, given its first fragment: one that does not end its line
    is a long line's start unless it is shorter than a read, which only the file's last line is."""
    return not fragment.strip() and (fragment.endswith(b"\n") or len(fragment) < CHUNK_BYTES)
