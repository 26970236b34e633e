"""The progress of a scan, reported by the executors as they count."""

from __future__ import annotations

from typing import Protocol

from vocabrisk.corpus.datatypes import Source


class ScanProgress(Protocol):
    """What a scan reports while it runs; the CLI draws it, the API may ignore it."""

    def start(self, total_bytes: int | None, total_files: int) -> None: ...
    def advance(self, raw_bytes: int) -> None: ...
    def counted(self, documents: int, tokens: int) -> None: ...
    def file_done(self, source: Source) -> None: ...
