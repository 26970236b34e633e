"""The encoders: each counting engine's way to turn a batch of documents into token ids, all alike.

`TokenizersEngine` is the reference, Hugging Face `tokenizers`, on the 1.0 API (ids handed back as numpy
arrays, truncation and padding per call) or the 0.2x one, which transformers pins (`tokenizers<0.24`), where
`encode_batch_fast` skips the offsets counting never reads. `FastokensEngine` is the accelerator, which
hands a batch back as one flat buffer of ids. Which one counts, and only once checked against the
reference, is `vocabrisk.counting.engines`'s choice; the tokenizer files are loaded by
`vocabrisk.model.tokenizer`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from vocabrisk.model.tokenizer import (
    fastokens_version,
    is_fast_api,
    load_fastokens,
    load_tokenizer,
    release_tokenizer,
    tokenizers_version,
)


@dataclass(frozen=True)
class Encoded:
    """The ids of a batch of documents, one after another: document i's are `ids[bounds[i]:bounds[i + 1]]`."""

    ids: np.ndarray  # unsigned integers, as the engine hands them back
    bounds: np.ndarray  # int64, one more than there are documents

    @classmethod
    def of(cls, documents: list) -> Encoded:
        """From each document's ids (arrays or lists)."""
        arrays = [np.asarray(d, dtype=np.uint32) for d in documents]
        lengths = np.fromiter(map(len, arrays), dtype=np.int64, count=len(arrays))
        ids = np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.uint32)
        return cls(ids, np.concatenate([[0], np.cumsum(lengths)]))

    def documents(self) -> list[np.ndarray]:
        return np.split(self.ids, self.bounds[1:-1]) if len(self.bounds) > 1 else []

    def __add__(self, other: Encoded) -> Encoded:
        """This batch's documents, then OTHER's."""
        bounds = np.concatenate([self.bounds, other.bounds[1:] + self.bounds[-1]])
        return Encoded(np.concatenate([self.ids, other.ids.astype(self.ids.dtype, copy=False)]), bounds)


class Engine(Protocol):
    """Encodes documents as the tokenizer does, each on its own; `name` says which engine (and version)."""

    name: str

    def encode(self, texts: list[str], add_special_tokens: bool) -> Encoded: ...


class TokenizersEngine:
    """The reference: Hugging Face `tokenizers`, on either API, with truncation and padding off. `release` lets
    its tokenizer go while another engine counts; the next `encode` loads it again."""

    def __init__(self, tokenizer_json: str, split_special_tokens: bool):
        self.name = tokenizers_version()
        self._path, self._split, self._fast = tokenizer_json, split_special_tokens, is_fast_api()
        self._load()

    def _load(self):
        self._tokenizer = tokenizer = load_tokenizer(self._path)
        if not self._fast:
            tokenizer.no_truncation()
            tokenizer.no_padding()
            self._encode_batch = getattr(tokenizer, "encode_batch_fast", tokenizer.encode_batch)  # _fast: 0.20.1+
        return tokenizer

    def release(self) -> None:
        """Let the tokenizer go (`vocabrisk.model.tokenizer.release_tokenizer`) until the next `encode`."""
        self._tokenizer = self._encode_batch = None
        release_tokenizer(self._path)

    @property
    def loaded(self) -> bool:
        return self._tokenizer is not None

    def encode(self, texts: list[str], add_special_tokens: bool) -> Encoded:
        tokenizer = self._load() if self._tokenizer is None else self._tokenizer
        if self._fast:
            found = tokenizer.encode_batch(
                texts,
                add_special_tokens=add_special_tokens,
                encode_special_tokens=self._split,
                truncation=None,
                padding=None,
            )
            return Encoded.of([e.ids_array for e in found])
        tokenizer.encode_special_tokens = self._split  # set per call: every engine of the process shares it
        return Encoded.of([e.ids for e in self._encode_batch(texts, add_special_tokens=add_special_tokens)])


class FastokensEngine:
    """fastokens: a batch encoded into one flat buffer of ids, with no Python object per document."""

    def __init__(self, tokenizer_json: str, split_special_tokens: bool):
        self.name = fastokens_version() or "fastokens"
        self._tokenizer = load_fastokens(tokenizer_json)
        self._split = split_special_tokens

    def encode(self, texts: list[str], add_special_tokens: bool) -> Encoded:
        ids, bounds = self._tokenizer.encode_batch_flat(
            texts, add_special_tokens=add_special_tokens, split_special_tokens=self._split
        )
        return Encoded(np.frombuffer(ids, dtype=np.uint32), np.frombuffer(bounds, dtype=np.uint64).astype(np.int64))
