"""Corpora already in memory: datasets, DataFrames, Series and iterables of strings.

In a notebook the corpus is a `datasets.Dataset` or `IterableDataset`, a pandas or polars
DataFrame or Series, a pyarrow Table, or a list of strings, not a folder. Each such object is
one source, read like a file of the same shape: a table's rows through the same Arrow code as
Parquet and saved datasets (so the counts equal those of the same data on disk), records
(dicts) through the same field rules as JSON lines, plain values one document each. Missing
and non-string values are skipped and reported by row, as in files.

Objects are recognised by their type's module, so none of these libraries is imported here.
An in-memory source can only be counted in the calling process: it is not sent to workers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from vocabrisk.corpus.datatypes import Document, ReadOptions, Skipped, Source
from vocabrisk.corpus.fields import FieldError, missing_column, record_text
from vocabrisk.corpus.positions import ByteTally, Position
from vocabrisk.errors import InputError

FORMAT = "memory"


@dataclass(frozen=True)
class MemorySource(Source):
    """A source whose documents are in `data`, an object of this process."""

    data: object = field(default=None, compare=False, repr=False)


def is_data(value: object) -> bool:
    """Whether an input is an in-memory corpus rather than a path, glob or URL."""
    return not isinstance(value, (str, bytes)) and not hasattr(value, "__fspath__")


def memory_source(data: object, number: int) -> MemorySource:
    """The source for the `number`-th in-memory input, named after its type."""
    arrow = type(data).__module__.split(".")[0] == "pyarrow"
    if isinstance(data, (dict, bytes)) or not (arrow or isinstance(data, Iterable)):
        raise InputError(
            f"cannot read a corpus from {type(data).__name__}",
            hint="pass paths, a datasets.Dataset or IterableDataset, a pandas or polars DataFrame or Series,"
            " a pyarrow Table, or an iterable of strings or of records (dicts)",
        )
    kind = f"{type(data).__module__.split('.')[0]}.{type(data).__name__}"
    return MemorySource(f"<{kind} #{number}>", FORMAT, None, None, data)


def read_memory(
    source: Source, options: ReadOptions, position: Position, tally: ByteTally
) -> Iterator[Document | Skipped]:
    """Documents of an in-memory source, "row N" (tables, records) or "item N" (plain values)."""
    from vocabrisk.corpus.columnar import _column_problem, _rows  # pyarrow, only for corpora that need it

    data = source.data  # type: ignore[attr-defined]
    fields = options.text_fields
    position.unit = "row"
    batches = _arrow_batches(data, fields)
    if batches is not None:
        schema, batches = batches
        problem = _column_problem(schema, fields)
        if problem:
            yield Skipped(source.path, "file", problem)
            return
        for batch in batches:
            yield from _rows(batch, fields, source.path, position)
        return
    columns = _pandas_columns(data, fields)
    if isinstance(columns, str):
        yield Skipped(source.path, "file", columns)
        return
    if columns is None:
        position.unit = "item"
        columns = [data]
        problem = missing_column(getattr(data, "column_names", None), fields, "text_field")  # an IterableDataset
        if problem:
            yield Skipped(source.path, "file", problem)
            return
    for values in zip(*columns, strict=True):
        position.done += 1
        yield from values_document(values, fields, source.path, f"{position.unit} {position.done}")


def _arrow_batches(data: object, fields: tuple[str, ...]):
    """The schema and record batches of a table-like object; None for other objects."""
    import pyarrow as pa

    from vocabrisk.corpus.columnar import BATCH_ROWS

    module, name = type(data).__module__.split(".")[0], type(data).__name__
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        table = pa.Table.from_batches([data]) if isinstance(data, pa.RecordBatch) else data
    elif module == "polars" and name == "DataFrame":
        table = data.to_arrow()
    elif module == "polars" and name == "Series":
        table = data.to_frame(fields[0]).to_arrow()
    elif module == "datasets" and name == "Dataset":
        # Formatted iteration honours select/shuffle/filter (an indices mapping), unlike `data.data`.
        batches = (
            batch
            for table in data.with_format("arrow").iter(batch_size=BATCH_ROWS)
            for batch in table.select(_present(table.schema, fields)).to_batches()
        )
        return data.features.arrow_schema, batches
    else:
        return None
    return table.schema, iter(table.select(_present(table.schema, fields)).to_batches(BATCH_ROWS))


def _present(schema, fields: tuple[str, ...]) -> list[str]:
    return [name for name in dict.fromkeys(fields) if schema.get_field_index(name) >= 0]


def _pandas_columns(data: object, fields: tuple[str, ...]) -> list[Iterable] | str | None:
    """The text columns of a pandas DataFrame or Series, a reason when there are none, or
    None for objects that are not pandas'."""
    if type(data).__module__.split(".")[0] != "pandas":
        return None
    name = type(data).__name__
    if name == "Series":
        series = [data]
    elif name == "DataFrame":
        problem = missing_column([str(c) for c in data.columns], fields, "text_field")
        if problem:
            return problem
        series = [data[f] for f in fields]
    else:
        return None
    for column, each in zip(fields, series, strict=False):
        if each.dtype.kind not in "OSU" and str(each.dtype) not in ("string", "str"):
            return f"column '{column}' has dtype {each.dtype}, not text; choose a text column with text_field"
    return series


def values_document(values: tuple, fields: tuple[str, ...], path: str, locator: str) -> Iterator[Document | Skipped]:
    """One document from a row's values: a record (dict) by its fields, else the strings joined."""
    if len(values) == 1 and isinstance(values[0], dict):
        try:
            text = record_text(values[0], fields)
        except FieldError as exc:
            yield Skipped(path, locator, str(exc))
            return
    else:
        for value in values:
            if _missing(value):
                yield Skipped(path, locator, "missing value (None, NaN or NA)")
                return
            if not isinstance(value, str):
                yield Skipped(path, locator, f"value is {type(value).__name__}, not a string")
                return
        text = "\n".join(values)
    if text:
        yield Document(text, path, locator)


def _missing(value: object) -> bool:
    """None, a float NaN, or pandas' NA and NaT."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return True
    return isinstance(value, float) and math.isnan(value)
