"""The risk model: exposure, corpus risk, baselines, advice, ranking and diffs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from vocabrisk import Profile, TrainingPlan, scan
from vocabrisk.advice import advise, head_epsilon
from vocabrisk.compare import diff, rank
from vocabrisk.errors import ProfileError
from vocabrisk.risk.exposure import assess, band, exposure, never_seen_share, unigram_kl
from vocabrisk.risk.summary import Summary

SAMPLES = Path(__file__).resolve().parents[2] / "sample_corpora"
SMALL_PLAN = TrainingPlan(tokens_per_step=4096, steps=500, beta2=0.999)


@pytest.fixture(scope="module")
def profiles() -> dict[str, Profile]:
    names = ["english-prose", "python-code.jsonl", "korean-notes.txt", "numbers-tables.csv", "german-dialogue.jsonl.gz"]
    result = {name: scan([str(SAMPLES / name)], "demo") for name in names}
    result["all"] = scan([str(SAMPLES)], "demo")
    return result


shares_strategy = st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=50).map(np.array)


@given(shares=shares_strategy, steps=st.integers(1, 5000), beta2=st.floats(0.5, 0.9999), per_step=st.integers(1, 10**7))
def test_exposure_is_a_share_of_steps_and_falls_as_tokens_get_commoner(shares, steps, beta2, per_step):
    plan = TrainingPlan(tokens_per_step=per_step, steps=steps, beta2=beta2)
    values = exposure(shares, plan)
    assert np.all((values >= 0) & (values <= 1))
    order = np.argsort(shares, kind="stable")
    assert np.all(np.diff(values[order]) <= 1e-12)


def test_absent_tokens_are_exposed_all_run_and_frequent_ones_almost_never():
    values = exposure(np.array([0.0, 1e-2]), TrainingPlan(tokens_per_step=100_000, steps=1000))
    assert values[0] == 1.0
    assert values[1] < 1e-3


def test_more_tokens_per_step_protect_rare_tokens():
    rare = np.array([1e-7])
    small = exposure(rare, TrainingPlan(tokens_per_step=10_000))
    large = exposure(rare, TrainingPlan(tokens_per_step=10_000_000))
    assert large[0] < small[0]


def test_bands_cut_the_score_range():
    assert [band(x) for x in (0.0, 0.049, 0.05, 0.19, 0.2, 1.0)] == ["low", "low", "medium", "medium", "high", "high"]


def test_demo_profiles_use_the_bundled_reference_as_prior(profiles):
    profile = profiles["all"]
    assert profile.prior_source.startswith("reference: reference.txt.gz")
    assert np.isclose(profile.prior.sum(), 1.0)


def test_risk_is_the_prior_weighted_exposure(profiles):
    result = assess(profiles["korean-notes.txt"], SMALL_PLAN)
    assert result.score == pytest.approx(float(np.sum(result.prior * result.exposure)))


def test_narrow_corpora_are_riskier_than_their_mix(profiles):
    mixed = assess(profiles["all"], SMALL_PLAN).score
    for name in ("python-code.jsonl", "korean-notes.txt", "numbers-tables.csv"):
        assert assess(profiles[name], SMALL_PLAN).score > mixed


def test_korean_corpus_starves_latin_rows_and_feeds_hangul(profiles):
    summary = Summary.of(profiles["korean-notes.txt"], SMALL_PLAN)
    groups = {g.group: g for g in summary.groups}
    assert groups["Hangul"].starved < groups["Hangul"].rows / 2
    assert groups["Latin"].starved > groups["Latin"].rows / 2
    assert summary.groups[0].group != "Hangul"


def test_baselines_are_computed_for_comparison(profiles):
    narrow, broad = profiles["numbers-tables.csv"], profiles["all"]
    assert never_seen_share(narrow) > never_seen_share(broad)
    assert unigram_kl(narrow) > unigram_kl(broad) >= 0


def test_mixing_replay_lowers_risk_monotonically(profiles):
    advice = advise(Summary.of(profiles["python-code.jsonl"], SMALL_PLAN))
    risks = [row["risk"] for row in advice.mixing]
    assert risks == sorted(risks, reverse=True)
    assert risks[-1] < Summary.of(profiles["python-code.jsonl"], SMALL_PLAN).risk.score


def test_mixing_a_named_replay_corpus_uses_its_counts(profiles):
    summary = Summary.of(profiles["korean-notes.txt"], SMALL_PLAN)
    advice = advise(summary, replay=profiles["english-prose"])
    assert advice.mixing[0]["replay"].startswith("replay:")
    assert advice.mixing[-1]["risk"] < summary.risk.score


def test_head_epsilon_keeps_most_of_the_step_of_covered_rows(profiles):
    eps = head_epsilon(Summary.of(profiles["korean-notes.txt"], SMALL_PLAN))
    assert eps, "a narrow corpus gets a head-eps recommendation"
    kept = eps["covered_gradient"] / (eps["covered_gradient"] + eps["value"])
    assert 0.93 < kept < 0.97  # 95%, up to rounding eps to one significant figure
    assert eps["hidden_scale_from"] == "final norm gain"
    assert eps["hidden_scale"] == pytest.approx(profiles["korean-notes.txt"].head.final_norm_rms)


def test_high_risk_advises_against_training_the_head_plainly(profiles):
    advice = advise(Summary.of(profiles["numbers-tables.csv"], SMALL_PLAN))
    assert advice.train_head["recommendation"].startswith(("freeze", "train the head with"))
    assert advice.add_data and advice.add_data[0]["examples"]


def test_rank_orders_candidates_and_reuses_saved_profiles(profiles, tmp_path):
    saved = profiles["english-prose"].save(tmp_path / "prose")

    def must_not_rescan(path):
        assert path != str(saved)
        return scan([path], "demo")

    candidates = [str(saved), str(SAMPLES / "korean-notes.txt"), str(SAMPLES)]
    ranked = rank(candidates, "demo", SMALL_PLAN, scan_candidate=must_not_rescan)
    forecasts = [r.summary.forecast.total for r in ranked]  # rank orders by the forecast
    assert forecasts == sorted(forecasts)
    row = ranked[0].to_dict()
    assert {"never_seen_share", "unigram_kl"} == set(row["baselines"])


def test_rank_refuses_candidates_under_different_priors(profiles):
    data_free = scan([str(SAMPLES / "korean-notes.txt")], "demo", reference=None)
    with pytest.raises(ProfileError, match="prior"):
        rank([profiles["english-prose"], data_free], "demo", SMALL_PLAN)


def test_diff_names_rows_newly_starved(profiles):
    result = diff(profiles["all"], profiles["python-code.jsonl"], SMALL_PLAN)
    assert result["risk_after"] > result["risk_before"]
    assert result["newly_starved"] > 0 and result["newly_starved_tokens"]
    assert any(g["group"] == "Hangul" for g in result["groups"])
    back = diff(profiles["python-code.jsonl"], profiles["all"], SMALL_PLAN)
    assert back["no_longer_starved"] == result["newly_starved"]


def test_a_plan_that_is_not_a_training_plan_is_refused_by_name(profiles):
    """`Summary.of(profile, 5)` says what a plan is, instead of an AttributeError from inside the risk (issue 32)."""
    with pytest.raises(TypeError, match=r"plan must be a TrainingPlan, not int 5.*TrainingPlan\(steps="):
        Summary.of(profiles["korean-notes.txt"], 5)
