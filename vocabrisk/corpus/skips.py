"""What a scan left out, tallied so every report can say it: files, records, bytes, share.

It imports nothing of the readers (and so no pyarrow), so that a saved profile and the reports
load without them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vocabrisk.corpus.datatypes import Skipped

MAX_SKIP_EXAMPLES = 20  # skipped parts a profile keeps to show; the tally counts them all


@dataclass
class SkipTally:
    """What a scan left out: files (or the rest of files), records, and the bytes they hold.

    `unmeasured` counts the skips whose bytes are only an estimate (a compressed stream cut
    short or corrupt): with any, so are `bytes` and the share. Tallies add, like counts, so
    shards and workers merge their skips in any order.
    """

    files: int = 0
    records: int = 0
    bytes: int = 0
    unmeasured: int = 0

    @property
    def total(self) -> int:
        return self.files + self.records

    def add(self, skip: Skipped) -> None:
        if skip.whole_source:
            self.files += 1
        else:
            self.records += 1
        self.bytes += skip.size or 0
        self.unmeasured += skip.unmeasured

    def __add__(self, other: SkipTally) -> SkipTally:
        return SkipTally(
            self.files + other.files,
            self.records + other.records,
            self.bytes + other.bytes,
            self.unmeasured + other.unmeasured,
        )

    def share(self, counted_bytes: int) -> float:
        """The skipped bytes' share of all input bytes met (skipped plus counted text); an
        estimate where some skip is `unmeasured`."""
        seen = self.bytes + counted_bytes
        if not seen:
            return 1.0 if self.total else 0.0
        return self.bytes / seen

    @property
    def text(self) -> str:
        """ "2 files and 1 record (1.2 MB)": for messages; empty when nothing was skipped."""
        parts = [plural(n, word) for n, word in ((self.files, "file"), (self.records, "record")) if n]
        if not parts:
            return ""
        size = human_bytes(self.bytes)
        if self.unmeasured:
            size = f"about {size}; what {self.unmeasured:,} of them lost cannot be measured"
        return " and ".join(parts) + f" ({size})"

    def to_dict(self) -> dict:
        return {"files": self.files, "records": self.records, "bytes": self.bytes, "unmeasured": self.unmeasured}

    @classmethod
    def from_dict(cls, data: dict) -> SkipTally:
        keys = ("files", "records", "bytes", "unmeasured")
        return cls(*(int(data.get(key, 0)) for key in keys))

    @classmethod
    def of(cls, skips) -> SkipTally:
        tally = cls()
        for skip in skips:
            tally.add(skip)
        return tally


def plural(n: int, word: str) -> str:
    """ "1 file", "2 files", "1,024 records"."""
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def human_bytes(n: float) -> str:
    """1234567 -> "1.2 MB" (decimal units, as file managers show them)."""
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")
