"""A prior from the base model's own samples: drawn, counted, cached, and close to its reference."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from vocabrisk import TrainingPlan, scan
from vocabrisk.model.loaded import load_model
from vocabrisk.model.priors import counts_prior
from vocabrisk.prior.self_samples import SamplingPlan, self_sample_counts
from vocabrisk.risk.exposure import assess

pytest.importorskip("torch")
pytest.importorskip("transformers")

SAMPLES = Path(__file__).resolve().parents[2] / "sample_corpora"


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "vocabrisk"


def test_samples_are_counted_once_then_read_from_the_cache(cache):
    model = load_model("demo")
    plan = SamplingPlan(samples=8, length=32)
    first = self_sample_counts(model.files, model.vocab.size, 0, plan)
    assert first.sum() == 8 * 31 and first.shape == (model.vocab.size,)
    assert len(list(cache.rglob("*.npy"))) == 1
    again = self_sample_counts(model.files, model.vocab.size, 0, plan)
    np.testing.assert_array_equal(first, again)


def test_self_sample_prior_ranks_corpora_like_the_reference(cache):
    model = load_model("demo")
    counts = self_sample_counts(model.files, model.vocab.size, 0, SamplingPlan(samples=48))
    plan = TrainingPlan(tokens_per_step=8192, steps=300)
    candidates = sorted(SAMPLES.iterdir())
    with_reference, with_samples = [], []
    for path in candidates:
        profile = scan([str(path)], model)
        with_reference.append(assess(profile, plan).score)
        profile = replace(profile, per_token=replace(profile.table, prior=counts_prior(counts)))
        with_samples.append(assess(profile, plan).score)
    ranks = [np.argsort(np.argsort(x)) for x in (with_reference, with_samples)]
    assert np.corrcoef(*ranks)[0, 1] >= 0.8
