"""The values that corpus discovery and reading hand out."""

from __future__ import annotations

from dataclasses import dataclass

from vocabrisk.errors import InputError

FORCEABLE_FORMATS = ("text", "jsonl", "json", "parquet", "csv", "tsv", "arrow")
# hf_dataset is recognised from a folder's state.json and hf_stream from an hf-dataset: input;
# neither can be forced on a file.
FORMATS = (*FORCEABLE_FORMATS, "hf_dataset", "hf_stream")
TEXT_UNITS = ("file", "line", "paragraph")


@dataclass(frozen=True)
class Source:
    """One input to read: a file (local path or fsspec URL), a saved dataset folder, a shard of
    a streamed Hugging Face dataset, or "-" for standard input."""

    path: str
    format: str
    compression: str | None
    size: int | None


@dataclass(frozen=True, slots=True)  # slots: one is made per line of a corpus
class Document:
    """One text to count, with where it came from.

    A long document comes as pieces (`vocabrisk.corpus.pieces`): `part` numbers them from 0
    (None: the whole document), and `last` is False on all but the final piece.
    """

    text: str
    source: str
    locator: str
    part: int | None = None
    last: bool = True


@dataclass(frozen=True)
class Skipped:
    """A part of the input that was not read: where, what was wrong and what to do.

    `size` is the bytes of input it stands for where known: a file's size on disk for a
    whole file, the rest of the file for one given up part-way, a record's bytes for a record.
    """

    source: str
    locator: str
    reason: str
    size: int | None = None

    @property
    def whole_source(self) -> bool:
        """A file or folder (or the rest of one) rather than one record of it."""
        return self.locator in ("file", "folder") or self.locator.startswith("after ")


@dataclass
class SkipTally:
    """What a scan left out: files (or the rest of files), records, and the bytes they hold.

    Tallies add, like counts, so shards and workers merge their skips in any order.
    """

    files: int = 0
    records: int = 0
    bytes: int = 0

    @property
    def total(self) -> int:
        return self.files + self.records

    def add(self, skip: Skipped) -> None:
        if skip.whole_source:
            self.files += 1
        else:
            self.records += 1
        self.bytes += skip.size or 0

    def __add__(self, other: SkipTally) -> SkipTally:
        return SkipTally(self.files + other.files, self.records + other.records, self.bytes + other.bytes)

    def share(self, counted_bytes: int) -> float:
        """The skipped bytes' share of all input bytes met (skipped plus counted text)."""
        seen = self.bytes + counted_bytes
        if not seen:
            return 1.0 if self.total else 0.0
        return self.bytes / seen

    def describe(self) -> str:
        """ "2 files and 1 record (1.2 MB)": for messages; empty when nothing was skipped."""
        parts = [plural(n, word) for n, word in ((self.files, "file"), (self.records, "record")) if n]
        if not parts:
            return ""
        return " and ".join(parts) + f" ({human_bytes(self.bytes)})"

    def to_dict(self) -> dict:
        return {"files": self.files, "records": self.records, "bytes": self.bytes}

    @classmethod
    def from_dict(cls, data: dict) -> SkipTally:
        return cls(int(data.get("files", 0)), int(data.get("records", 0)), int(data.get("bytes", 0)))

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


@dataclass(frozen=True)
class ReadOptions:
    """How to get text out of the inputs.

    text_fields: field or column names (dotted paths walk nested JSON objects); with
    several, the values of a record are joined with "\\n". text_unit: what one document
    of a text file is. input_format: read every input as this format.
    """

    text_fields: tuple[str, ...] = ("text",)
    text_unit: str = "file"
    input_format: str | None = None

    def __post_init__(self) -> None:
        # A bare string would otherwise be taken as a tuple of one-letter field names.
        fields = self.text_fields
        fields = (fields,) if isinstance(fields, str) else tuple(fields)
        object.__setattr__(self, "text_fields", fields)
        if not fields or not all(fields):
            raise InputError("no text field given", hint="name one with --text-field")
        if self.text_unit not in TEXT_UNITS:
            raise InputError(
                f"unknown text unit {self.text_unit!r}",
                hint=f"use one of: {', '.join(TEXT_UNITS)}",
            )
        if self.input_format is not None and self.input_format not in FORCEABLE_FORMATS:
            raise InputError(
                f"unknown input format {self.input_format!r}",
                hint=f"use one of: {', '.join(FORCEABLE_FORMATS)}; saved datasets are recognised from their folder",
            )
