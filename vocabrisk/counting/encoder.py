"""The encoder: one call that turns a batch of documents into token-id arrays, on either `tokenizers` API.

`tokenizers>=1.0` is the fast path: 5-57x the 0.2x releases on the same text and cores
(docs/PERFORMANCE.md), with identical ids. It takes truncation and padding per call and hands
ids back as numpy arrays. The 0.2x API stays supported, as the correct path where 1.0 cannot
be installed (next to transformers, which pins `tokenizers<0.24`); there, `encode_batch_fast`
skips the offsets that counting never reads. (Where counting runs is `vocabrisk.engines`.)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from vocabrisk.counting.policy import SpecialTokenPolicy

Encoder = Callable[[list[str]], list[np.ndarray]]


def tokenizers_version() -> str:
    """The installed `tokenizers`, for reports and benchmarks ("engine" in their output)."""
    import tokenizers

    return f"tokenizers {tokenizers.__version__}"


def is_fast_api() -> bool:
    """Whether the installed `tokenizers` has the 1.0 API, the fast path."""
    from tokenizers import Tokenizer

    return not hasattr(Tokenizer, "no_truncation")


def load_encoder(tokenizer_json: str, policy: SpecialTokenPolicy) -> Encoder:
    """An encoder applying the policy with truncation and padding off, whatever the file says.

    `tokenizers` is imported here, by the commands that count, not by those that only read profiles.
    """
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(tokenizer_json)
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
    tokenizer.encode_special_tokens = policy.split_special_tokens
    encode_batch = getattr(tokenizer, "encode_batch_fast", tokenizer.encode_batch)  # _fast: 0.20.1+
    add = policy.add_special_tokens
    return lambda texts: [np.array(e.ids, dtype=np.uint32) for e in encode_batch(texts, add_special_tokens=add)]
