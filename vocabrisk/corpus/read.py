"""Stream the documents of one source, turning read failures into `Skipped`."""

from __future__ import annotations

import csv
import importlib
import lzma
import sys
import zlib
from collections.abc import Callable, Iterator

from vocabrisk.corpus.compression import Opened, open_stream
from vocabrisk.corpus.datatypes import Document, ReadOptions, Skipped, Source
from vocabrisk.corpus.delimited import read_delimited
from vocabrisk.corpus.hf_stream import read_hf_stream
from vocabrisk.corpus.json_records import read_json, read_jsonl
from vocabrisk.corpus.memory import read_memory
from vocabrisk.corpus.pieces import PIECE_CHARS, TooLarge, text_pieces
from vocabrisk.corpus.positions import ByteTally, Position
from vocabrisk.corpus.text import read_text

_STREAM_READERS = {
    "text": read_text,
    "jsonl": read_jsonl,
    "json": read_json,
    "csv": read_delimited,
    "tsv": read_delimited,
}


def _columnar(name: str) -> Callable[..., Iterator[Document | Skipped]]:
    """A reader of `vocabrisk.corpus.columnar`, which imports pyarrow only when such a file is read."""

    def read(*args) -> Iterator[Document | Skipped]:
        return getattr(importlib.import_module("vocabrisk.corpus.columnar"), name)(*args)

    return read


_FILE_READERS = {
    "parquet": _columnar("read_parquet"),
    "arrow": _columnar("read_arrow"),
    "hf_dataset": _columnar("read_hf_dataset"),
    "hf_stream": read_hf_stream,
    "memory": read_memory,
}
# Failures of the data rather than of this code: each ends the source with a Skipped.
_READ_ERRORS = (
    OSError,
    EOFError,
    zlib.error,
    lzma.LZMAError,
    csv.Error,
    TooLarge,
)


def _is_zstd_error(exc: BaseException) -> bool:
    """Where zstandard was never imported (no .zst file opened), no zstd error was raised."""
    zstd = sys.modules.get("zstandard")
    return zstd is not None and isinstance(exc, zstd.ZstdError)


def _is_arrow_error(exc: BaseException) -> bool:
    """Where pyarrow was never imported (no Parquet or Arrow file read), no Arrow error was raised."""
    pa = sys.modules.get("pyarrow")
    return pa is not None and isinstance(exc, pa.ArrowException)


def read_source(
    source: Source, options: ReadOptions, on_bytes: Callable[[int], None] | None = None
) -> Iterator[Document | Skipped]:
    """Yield the documents of `source`, and a `Skipped` for each part that is unusable.

    Never raises for bad data: when reading fails part-way (a truncated download, a
    corrupt file, no permission) the documents already yielded stay valid and a final
    `Skipped` says where it stopped. `on_bytes(n)` is called as n more bytes of the file
    on disk (or stdin) are consumed; once the source is exhausted, read to its end or
    given up on, the calls add up to its size.
    """
    position, tally = Position(), ByteTally(on_bytes)
    compression, opened = source.compression, None
    try:
        if source.format in _FILE_READERS:
            yield from in_pieces(_FILE_READERS[source.format](source, options, position, tally))
        else:
            with open_stream(source, tally) as opened:
                compression = opened.compression
                yield from in_pieces(_STREAM_READERS[source.format](opened.stream, source, options, position))
    except Exception as exc:
        if not isinstance(exc, _READ_ERRORS) and not _is_zstd_error(exc) and not _is_arrow_error(exc):
            raise
        reason = f"{_reason(exc, source.format, compression)}; {position.counted()}"
        lost = _lost(source, tally.total, opened, position.done)
        unmeasured = source.size is None or compression is not None  # what a cut or corrupt stream held is unknown
        yield Skipped(source.path, position.locator(), f"{reason}; {_remedy(exc, compression)}", lost, unmeasured)
    # The rest of a file given up on counts as done, so that progress reaches its end.
    tally.reach(source.size or 0)


def in_pieces(items: Iterator[Document | Skipped]) -> Iterator[Document | Skipped]:
    """`items`, with a long document held whole (a record's text) handed on in pieces."""
    for item in items:
        if isinstance(item, Document) and item.part is None and len(item.text) >= 2 * PIECE_CHARS:
            yield from text_pieces(item)
        else:
            yield item


def _lost(source: Source, consumed: int, opened: Opened | None, counted: int) -> int | None:
    """The bytes of text a source given up on part-way leaves out, as far as they can be told.

    The bytes of the file not read yet, scaled, for a compressed file, by how much text each
    compressed byte read so far held; with nothing counted yet (`counted` 0), all the reader
    took, too. None for a source of unknown size.
    """
    if source.size is None:
        return None
    rest = max(source.size - consumed, 0)
    taken = opened.taken if opened is not None and opened.compression else None
    if taken is None:
        return rest if counted else source.size
    ratio = max(taken / consumed, 1.0) if consumed else 1.0
    return round(rest * ratio) + (0 if counted else taken)


def _reason(exc: BaseException, fmt: str, compression: str | None) -> str:
    if isinstance(exc, PermissionError):
        return "cannot open: permission denied"
    if isinstance(exc, EOFError):
        return f"truncated {compression} stream: {exc}" if compression else f"unexpected end of file: {exc}"
    if _is_arrow_error(exc):
        return f"not a readable {fmt} file: {exc}"
    if isinstance(exc, csv.Error):
        return f"{fmt.upper()} parse error: {exc}"
    if isinstance(exc, TooLarge):
        return str(exc)
    if compression and not isinstance(exc, FileNotFoundError):
        return f"corrupt {compression} stream: {exc}"
    return f"cannot read: {getattr(exc, 'strerror', None) or exc}"


def _remedy(exc: BaseException, compression: str | None) -> str:
    if isinstance(exc, PermissionError):
        return "make the file readable or leave it out"
    if _is_arrow_error(exc):
        return "check the file is complete; use --input-format if its extension is wrong"
    if isinstance(exc, csv.Error):
        return "check the file's quoting"
    if isinstance(exc, TooLarge):
        return "split the record, or convert the file to JSON Lines with one record per line"
    if compression or isinstance(exc, EOFError):
        return "re-download or re-compress the file"
    return "check the file"
