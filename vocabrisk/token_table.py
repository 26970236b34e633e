"""A profile's per-token data: one numpy column per `tokens.parquet` column, indexed by token id.

The columns stay numpy arrays, not a DataFrame, because every command reads them and a
DataFrame library's import alone (polars: ~0.3 s) was most of what a warm scan cost beyond
loading the tokenizer and counting (issue 14, docs/PERFORMANCE.md). A polars DataFrame is
built only where one is asked for: `to_polars`, pandas, and the Parquet file.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import polars as pl

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
        if name not in COLUMNS:
            raise KeyError(f"no token column {name!r}; the columns are {', '.join(COLUMNS)}")
        return getattr(self, name)

    # ---- as a DataFrame and on disk -------------------------------------------------------
    def to_polars(self) -> pl.DataFrame:
        """The columns as a polars DataFrame, in `COLUMNS` order (a missing reference count is null)."""
        import polars as pl

        reference = (
            pl.Series("reference_count", self.reference_count)
            if self.reference_count is not None
            else pl.Series("reference_count", [None] * self.size, pl.Int64)
        )
        return pl.DataFrame(
            [
                pl.Series("token_id", self.token_id),
                pl.Series("token", self.token.tolist(), pl.String),
                pl.Series("group", self.group.tolist(), pl.String),
                pl.Series("special", self.special),
                pl.Series("count", self.count),
                pl.Series("prior", self.prior),
                reference,
            ]
        )

    def write_parquet(self, path: Path) -> None:
        self.to_polars().write_parquet(path)

    @classmethod
    def read_parquet(cls, path: Path) -> TokenTable:
        """The columns of a `tokens.parquet` file; raises OSError, ValueError or polars' errors when it is bad."""
        import polars as pl

        frame = pl.read_parquet(path, columns=list(COLUMNS))
        if not frame["token_id"].equals(pl.Series("token_id", np.arange(frame.height, dtype=np.int64))):
            raise ValueError("token_id is not 0, 1, 2, ... in order")
        for name in COLUMNS[:-1]:
            if frame[name].null_count():
                raise ValueError(f"column {name} has missing values")
        reference = frame["reference_count"]
        if reference.null_count() not in (0, reference.len()):
            raise ValueError("column reference_count has missing values")
        return cls.of(
            token=frame["token"].to_list(),
            group=frame["group"].to_list(),
            special=frame["special"].to_numpy(),
            count=frame["count"].to_numpy(),
            prior=frame["prior"].to_numpy(),
            reference_count=None if reference.null_count() == reference.len() else reference.to_numpy(),
        )

    def equals(self, other: TokenTable) -> bool:
        """Whether every column is equal, entry by entry."""
        return all(
            (mine is None and theirs is None)
            or (mine is not None and theirs is not None and np.array_equal(mine, theirs))
            for mine, theirs in ((getattr(self, f.name), getattr(other, f.name)) for f in fields(self))
        )
