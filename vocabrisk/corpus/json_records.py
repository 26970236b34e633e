"""JSON Lines (streamed, one record per line) and JSON (loaded whole) sources."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import BinaryIO

from vocabrisk.corpus.datatypes import Document, ReadOptions, Skipped, Source
from vocabrisk.corpus.fields import FieldError, record_text
from vocabrisk.corpus.progress import Position
from vocabrisk.corpus.text import REENCODE

BOM = b"\xef\xbb\xbf"


def read_jsonl(
    stream: BinaryIO, source: Source, options: ReadOptions, position: Position
) -> Iterator[Document | Skipped]:
    """One document per line, streamed; blank lines are ignored.

    A line that is not valid UTF-8 or JSON, or whose record has no usable text, is
    skipped with its line number (see `record_text` for dotted paths and chat records).
    """
    for number, line in enumerate(stream, 1):
        position.done = number
        if number == 1:
            line = line.removeprefix(BOM)
        if line.strip():
            yield from _line_document(line, source.path, number, options.text_fields)


def read_json(
    stream: BinaryIO, source: Source, options: ReadOptions, position: Position
) -> Iterator[Document | Skipped]:
    """Documents of a whole JSON file, which is loaded into memory at once.

    The file may hold a list of records, an object holding exactly one list of records
    (such as {"data": [...]}), or a single record; locators are "record N", 1-based.
    """
    data = stream.read().removeprefix(BOM)
    if not data.strip():
        return
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        reason = f"invalid UTF-8 at byte {exc.start} (line {line}); {REENCODE}"
        yield Skipped(source.path, "file", reason)
        return
    except (ValueError, RecursionError) as exc:
        reason = f"{_malformed(exc, with_line=True)}; if the file holds one record per line, use --input-format jsonl"
        yield Skipped(source.path, "file", reason)
        return
    for number, record in enumerate(_records(value, options.text_fields), 1):
        yield from _document(record, source.path, f"record {number}", options.text_fields)


def _line_document(line: bytes, path: str, number: int, fields: tuple[str, ...]) -> Iterator[Document | Skipped]:
    locator = f"line {number}"
    try:
        record = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as exc:
        reason = f"invalid UTF-8 at byte {exc.start} of the line; {REENCODE}"
        yield Skipped(path, locator, reason)
        return
    except (ValueError, RecursionError) as exc:
        reason = f"{_malformed(exc, with_line=False)}; fix or remove the line"
        yield Skipped(path, locator, reason)
        return
    yield from _document(record, path, locator, fields)


def _malformed(exc: Exception, with_line: bool) -> str:
    """Describe a json.loads failure; besides syntax errors, Python also refuses
    integers past its digit limit and nesting past its recursion limit."""
    if not isinstance(exc, json.JSONDecodeError):
        return f"malformed JSON: {exc}"
    where = f"line {exc.lineno}, column {exc.colno}" if with_line else f"column {exc.colno}"
    return f"malformed JSON: {exc.msg} ({where})"


def _records(value: object, fields: tuple[str, ...]) -> list:
    if isinstance(value, list):
        return value
    if isinstance(value, dict) and not _has_text(value, fields):
        lists = [item for item in value.values() if isinstance(item, list)]
        if len(lists) == 1:
            return lists[0]
    return [value]


def _has_text(record: dict, fields: tuple[str, ...]) -> bool:
    try:
        record_text(record, fields)
    except FieldError:
        return False
    return True


def _document(record: object, path: str, locator: str, fields: tuple[str, ...]) -> Iterator[Document | Skipped]:
    try:
        text = record_text(record, fields)
    except FieldError as exc:
        yield Skipped(path, locator, str(exc))
        return
    if text:
        yield Document(text, path, locator)
