"""The three estimates of how much the base model relies on each token; `vocabrisk.prior.choose` chooses one.

A prior is a probability vector over token ids:

- `counts_prior`: counts of a reference corpus in the base model's own distribution, smoothed.
- `head_prior`, with no data: the head itself. Training pushes every row whose token is
  absent along the same direction (minus the typical hidden state), so rare tokens' rows
  share the mean row's direction while common ones point away from it. With a final
  LayerNorm bias `b`, `W @ b` is the model's own context-free logit offset, and
  `softmax(W @ b)` is used directly; without one (RMSNorm models), tokens are ranked by
  `-(W @ mean_row)` and weighted Zipf-like by that rank.
- `tokenizer_prior`, with no weights either: Unigram pieces carry their log-probability; BPE
  merges were learnt in order of frequency (Zipf over merge rank), byte-fallback pieces ranked
  last; WordPiece vocabularies are stored roughly by frequency.

On the demo model, ranking 15 corpora by risk under each data-free prior agreed with the
ranking under its reference corpus with Spearman 0.94 (`W @ b`), 0.89 (mean row) and 0.86
(tokenizer); see docs/VALIDITY.md for measurements against training.
"""

from __future__ import annotations

import numpy as np

from vocabrisk.model.head import HeadInfo, read_head, read_vector
from vocabrisk.model.vocabulary import Vocabulary

AUTO = "auto"  # `vocabrisk.prior.choose`: a reference's counts where there is one, else the head, else the tokenizer
PRIORS = (AUTO, "head", "tokenizer", "self-samples")  # what --prior may name
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
    weights[vocab.special_mask | vocab.reserved_mask] = 0.0
    total = weights.sum()
    return weights / total if total > 0 else np.full(size, 1.0 / max(size, 1))


def _frequency_ranks(vocab: Vocabulary) -> np.ndarray:
    """Estimated frequency rank of every token id (0 = most frequent)."""
    if vocab.merge_ranks is None:  # id order, skipping the ids no text maps to
        kept = ~(vocab.reserved_mask | vocab.special_mask)
        return np.cumsum(kept).astype(np.float64) - 1
    # Alphabet tokens (no merge makes them): printable ASCII is as common as the first
    # merges; other single bytes or characters sit in the middle of the ranking.
    ranks = np.full(vocab.size, float(len(vocab.merge_ranks)) / 2)
    ascii_chars = [i for i, raw in enumerate(vocab.surfaces) if raw and len(raw) == 1 and 0x20 <= raw[0] < 0x7F]
    ranks[ascii_chars] = 0.0
    # Byte-fallback pieces (`<0x41>`) stand in only for characters the vocabulary lacks: last.
    ranks[vocab.byte_fallback_mask] = float(len(vocab.merge_ranks))
    merged = np.fromiter(vocab.merge_ranks.keys(), dtype=np.int64, count=len(vocab.merge_ranks))
    ranks[merged] = np.fromiter(vocab.merge_ranks.values(), dtype=np.float64, count=len(vocab.merge_ranks))
    return ranks


HEAD_CHUNK_ROWS = 8192  # rows of the head read at once: bounds memory for 150k-row heads


def head_prior(head: HeadInfo, vocab_size: int) -> tuple[np.ndarray, str]:
    """A data-free prior from the head (see the module docstring), padded or cut to the vocabulary."""
    rows = range(0, head.rows, HEAD_CHUNK_ROWS)
    if head.final_norm_bias is not None:
        bias = read_vector(head.final_norm_bias)
        logits = np.concatenate([read_head(head, slice(i, i + HEAD_CHUNK_ROWS)) @ bias for i in rows])
        weights = np.exp(logits.astype(np.float64) - logits.max())
        how = "head: context-free logits W·b (final-norm bias)"
    else:
        mean = sum(read_head(head, slice(i, i + HEAD_CHUNK_ROWS)).sum(0, dtype=np.float64) for i in rows) / head.rows
        alignment = np.concatenate([read_head(head, slice(i, i + HEAD_CHUNK_ROWS)) @ mean for i in rows])
        weights = 1.0 / (_ranks(alignment) + ZIPF_OFFSET)  # least aligned with the mean row = commonest
        how = "head: rows ranked against the mean row"
    prior = np.zeros(vocab_size)
    shared = min(vocab_size, head.rows)
    prior[:shared] = weights[:shared]
    return prior / prior.sum(), how


def _ranks(values: np.ndarray) -> np.ndarray:
    ranks = np.empty(values.size)
    ranks[np.argsort(values, kind="stable")] = np.arange(values.size)
    return ranks


UNSEEN_MASS = 0.01  # at most this share of a counts prior goes to tokens the sample never shows


def counts_prior(counts: np.ndarray) -> np.ndarray:
    """A prior from a reference sample's counts, additively smoothed so unseen rows keep a little weight.

    The pseudo-count is Jeffreys' 0.5, lowered for small samples so that all the tokens of a
    50k-token vocabulary cannot outweigh what a 40k-token sample actually shows.
    """
    total = float(counts.sum())
    smoothing = min(0.5, UNSEEN_MASS * total / max(counts.size, 1)) if total > 0 else 1.0
    weights = counts.astype(np.float64) + smoothing
    return weights / weights.sum()
