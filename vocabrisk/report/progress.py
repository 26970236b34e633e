"""A rich progress bar for scans: files, bytes, tokens, rate and ETA."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from vocabrisk.corpus import Source


class RichScanProgress:
    """Implements `vocabrisk.counting.executors.progress.ScanProgress`; use as a context manager."""

    def __init__(self, console: Console):
        self._progress = Progress(
            TextColumn("[bold]scanning"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TextColumn("{task.fields[files]}"),
            TextColumn("{task.fields[tokens]}"),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        )
        self._task: TaskID | None = None
        self._files_total = 0
        self._files_done = 0
        self._tokens = 0

    def __enter__(self) -> RichScanProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self._progress.stop()

    def start(self, total_bytes: int | None, total_files: int) -> None:
        self._files_total = total_files
        self._task = self._progress.add_task("scan", total=total_bytes, files=self._files_text(), tokens="")

    def advance(self, raw_bytes: int) -> None:
        self._progress.update(self._task, advance=raw_bytes)

    def counted(self, documents: int, tokens: int) -> None:
        self._tokens += tokens
        self._progress.update(self._task, tokens=f"{self._tokens:,} tokens")

    def file_done(self, source: Source) -> None:
        self._files_done += 1
        self._progress.update(self._task, files=self._files_text())

    def _files_text(self) -> str:
        return f"{self._files_done}/{self._files_total} files"
