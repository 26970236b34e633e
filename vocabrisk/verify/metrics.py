"""How well predictions agree with measurements: rank correlation, AUROC, precision at k.

Computed from ranks (ties share their average rank), so a predictor that ties many rows, as
exposure does for every never-seen token, is neither rewarded nor punished for the order
inside a tie.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata


def spearman(predicted, measured) -> float:
    """Spearman's rho; NaN when either side is constant (no order to agree with)."""
    a, b = rankdata(predicted), rankdata(measured)
    if a.std() == 0 or b.std() == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def auroc(scores, labels) -> float:
    """Chance that a random positive scores above a random negative (ties count half)."""
    labels = np.asarray(labels, dtype=bool)
    positives, negatives = int(labels.sum()), int((~labels).sum())
    if positives == 0 or negatives == 0:
        return float("nan")
    ranks = rankdata(scores)
    return float((ranks[labels].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def top_share(values, share: float) -> np.ndarray:
    """Boolean mask of the `share` of entries with the largest values (at least one)."""
    values = np.asarray(values)
    k = max(1, round(share * values.size))
    mask = np.zeros(values.size, dtype=bool)
    mask[np.argsort(-values, kind="stable")[:k]] = True
    return mask


def precision_at_k(scores, labels, k: int) -> float:
    """Share of the k highest-scoring entries that are positives (ties broken by position)."""
    labels = np.asarray(labels, dtype=bool)
    top = np.argsort(-np.asarray(scores), kind="stable")[: max(1, k)]
    return float(labels[top].mean())
