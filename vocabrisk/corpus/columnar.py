"""Parquet, Arrow IPC and saved Hugging Face datasets, read with pyarrow in batches."""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from contextlib import contextmanager

import pyarrow as pa
import pyarrow.parquet as pq

from vocabrisk.corpus.compression import sniff_file
from vocabrisk.corpus.datatypes import Document, ReadOptions, Skipped, Source
from vocabrisk.corpus.hf_dataset import dataset_files
from vocabrisk.corpus.positions import ByteTally, Position
from vocabrisk.corpus.remote import is_url, random_access

# Rows turned into Python strings at a time; bounds memory whatever the batch sizes.
BATCH_ROWS = 1024

Batches = Iterator[tuple[pa.RecordBatch, int]]  # each batch with the bytes read so far


def read_parquet(
    source: Source, options: ReadOptions, position: Position, tally: ByteTally
) -> Iterator[Document | Skipped]:
    """Documents of a Parquet file, one per row ("row N", 1-based)."""
    position.unit = "row"
    compression = sniff_file(source.path)
    if compression:
        yield Skipped(source.path, "file", _compressed(compression, "parquet"), source.size)
        return
    with _parquet_file(source.path) as file:
        problem = _column_problem(file.schema_arrow, options.text_fields)
        if problem:
            yield Skipped(source.path, "file", problem, source.size)
            return
        size, rows = source.size or 0, max(file.metadata.num_rows, 1)
        for batch in file.iter_batches(BATCH_ROWS, columns=list(dict.fromkeys(options.text_fields))):
            yield from _rows(batch, options.text_fields, source.path, position)
            tally.reach(size * position.done // rows)


@contextmanager
def _parquet_file(path: str) -> Iterator[pq.ParquetFile]:
    """A local file opened by pyarrow itself; a URL through fsspec."""
    if not is_url(path):
        with pq.ParquetFile(path) as file:
            yield file
        return
    with random_access(path) as handle, pq.ParquetFile(handle) as file:
        yield file


def read_arrow(
    source: Source, options: ReadOptions, position: Position, tally: ByteTally
) -> Iterator[Document | Skipped]:
    """Documents of an Arrow IPC file (file or stream format), one per row."""
    yield from _ipc_documents(source.path, source.path, options, position, tally, 0)


def read_hf_dataset(
    source: Source, options: ReadOptions, position: Position, tally: ByteTally
) -> Iterator[Document | Skipped]:
    """Documents of a save_to_disk folder: its arrow files in order, rows numbered
    across all of them so that "row N" is the dataset's row N-1."""
    offset = 0
    for path in dataset_files(source.path) or []:
        if not os.path.isfile(path):
            reason = (
                f"data file {os.path.basename(path)} listed in state.json is missing;"
                " the dataset folder is incomplete, save or copy it again"
            )
            yield Skipped(source.path, "file", reason, source.size)
            return
        readable = yield from _ipc_documents(path, source.path, options, position, tally, offset)
        if not readable:
            return
        offset += os.path.getsize(path)
        tally.reach(offset)


def _ipc_documents(
    path: str, display: str, options: ReadOptions, position: Position, tally: ByteTally, offset: int
) -> Generator[Document | Skipped, None, bool]:
    """Documents of one IPC file; returns False when the file as a whole was skipped.

    `offset` is where the file starts in the byte count of a multi-file dataset.
    """
    position.unit = "row"
    compression = sniff_file(path)
    if compression:
        yield Skipped(display, "file", _compressed(compression, "arrow"))
        return False
    with random_access(path) as file:
        schema, batches = _ipc_batches(file)
        problem = _column_problem(schema, options.text_fields)
        if problem:
            yield Skipped(display, "file", problem)
            return False
        for batch, done in batches:
            yield from _rows(batch, options.text_fields, display, position)
            tally.reach(offset + done)
    return True


def _ipc_batches(file: pa.NativeFile) -> tuple[pa.Schema, Batches]:
    """Open IPC file format, falling back to stream format (used by `datasets`)."""
    try:
        reader = pa.ipc.open_file(file)
    except pa.ArrowInvalid:
        file.seek(0)
        stream = pa.ipc.open_stream(file)
        return stream.schema, ((batch, file.tell()) for batch in stream)
    count, size = reader.num_record_batches, file.size()
    return reader.schema, ((reader.get_batch(index), size * (index + 1) // count) for index in range(count))


def _column_problem(schema: pa.Schema, fields: tuple[str, ...]) -> str | None:
    """Why the text columns cannot be read, or None when they can."""
    for field in fields:
        if schema.get_field_index(field) < 0:
            return f"no column '{field}' (columns: {', '.join(schema.names)}); choose one with --text-field"
        column_type = schema.field(field).type
        if not _is_string(column_type):
            return f"column '{field}' has type {column_type}, not string; choose a text column with --text-field"
    return None


def _is_string(column_type: pa.DataType) -> bool:
    if pa.types.is_dictionary(column_type):
        return _is_string(column_type.value_type)
    # Compared by name: pa.types.is_string_view only exists from pyarrow 16 on.
    return pa.types.is_string(column_type) or pa.types.is_large_string(column_type) or str(column_type) == "string_view"


def _rows(
    batch: pa.RecordBatch, fields: tuple[str, ...], path: str, position: Position
) -> Iterator[Document | Skipped]:
    for start in range(0, batch.num_rows, BATCH_ROWS):
        part = batch.slice(start, BATCH_ROWS)
        columns = [part.column(field).to_pylist() for field in fields]
        for values in zip(*columns, strict=True):
            position.done += 1
            yield from _row_document(fields, values, path, position.done)


def _row_document(fields: tuple[str, ...], values: tuple, path: str, number: int) -> Iterator[Document | Skipped]:
    locator = f"row {number}"
    for field, value in zip(fields, values, strict=True):
        if value is None:
            yield Skipped(path, locator, f"null in column '{field}'")
            return
    text = "\n".join(values)
    if text:
        yield Document(text, path, locator)


def _compressed(compression: str, fmt: str) -> str:
    return f"a {compression}-compressed {fmt} file cannot be read; decompress it first"
