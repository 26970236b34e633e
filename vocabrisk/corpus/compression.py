"""Open a source as a stream of decompressed bytes, counting the raw bytes consumed."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from typing import BinaryIO

from vocabrisk.corpus.datatypes import Source
from vocabrisk.corpus.remote import is_url, open_url

COMPRESSION_BY_EXTENSION = {
    ".gz": "gzip",
    ".bz2": "bz2",
    ".xz": "xz",
    ".zst": "zstd",
    ".zstd": "zstd",
}
MAGIC_LENGTH = 6
_MAGIC = ((b"\x1f\x8b", "gzip"), (b"\xfd7zXZ\x00", "xz"), (b"\x28\xb5\x2f\xfd", "zstd"))
_CHUNK = 1 << 16


def split_compression(name: str) -> tuple[str, str | None]:
    """Split "a.jsonl.gz" into ("a.jsonl", "gzip"); names without a suffix come back whole."""
    stem, extension = os.path.splitext(name)
    compression = COMPRESSION_BY_EXTENSION.get(extension.lower())
    return (stem, compression) if compression else (name, None)


def sniff(head: bytes) -> str | None:
    """The compression a file's first bytes announce, or None for none known."""
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    # "BZh" alone is plausible plain text; the block-size digit makes it a bz2 header.
    if head[:3] == b"BZh" and head[3:4].isdigit() and head[3:4] != b"0":
        return "bz2"
    return None


def sniff_file(path: str) -> str | None:
    """The compression announced by the first bytes of the file at `path` (or URL)."""
    with open_file(path) as file:
        return sniff(file.read(MAGIC_LENGTH))


def open_file(path: str) -> BinaryIO:
    """A local file with plain `open` (the fast path), a URL through fsspec."""
    return open_url(path) if is_url(path) else open(path, "rb")


@dataclass
class Opened:
    """A source opened for reading: its decompressed stream, and how far a reader got in it."""

    stream: BinaryIO
    compression: str | None
    taken: int | None = None  # decompressed bytes the reader took, once it is done (None: unknown)


@contextmanager
def open_stream(source: Source, on_bytes: Callable[[int], None]) -> Iterator[Opened]:
    """Yield the `Opened` source for a file, a URL or stdin ("-").

    Compression comes from the magic bytes, else from the extension guess in `source`.
    Standard input is read but not closed. When the reader is done, however it ended, `taken`
    says how much decompressed text it had taken: what a failure leaves out is estimated from it.
    """
    with ExitStack() as stack:
        raw = sys.stdin.buffer if source.path == "-" else stack.enter_context(open_file(source.path))
        head = raw.read(MAGIC_LENGTH)
        compression = sniff(head) or source.compression
        counted = CountingReader(raw, head, on_bytes)
        opened = Opened(stack.enter_context(_decompressed(counted, compression)), compression)
        try:
            yield opened
        finally:
            if compression:
                with suppress(OSError, ValueError):  # a decompressor that cannot say leaves it unknown
                    opened.taken = opened.stream.tell()


def _decompressed(raw: io.RawIOBase, compression: str | None) -> BinaryIO:
    if compression == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if compression == "bz2":
        return bz2.BZ2File(raw)
    if compression == "xz":
        return lzma.LZMAFile(raw)
    if compression == "zstd":
        return io.BufferedReader(ZstdReader(raw), _CHUNK)
    return io.BufferedReader(raw, _CHUNK)


class CountingReader(io.RawIOBase):
    """Reads `raw` after the already-read `head`, reporting each chunk to `on_bytes`.

    The head exists because stdin cannot seek back after its magic bytes were sniffed.
    Closing this reader leaves `raw` open.
    """

    def __init__(self, raw: BinaryIO, head: bytes, on_bytes: Callable[[int], None]):
        super().__init__()
        self._read = getattr(raw, "read1", raw.read)
        self._head = head
        self._on_bytes = on_bytes

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self._head:
            data, self._head = self._head[: len(buffer)], self._head[len(buffer) :]
        else:
            data = self._read(len(buffer))
        buffer[: len(data)] = data
        if data:
            self._on_bytes(len(data))
        return len(data)


class ZstdReader(io.RawIOBase):
    """Decompresses consecutive zstd frames from `raw`.

    zstandard's own stream_reader ends silently on a cut-off frame; this raises
    EOFError instead, as gzip, bz2 and lzma do, so a truncated file is reported.
    """

    def __init__(self, raw: io.RawIOBase):
        super().__init__()
        import zstandard  # for zstd files only

        self._raw = raw
        self._context = zstandard.ZstdDecompressor()
        self._frame = None  # decompressor of the frame in progress, None between frames
        self._pending = memoryview(b"")
        self._handed_out = 0

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        """Decompressed bytes handed out so far (the buffer above subtracts what it holds unread)."""
        return self._handed_out

    def readinto(self, buffer) -> int:
        while not self._pending:
            chunk = self._raw.read(_CHUNK)
            if not chunk:
                if self._frame is not None:
                    raise EOFError("zstd frame ended before its end marker")
                return 0
            self._pending = memoryview(self._decompress(chunk))
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        self._handed_out += size
        return size

    def _decompress(self, data: bytes) -> bytes:
        out = []
        while data:
            if self._frame is None:
                self._frame = self._context.decompressobj()
            out.append(self._frame.decompress(data))
            data = b""
            if self._frame.eof:
                data, self._frame = self._frame.unused_data, None
        return b"".join(out)
