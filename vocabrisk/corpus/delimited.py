"""CSV and TSV: the header row names the columns, each later row is one document."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import BinaryIO

from vocabrisk.corpus.datatypes import Document, ReadOptions, Skipped, Source
from vocabrisk.corpus.pieces import MAX_UNCUT_BYTES, bounded_lines
from vocabrisk.corpus.positions import Position
from vocabrisk.corpus.text import REENCODE

# csv refuses fields over 128 KiB by default; whole articles in one cell are normal here, up to the one limit.
_FIELD_LIMIT = MAX_UNCUT_BYTES


def read_delimited(
    stream: BinaryIO, source: Source, options: ReadOptions, position: Position
) -> Iterator[Document | Skipped]:
    """Documents of a CSV or TSV file, streamed row by row ("row N" counts data rows).

    Quoted fields may span lines. The text is the `text_fields` columns joined with
    "\\n". A missing column skips the whole file; a row with fewer fields than the
    header, or with invalid UTF-8 in a text column, is skipped on its own.
    """
    csv.field_size_limit(_FIELD_LIMIT)
    dialect = "excel-tab" if source.format == "tsv" else "excel"
    rows = csv.reader(_decoded_lines(stream), dialect)
    header = next(rows, None)
    if header is None:
        return
    columns = _column_indexes(header, options.text_fields)
    if isinstance(columns, str):
        yield Skipped(source.path, "file", columns, source.size)
        return
    position.unit = "row"
    for row in rows:
        if row:
            position.done += 1
            yield from _row_document(row, header, columns, source.path, position.done)


def _decoded_lines(stream: BinaryIO) -> Iterator[str]:
    """Lines decoded with surrogateescape: an invalid byte becomes a lone surrogate
    that is caught per row, instead of an exception that would end the csv reader."""
    for number, line in enumerate(bounded_lines(stream), 1):
        text = line.decode("utf-8", "surrogateescape")
        yield text.removeprefix("\ufeff") if number == 1 else text


def _column_indexes(header: list[str], fields: tuple[str, ...]) -> list[int] | str:
    """Indexes of the text columns, or the reason when one is missing."""
    indexes = []
    for field in fields:
        if field not in header:
            return f"no column '{field}' (columns: {_printable(', '.join(header))}); choose one with --text-field"
        indexes.append(header.index(field))
    return indexes


def _row_document(
    row: list[str], header: list[str], columns: list[int], path: str, number: int
) -> Iterator[Document | Skipped]:
    locator = f"row {number}"
    if len(row) < len(header):
        reason = f"has {len(row)} fields but the header has {len(header)}; check the quoting and delimiters of this row"
        yield Skipped(path, locator, reason, _row_bytes(row))
        return
    text = "\n".join(row[index] for index in columns)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        yield Skipped(path, locator, f"invalid UTF-8; {REENCODE}", _row_bytes(row))
        return
    if text:
        yield Document(text, path, locator)


def _row_bytes(row: list[str]) -> int:
    """About the bytes the row took in the file (its fields and separators)."""
    return sum(len(field.encode("utf-8", "surrogateescape")) + 1 for field in row)


def _printable(text: str) -> str:
    """`text` with bytes that were not UTF-8 shown as "?", safe to print."""
    return text.encode("utf-8", "replace").decode("utf-8")
