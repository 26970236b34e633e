"""Plain text: a file, a line or a paragraph is one document."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import BinaryIO

from vocabrisk.corpus.datatypes import Document, ReadOptions, Skipped, Source
from vocabrisk.corpus.progress import Position

SNIFF_BYTES = 8192
BINARY_REASON = (
    "looks like a binary file (NUL bytes in the first 8 KiB), so it was not read;"
    " if it is UTF-16 or UTF-32 text, re-encode it as UTF-8"
)
REENCODE = "re-encode the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)"


def read_text(
    stream: BinaryIO, source: Source, options: ReadOptions, position: Position
) -> Iterator[Document | Skipped]:
    """Documents of a text file, exactly as stored (no stripping, "\\r\\n" kept).

    With text_unit "file" the whole file is one document and is held in memory; with
    "line" or "paragraph" (blank-line separated) it is streamed and the line ending
    after each document is dropped. Empty documents are not yielded.
    """
    if options.text_unit == "file":
        yield from _whole_file(stream.read(), source.path)
        return
    lines = _lines_unless_binary(stream)
    if lines is None:
        yield Skipped(source.path, "file", BINARY_REASON)
    elif options.text_unit == "line":
        yield from _by_line(lines, source.path, position)
    else:
        yield from _by_paragraph(lines, source.path, position)


def _whole_file(data: bytes, path: str) -> Iterator[Document | Skipped]:
    if b"\0" in data[:SNIFF_BYTES]:
        yield Skipped(path, "file", BINARY_REASON)
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        yield Skipped(path, "file", f"invalid UTF-8 at byte {exc.start} (line {line}); {REENCODE}")
        return
    if text:
        yield Document(text, path, "file")


def _lines_unless_binary(stream: BinaryIO) -> Iterator[bytes] | None:
    """The stream's lines, or None when its first 8 KiB hold a NUL byte.

    The lines read to decide are kept and handed out first, so nothing of a binary
    file is yielded before it is recognised.
    """
    head, size = [], 0
    for line in stream:
        head.append(line)
        size += len(line)
        if size >= SNIFF_BYTES:
            break
    if b"\0" in b"".join(head)[:SNIFF_BYTES]:
        return None
    return _chain(head, stream)


def _chain(head: list[bytes], rest: Iterable[bytes]) -> Iterator[bytes]:
    yield from head
    yield from rest


def _by_line(lines: Iterable[bytes], path: str, position: Position) -> Iterator[Document | Skipped]:
    for number, line in enumerate(lines, 1):
        position.done = number
        try:
            text = _without_newline(line).decode("utf-8")
        except UnicodeDecodeError as exc:
            reason = f"invalid UTF-8 at byte {exc.start} of the line; {REENCODE}"
            yield Skipped(path, f"line {number}", reason)
            continue
        if text:
            yield Document(text, path, f"line {number}")


def _by_paragraph(lines: Iterable[bytes], path: str, position: Position) -> Iterator[Document | Skipped]:
    paragraph: list[bytes] = []
    first = 0
    for number, line in enumerate(lines, 1):
        if line.strip():
            first = first if paragraph else number
            paragraph.append(line)
            continue
        yield from _paragraph(paragraph, first, path)
        paragraph = []
        position.done = number
    yield from _paragraph(paragraph, first, path)


def _paragraph(lines: list[bytes], first: int, path: str) -> Iterator[Document | Skipped]:
    if not lines:
        return
    data = _without_newline(b"".join(lines))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad_line = first + data.count(b"\n", 0, exc.start)
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        reason = f"invalid UTF-8 on line {bad_line} (byte {exc.start - line_start} of that line); {REENCODE}"
        yield Skipped(path, f"line {first}", reason)
        return
    yield Document(text, path, f"line {first}")


def _without_newline(data: bytes) -> bytes:
    if data.endswith(b"\r\n"):
        return data[:-2]
    return data[:-1] if data.endswith(b"\n") else data
