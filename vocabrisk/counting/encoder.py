"""The encoder: one call that turns a batch of documents into token-id arrays, on either `tokenizers` API.

`tokenizers>=1.0` is the fast path: 5-57x the 0.2x releases on the same text and cores
(docs/PERFORMANCE.md), with identical ids. It takes truncation and padding per call and hands
ids back as numpy arrays. The 0.2x API stays supported, as the correct path where 1.0 cannot
be installed (next to transformers, which pins `tokenizers<0.24`); there, `encode_batch_fast`
skips the offsets that counting never reads. (Where counting runs is `vocabrisk.counting.executors`;
the tokenizer itself is loaded by `vocabrisk.model.tokenizer`.)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from vocabrisk.counting.policy import SpecialTokenPolicy
from vocabrisk.model.tokenizer import is_fast_api, load_tokenizer

Encoder = Callable[[list[str]], list[np.ndarray]]


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
