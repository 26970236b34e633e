"""The agreement metrics `verify` and the validity benchmark report."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("scipy")

from vocabrisk.verify.metrics import auroc, precision_at_k, spearman


def test_precision_at_k_counts_the_top_rows_and_shares_out_ties():
    assert precision_at_k([3, 2, 1], [True, False, False], 1) == 1.0
    # one slot among four tied rows, one of them positive: a random pick hits a quarter of the time
    assert precision_at_k([1, 1, 1, 1], [True, False, False, False], 1) == 0.25
    # the clear top row is a miss; two slots among four tied rows holding two positives
    assert precision_at_k([5, 1, 1, 1, 1], [False, True, True, False, False], 3) == pytest.approx(1 / 3)
    assert precision_at_k([1, 2], [True, True], 5) == 1.0  # k beyond the rows means all rows


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.booleans()), min_size=1, max_size=6),
    st.integers(1, 6),
)
def test_precision_at_k_is_the_mean_over_every_order_of_the_ties(rows, k):
    scores = np.array([s for s, _ in rows], dtype=float)
    labels = np.array([positive for _, positive in rows])
    k_used = min(k, len(rows))
    by_order = [
        labels[list(order)][np.argsort(-scores[list(order)], kind="stable")[:k_used]].mean()
        for order in itertools.permutations(range(len(rows)))
    ]
    assert precision_at_k(scores, labels, k) == pytest.approx(np.mean(by_order))


def test_auroc_ties_count_half():
    assert auroc([1, 1], [True, False]) == 0.5
    assert auroc([2, 1], [True, False]) == 1.0
    assert np.isnan(auroc([1, 2], [True, True]))


def test_spearman_averages_ties_and_is_nan_without_an_order():
    assert spearman([1, 2, 3, 4], [10, 30, 20, 40]) == pytest.approx(0.8)
    assert spearman([0, 0, 1, 2], [0, 1, 2, 3]) == pytest.approx(3 / 10**0.5)  # the tie shares rank 1.5
    assert np.isnan(spearman([1, 2, 3], [5, 5, 5]))
    assert np.isnan(spearman([1, float("nan"), 3], [1, 2, 3]))
