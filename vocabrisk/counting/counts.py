"""Token counts: the contract between stages, and the unit of parallelism.

Partial counts from any worker, file or shard merge by addition, so a corpus gives the
same counts whatever the order or number of workers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class TokenCounts:
    counts: np.ndarray  # int64, one entry per token id
    documents: int = 0
    text_bytes: int = 0  # UTF-8 bytes of the documents' text

    @classmethod
    def zeros(cls, vocab_size: int) -> TokenCounts:
        return cls(np.zeros(vocab_size, dtype=np.int64))

    @property
    def tokens(self) -> int:
        return int(self.counts.sum())

    def __add__(self, other: TokenCounts) -> TokenCounts:
        if self.counts.shape != other.counts.shape:
            raise ValueError(f"cannot add counts over {self.counts.size} and {other.counts.size} token ids")
        return TokenCounts(
            self.counts + other.counts,
            self.documents + other.documents,
            self.text_bytes + other.text_bytes,
        )

    def __iadd__(self, other: TokenCounts) -> TokenCounts:
        if self.counts.shape != other.counts.shape:
            raise ValueError(f"cannot add counts over {self.counts.size} and {other.counts.size} token ids")
        self.counts += other.counts
        self.documents += other.documents
        self.text_bytes += other.text_bytes
        return self

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TokenCounts)
            and np.array_equal(self.counts, other.counts)
            and (self.documents, self.text_bytes) == (other.documents, other.text_bytes)
        )


def utf8_size(text: str) -> int:
    """The UTF-8 bytes of `text`, without encoding an ASCII one (CPython knows a string is ASCII)."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))
