"""How well predictions agree with measurements: rank correlation, AUROC, precision at k.

Computed from ranks (ties share their average rank), so a predictor that ties many rows, as
exposure does for every never-seen token, is neither rewarded nor punished for the order
inside a tie.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.stats import ConstantInputWarning, rankdata, spearmanr


def spearman(predicted, measured) -> float:
    """Spearman's rho (scipy's); NaN when either side is constant (no order to agree with) or holds a NaN."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantInputWarning)  # the NaN says it
        return float(spearmanr(predicted, measured).statistic)


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
    """Share of positives among the k highest-scoring entries, in expectation over the order of ties.

    Rows tied at the cut-off each fill a slot with equal chance, so a predictor that ties many rows
    (exposure ties every never-seen token) gets the precision of a random pick among its tied rows
    rather than whatever the rows' positions happen to give.
    """
    scores, labels = np.asarray(scores, dtype=float), np.asarray(labels, dtype=bool)
    k = min(max(1, k), scores.size)
    cut = np.sort(scores)[::-1][k - 1]
    above, tied = scores > cut, scores == cut
    slots_left = k - int(above.sum())
    hits = labels[above].sum() + labels[tied].sum() * slots_left / int(tied.sum())
    return float(hits / k)
