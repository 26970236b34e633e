"""The values that corpus discovery and reading hand out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from vocabrisk.errors import InputError

FORCEABLE_FORMATS = ("text", "jsonl", "json", "parquet", "csv", "tsv", "arrow")
# hf_dataset is recognised from a folder's state.json and hf_stream from an hf-dataset: input;
# neither can be forced on a file.
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
    (None: the whole document), `last` is False on all but the final piece, and `cut` is the
    kind of place a piece after the first starts at.
    """

    text: str
    source: str
    locator: str
    part: int | None = None
    last: bool = True
    cut: str = ""


@dataclass(frozen=True)
class Skipped:
    """A part of the input that was not read: where, what was wrong and what to do.

    `size` is the bytes of input it stands for where known: a file's size on disk for a
    whole file, the rest of the file for one given up part-way (in a compressed file, the text
    its compressed rest is estimated to hold), a record's bytes for a record. `unmeasured`
    says `size` cannot be known: a compressed stream cut short or corrupt hides how much text
    followed, a stream of unknown size how much was left unread.
    """

    source: str
    locator: str
    reason: str
    size: int | None = None
    unmeasured: bool = False

    @property
    def text(self) -> str:
        """ "a.jsonl, line 3: not JSON": for messages."""
        return f"{self.source}, {self.locator}: {self.reason}"

    @property
    def whole_source(self) -> bool:
        """A file or folder (or the rest of one) rather than one record of it."""
        return self.locator in ("file", "folder") or self.locator.startswith("after ")


@dataclass(frozen=True)
class ReadOptions:
    """How to get text out of the inputs.

    text_fields: field or column names (dotted paths walk nested JSON objects); with
    several, the values of a record are joined with "\\n". text_unit: what one document
    of a text file is. input_format: read every input as this format.
    """

    text_fields: tuple[str, ...] = ("text",)  # `field_names` of what is given: a bare name is a tuple of one
    text_unit: str = "file"
    input_format: str | None = None

    def __post_init__(self) -> None:
        fields = field_names(self.text_fields)
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


def field_names(fields: str | Sequence[str]) -> tuple[str, ...]:
    """One field name or several, as `ReadOptions.text_fields` holds them (a bare string would otherwise be
    taken as a tuple of one-letter names)."""
    return (fields,) if isinstance(fields, str) else tuple(fields)
