"""How much the base model relies on each token: the prior of the risk model.

A prior is a probability vector over token ids. Where better evidence exists (a reference
corpus in the base model's own distribution) it comes from counts; with no data at all it
comes from what the tokenizer reveals about its training corpus:

- Unigram pieces carry their log-probability;
- BPE merges were learnt in order of frequency, so a token made by an early merge is a
  common one (Zipf over the merge rank);
- WordPiece vocabularies are stored roughly by frequency, so the id is the rank.
"""

from __future__ import annotations

import numpy as np

from vocabrisk.model.vocabulary import Vocabulary

ZIPF_OFFSET = 10.0  # flattens the head of the Zipf curve, where ranks say little


def tokenizer_prior(vocab: Vocabulary) -> np.ndarray:
    """A data-free prior from the tokenizer alone (see the module docstring)."""
    size = vocab.size
    if vocab.scores is not None:
        scores = np.full(size, -np.inf)
        scores[: len(vocab.scores)] = vocab.scores
        weights = np.exp(scores - np.max(scores[np.isfinite(scores)]))
    else:
        ranks = _frequency_ranks(vocab)
        weights = 1.0 / (ranks + ZIPF_OFFSET)
    for token_id in vocab.special_ids:
        weights[token_id] = 0.0
    for token_id, piece in enumerate(vocab.pieces):
        if piece is None:
            weights[token_id] = 0.0
    total = weights.sum()
    return weights / total if total > 0 else np.full(size, 1.0 / max(size, 1))


def _frequency_ranks(vocab: Vocabulary) -> np.ndarray:
    """Estimated frequency rank of every token id (0 = most frequent)."""
    ranks = np.arange(vocab.size, dtype=np.float64)
    if vocab.merge_ranks is None:
        return ranks
    # Alphabet tokens (no merge makes them): printable ASCII is as common as the first
    # merges; other single bytes or characters sit in the middle of the ranking.
    middle = float(len(vocab.merge_ranks)) / 2
    for token_id in range(vocab.size):
        if token_id in vocab.merge_ranks:
            ranks[token_id] = vocab.merge_ranks[token_id]
            continue
        raw = vocab.surface(token_id)
        ranks[token_id] = 0.0 if raw is not None and len(raw) == 1 and 0x20 <= raw[0] < 0x7F else middle
    return ranks


def counts_prior(counts: np.ndarray, smoothing: float = 0.5) -> np.ndarray:
    """A prior from a reference corpus's counts, additively smoothed so unseen rows keep a little weight."""
    weights = counts.astype(np.float64) + smoothing
    return weights / weights.sum()
