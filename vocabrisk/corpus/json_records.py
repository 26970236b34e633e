"""JSON Lines (streamed, one record per line) and JSON (loaded whole) sources."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from typing import BinaryIO

from vocabrisk.corpus.datatypes import Document, ReadOptions, Skipped, Source
from vocabrisk.corpus.fields import FieldError, record_text
from vocabrisk.corpus.pieces import MAX_UNCUT_BYTES, MAX_UNCUT_TEXT, skip_rest_of_line
from vocabrisk.corpus.positions import Position
from vocabrisk.corpus.text import REENCODE

BOM = b"\xef\xbb\xbf"


def read_jsonl(
    stream: BinaryIO, source: Source, options: ReadOptions, position: Position
) -> Iterator[Document | Skipped]:
    """One document per line, streamed; blank lines are ignored.

    A line that is not valid UTF-8 or JSON, or whose record has no usable text, is
    skipped with its line number (see `record_text` for dotted paths and chat records).
    """
    for number, line in enumerate(iter(functools.partial(stream.readline, MAX_UNCUT_BYTES + 1), b""), 1):
        position.done = number
        if number == 1:
            line = line.removeprefix(BOM)
        if len(line) > MAX_UNCUT_BYTES:
            reason = f"a line over {MAX_UNCUT_TEXT} is more than one record is allowed to hold; split the record"
            yield Skipped(source.path, f"line {number}", reason, skip_rest_of_line(line, stream))
        elif line.strip():
            yield from _line_document(line, source.path, number, options.text_fields)


def read_json(
    stream: BinaryIO, source: Source, options: ReadOptions, position: Position
) -> Iterator[Document | Skipped]:
    """Documents of a whole JSON file, which is loaded into memory at once (up to MAX_UNCUT_BYTES).

    The file may hold a list of records, an object holding exactly one list of records
    (such as {"data": [...]}), or a single record; locators are "record N", 1-based.
    """
    data = stream.read(MAX_UNCUT_BYTES + 1).removeprefix(BOM)
    if len(data) > MAX_UNCUT_BYTES:
        reason = (
            f"a JSON file is read whole, and this one is over {MAX_UNCUT_TEXT}; convert it to JSON Lines,"
            " one record per line (e.g. jq -c '.[]' FILE > FILE.jsonl), which is streamed"
        )
        yield Skipped(source.path, "file", reason, source.size)
        return
    if not data.strip():
        return
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        reason = f"invalid UTF-8 at byte {exc.start} (line {line}); {REENCODE}"
        yield Skipped(source.path, "file", reason, source.size)
        return
    except (ValueError, RecursionError) as exc:
        reason = f"{_malformed(exc, with_line=True)}; if the file holds one record per line, use --input-format jsonl"
        yield Skipped(source.path, "file", reason, source.size)
        return
    for number, record in enumerate(_records(value, options.text_fields), 1):
        yield from _document(record, source.path, f"record {number}", options.text_fields, None)


def _line_document(line: bytes, path: str, number: int, fields: tuple[str, ...]) -> Iterator[Document | Skipped]:
    locator = f"line {number}"
    try:
        record = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as exc:
        reason = f"invalid UTF-8 at byte {exc.start} of the line; {REENCODE}"
        yield Skipped(path, locator, reason, len(line))
        return
    except (ValueError, RecursionError) as exc:
        reason = f"{_malformed(exc, with_line=False)}; fix or remove the line"
        yield Skipped(path, locator, reason, len(line))
        return
    yield from _document(record, path, locator, fields, len(line))


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


def _document(
    record: object, path: str, locator: str, fields: tuple[str, ...], size: int | None
) -> Iterator[Document | Skipped]:
    """The record's text; a record without one is skipped with its size (re-encoded when unknown)."""
    try:
        text = record_text(record, fields)
    except FieldError as exc:
        if size is None:
            size = len(json.dumps(record, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        yield Skipped(path, locator, str(exc), size)
        return
    if text:
        yield Document(text, path, locator)
