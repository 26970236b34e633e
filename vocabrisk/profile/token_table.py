"""A profile's per-token data: one numpy column per `tokens.parquet` column, indexed by token id.

The columns stay numpy arrays, not a DataFrame, because every command reads them and a
DataFrame library's import alone (polars: ~0.3 s) was most of what a warm scan cost beyond
loading the tokenizer and counting (issue 14, docs/PERFORMANCE.md). pyarrow reads and writes
the Parquet file (its import costs 0.19 s against polars' 0.33 s, which a gate on a saved
profile pays); a polars DataFrame is built only where one is asked for (`to_polars`, pandas).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa

COLUMNS = ("token_id", "token", "group", "special", "count", "prior", "reference_count")


@dataclass(frozen=True, eq=False)
class TokenTable:
    """One entry per token id in each column; `token_id` is the position.

    Change a column with `dataclasses.replace(table, count=...)`: the others are shared.
    """

    token: np.ndarray  # readable form of each token (object array of str)
    group: np.ndarray  # group name of each token (object array of str)
    special: np.ndarray  # bool: special tokens are not vocabulary a corpus can cover
    count: np.ndarray  # int64: the corpus's count of each token
    prior: np.ndarray  # float64: how much the base model relies on each token (sums to 1)
    reference_count: np.ndarray | None  # int64: the reference corpus's counts, where the prior came from one

    def __post_init__(self) -> None:
        sizes = {f.name: len(value) for f in fields(self) if (value := getattr(self, f.name)) is not None}
        if len(set(sizes.values())) > 1:
            raise ValueError(f"token columns differ in length: {sizes}")

    @classmethod
    def of(cls, token, group, special, count, prior, reference_count=None) -> TokenTable:
        """A table from any sequences, with each column's dtype made right."""
        return cls(
            token=np.asarray(token, dtype=object),
            group=np.asarray(group, dtype=object),
            special=np.asarray(special, dtype=bool),
            count=np.asarray(count, dtype=np.int64),
            prior=np.asarray(prior, dtype=np.float64),
            reference_count=None if reference_count is None else np.asarray(reference_count, dtype=np.int64),
        )

    @property
    def size(self) -> int:
        return len(self.count)

    @property
    def token_id(self) -> np.ndarray:
        return np.arange(self.size, dtype=np.int64)

    def column(self, name: str) -> np.ndarray | None:
        """One column by its `tokens.parquet` name (`token_id` too)."""
        if name not in COLUMNS:
            raise KeyError(f"no token column {name!r}; the columns are {', '.join(COLUMNS)}")
        return getattr(self, name)

    # ---- as a DataFrame and on disk -------------------------------------------------------
    def to_arrow(self) -> pa.Table:
        """The columns as an Arrow table, in `COLUMNS` order (a missing reference count is null)."""
        import pyarrow as pa

        reference = (
            _arrow(self.reference_count, pa.int64())
            if self.reference_count is not None
            else pa.nulls(self.size, pa.int64())
        )
        columns = [_arrow(self.token_id, pa.int64()), _strings(self.token), _strings(self.group)]
        columns += [_arrow(self.special, pa.bool_()), _arrow(self.count, pa.int64()), _arrow(self.prior, pa.float64())]
        return pa.Table.from_arrays([*columns, reference], names=list(COLUMNS))

    def to_polars(self) -> pl.DataFrame:
        import polars as pl

        return pl.from_arrow(self.to_arrow())

    def write_parquet(self, path: Path) -> None:
        """`tokens.parquet`, written with pyarrow: a gate that reads it back imports no DataFrame library."""
        import pyarrow.parquet as pq

        pq.write_table(self.to_arrow(), path)

    @classmethod
    def read_parquet(cls, path: Path) -> TokenTable:
        """The columns of a `tokens.parquet` file; raises OSError, ValueError or pyarrow's errors when it is bad."""
        import pyarrow.parquet as pq

        table = pq.ParquetFile(path).read(columns=list(COLUMNS))  # read_table imports pandas
        for name in COLUMNS[:-1]:
            if table.column(name).null_count:
                raise ValueError(f"column {name} has missing values")
        if not np.array_equal(numpy_column(table.column("token_id")), np.arange(table.num_rows)):
            raise ValueError("token_id is not 0, 1, 2, ... in order")
        reference = table.column("reference_count")
        if reference.null_count not in (0, table.num_rows):
            raise ValueError("column reference_count has missing values")
        return cls.of(
            token=table.column("token").to_pylist(),
            group=table.column("group").to_pylist(),
            special=numpy_column(table.column("special")),
            count=numpy_column(table.column("count")),
            prior=numpy_column(table.column("prior")),
            reference_count=None if reference.null_count == table.num_rows else numpy_column(reference),
        )

    def equals(self, other: TokenTable) -> bool:
        """Whether every column is equal, entry by entry."""
        return all(
            (mine is None and theirs is None)
            or (mine is not None and theirs is not None and np.array_equal(mine, theirs))
            for mine, theirs in ((getattr(self, f.name), getattr(other, f.name)) for f in fields(self))
        )


# Arrow arrays built from their buffers: `pa.array` imports pandas the first time it is called (0.18 s, most of
# what writing a profile cost), and a scan need not pay for a library it does not use.
def _arrow(values: np.ndarray, kind: pa.DataType) -> pa.Array:
    """An Arrow array of numbers or booleans VALUES."""
    import pyarrow as pa

    if kind == pa.bool_():
        data = np.packbits(np.asarray(values, dtype=bool), bitorder="little")
    else:
        data = np.ascontiguousarray(values, dtype=np.dtype(str(kind)))  # int64, float64
    return pa.Array.from_buffers(kind, len(values), [None, pa.py_buffer(data)])


def numpy_column(column: pa.ChunkedArray) -> np.ndarray:
    """A column without missing values as numpy, read from its buffers where it is of a type vocabrisk writes
    (`to_numpy` imports pandas)."""
    import pyarrow as pa

    values = column.combine_chunks()
    kinds = {pa.int64(): np.int64, pa.float64(): np.float64}
    if values.type == pa.bool_():
        bits = np.frombuffer(values.buffers()[1], dtype=np.uint8)
        return np.unpackbits(bits, count=values.offset + len(values), bitorder="little")[values.offset :].astype(bool)
    if values.type in kinds:
        data = np.frombuffer(values.buffers()[1], dtype=kinds[values.type], count=values.offset + len(values))
        return data[values.offset :]
    return column.to_numpy()  # a file another tool wrote


def _strings(values: np.ndarray) -> pa.Array:
    """An Arrow string array of VALUES, from their UTF-8 bytes."""
    import pyarrow as pa

    joined = "".join(values)
    if joined.isascii():  # a character a byte: no string encoded on its own (a group name is)
        data, sizes = joined.encode("ascii"), map(len, values)
    else:
        encoded = [value.encode("utf-8") for value in values]
        data, sizes = b"".join(encoded), map(len, encoded)
    offsets = np.zeros(len(values) + 1, dtype=np.int32)
    np.cumsum(np.fromiter(sizes, dtype=np.int32, count=len(values)), out=offsets[1:])
    return pa.StringArray.from_buffers(len(values), pa.py_buffer(offsets), pa.py_buffer(data))
