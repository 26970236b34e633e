"""The base model's own text, as token ids: where the forecast reads the contexts a shift would hurt.

A profile whose prior came from text keeps up to OLD_TEXT_TOKENS of it (`old_text.npz`); the
forecast (`vocabrisk.risk.forecast`, terms 4 and 5) reads each position's neighbourhood from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

CONTEXT_RADIUS = 32  # tokens either side: about a paragraph
POSITION_STRIDE = 4  # old positions read: every 4th (their neighbourhoods overlap by 61 of 65 tokens)
OLD_TEXT_TOKENS = 20_000  # old text kept in a profile: hundreds of paragraphs, a forecast in a fraction of a second


@dataclass(frozen=True)
class OldText:
    """Token ids of the base model's own text, document by document: where the forecast reads contexts."""

    ids: np.ndarray  # int64, all documents one after another
    starts: np.ndarray  # int64, offset of each document in `ids`, plus len(ids) at the end

    @classmethod
    def of(cls, documents: list[np.ndarray], max_tokens: int | None = None) -> OldText:
        """Old text from per-document ids; with MAX_TOKENS, documents spread evenly up to that many tokens."""
        documents = [np.asarray(d, dtype=np.int64) for d in documents if len(d)]
        total = sum(len(d) for d in documents)
        if max_tokens is not None and total > max_tokens:
            keep = max(1, round(len(documents) * max_tokens / total))
            picks = np.unique(np.linspace(0, len(documents) - 1, keep).round().astype(int))
            documents = [documents[i][:max_tokens] for i in picks]
        lengths = np.array([len(d) for d in documents], dtype=np.int64)
        ids = np.concatenate(documents) if documents else np.zeros(0, dtype=np.int64)
        return cls(ids, np.concatenate([[0], np.cumsum(lengths)]))

    @cached_property
    def neighbourhoods(self) -> tuple[np.ndarray, np.ndarray]:
        """(token ids, valid) of every POSITION_STRIDE-th old position's neighbourhood, CONTEXT_RADIUS either side.

        Both have shape (positions, 2·CONTEXT_RADIUS + 1); `valid` is False past a document's ends.
        Neighbourhoods of nearby positions share most of their tokens, so a stride loses little.
        """
        index = np.arange(0, len(self.ids), POSITION_STRIDE)
        document = np.searchsorted(self.starts, index, side="right") - 1
        around = index[:, None] + np.arange(-CONTEXT_RADIUS, CONTEXT_RADIUS + 1)
        valid = (around >= self.starts[document][:, None]) & (around < self.starts[document + 1][:, None])
        return self.ids[np.where(valid, around, 0)].astype(np.int32), valid
