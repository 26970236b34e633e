"""The counting hot path: documents in, exact per-token-id counts out.

Every document is encoded on its own, exactly as the model's tokenizer would, with
truncation and padding switched off whatever `tokenizer.json` configures (Pegasus's file
cuts every document at 192 tokens). Works with `tokenizers` 0.2x and the 1.0 engine,
whose Python API differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from vocabrisk.counting.counts import TokenCounts
from vocabrisk.counting.policy import SpecialTokenPolicy


class TokenCounter:
    def __init__(self, tokenizer_json: Path | str, vocab_size: int, policy: SpecialTokenPolicy, eos_id: int | None):
        if policy.append_eos and eos_id is None:
            raise ValueError("append_eos needs the tokenizer's EOS token id")
        self.tokenizer_json = str(tokenizer_json)
        self.vocab_size = vocab_size
        self.policy = policy
        self.eos_id = eos_id
        self._tokenizer = Tokenizer.from_file(self.tokenizer_json)
        self._kwargs: dict = {"add_special_tokens": policy.add_special_tokens}
        if hasattr(self._tokenizer, "no_truncation"):  # tokenizers 0.2x
            self._tokenizer.no_truncation()
            self._tokenizer.no_padding()
            self._tokenizer.encode_special_tokens = policy.split_special_tokens
            self._ids = _ids_list
        else:  # the 1.0 engine takes these per call
            self._kwargs.update(truncation=None, padding=None, encode_special_tokens=policy.split_special_tokens)
            self._ids = _ids_array

    def __reduce__(self):
        # Worker processes rebuild the tokenizer from its file rather than unpickling it.
        return (TokenCounter, (self.tokenizer_json, self.vocab_size, self.policy, self.eos_id))

    def encode(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Token ids of each document, as the model's tokenizer gives them under the policy."""
        encodings = self._tokenizer.encode_batch(list(texts), **self._kwargs)
        ids = [self._ids(e) for e in encodings]
        if self.policy.append_eos:
            ids = [np.append(i, self.eos_id) for i in ids]
        return ids

    def count(self, texts: Sequence[str]) -> TokenCounts:
        """Exact counts of a batch of documents."""
        counts = np.zeros(self.vocab_size, dtype=np.int64)
        ids = self.encode(texts)
        if ids:
            counts += np.bincount(np.concatenate(ids), minlength=self.vocab_size)
        return TokenCounts(counts, documents=len(texts), text_bytes=sum(len(t.encode("utf-8")) for t in texts))


def _ids_list(encoding) -> np.ndarray:
    return np.array(encoding.ids, dtype=np.int64)


def _ids_array(encoding) -> np.ndarray:
    return encoding.ids_array.astype(np.int64, copy=False)
