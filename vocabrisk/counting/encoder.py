"""The encoder: one call that turns a batch of documents into token-id arrays, on either `tokenizers` API.

`tokenizers>=1.0` is the fast path: 5-57x the 0.2x releases on the same text and cores
(docs/PERFORMANCE.md), with identical ids. It takes truncation and padding per call and hands
ids back as numpy arrays. The 0.2x API stays supported, as the correct path where 1.0 cannot
be installed (next to transformers, which pins `tokenizers<0.24`); there, `encode_batch_fast`
skips the offsets that counting never reads. (Where counting runs is `vocabrisk.engines`.)
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

import numpy as np

from vocabrisk.counting.policy import SpecialTokenPolicy
from vocabrisk.model.vocabulary import read_tokenizer_file

Encoder = Callable[[list[str]], list[np.ndarray]]
_TOKENIZERS: dict[str, object] = {}  # by sha256 of the file: shared by every encoder of the process


def tokenizers_version() -> str:
    """The installed `tokenizers`, for reports and benchmarks ("engine" in their output)."""
    import tokenizers

    return f"tokenizers {tokenizers.__version__}"


def is_fast_api() -> bool:
    """Whether the installed `tokenizers` has the 1.0 API, the fast path."""
    from tokenizers import Tokenizer

    return not hasattr(Tokenizer, "no_truncation")


def load_encoder(tokenizer_json: str, policy: SpecialTokenPolicy) -> Encoder:
    """An encoder applying the policy with truncation and padding off, whatever the file says."""
    tokenizer = load_tokenizer(tokenizer_json)
    if is_fast_api():
        kwargs = {
            "add_special_tokens": policy.add_special_tokens,
            "encode_special_tokens": policy.split_special_tokens,
            "truncation": None,
            "padding": None,
        }
        return lambda texts: [e.ids_array for e in tokenizer.encode_batch(texts, **kwargs)]
    tokenizer.no_truncation()
    tokenizer.no_padding()
    encode_batch = getattr(tokenizer, "encode_batch_fast", tokenizer.encode_batch)  # _fast: 0.20.1+
    add, split = policy.add_special_tokens, policy.split_special_tokens

    def encode(texts: list[str]) -> list[np.ndarray]:
        tokenizer.encode_special_tokens = split  # set per call: the tokenizer is shared by every encoder
        return [np.array(e.ids, dtype=np.uint32) for e in encode_batch(texts, add_special_tokens=add)]

    return encode


def load_tokenizer(tokenizer_json: Path | str):
    """The file's `tokenizers.Tokenizer`, loaded once per process for each content (seconds for a large
    vocabulary).

    `tokenizers` is imported here, by the commands that count, not by those that only read profiles.
    """
    from tokenizers import Tokenizer

    _, digest = read_tokenizer_file(tokenizer_json)
    if digest not in _TOKENIZERS:
        _TOKENIZERS[digest] = Tokenizer.from_file(str(tokenizer_json))
    return _TOKENIZERS[digest]


def preload_tokenizer(tokenizer_json: Path | str) -> None:
    """Load the file's tokenizer ahead of counting, while this process has nothing else to do. A file
    it cannot load is passed over: counting loads it again, and reports the error there."""
    with contextlib.suppress(Exception):
        load_tokenizer(tokenizer_json)
