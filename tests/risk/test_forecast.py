"""The forecast of forgetting: its invariants, its mechanism terms, calibration, and its place in profiles."""

from __future__ import annotations

import json
import math
import os
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vocabrisk import scan
from vocabrisk.compare import rank
from vocabrisk.model.resolve import DEMO_MODEL_DIR
from vocabrisk.prior.old_text import OldText
from vocabrisk.profile.profile import Profile
from vocabrisk.risk.calibration import (
    FORM,
    Calibration,
    EarlyPoint,
    ProbeRun,
    fit,
    leave_one_out,
    load_calibration,
    save_calibration,
)
from vocabrisk.risk.exposure import exposure
from vocabrisk.risk.forecast import (
    DRIFT_FLOOR,
    DRIFT_FROM,
    EARLY_STEP,
    LIKENESS_REFERENCE,
    REPLAY_ONSET,
    TRANSFER_UNTIL,
    Body,
    Drive,
    Replay,
    checkpoints,
    competition,
    forecast,
    push,
    saturate,
    self_alike,
    token_entropy,
    transfer_weight,
)
from vocabrisk.risk.plan import TrainingPlan
from vocabrisk.risk.summary import Summary

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_corpora"
PLAN = TrainingPlan(tokens_per_step=1024, steps=100, learning_rate=1e-3, warmup_steps=10)
GENTLE = replace(PLAN, learning_rate=1e-4)  # on the demo's sample corpora, whose forecast at 1e-3 is past the ceiling


def two_languages(vocab: int = 40, docs: int = 6, length: int = 200, seed: int = 0) -> OldText:
    """Old text in two scripts that never mix: tokens 0..19 and 20..39, a document each in turn."""
    rng = np.random.default_rng(seed)
    half = vocab // 2
    return OldText.of([rng.integers(0, half, length) + (half if d % 2 else 0) for d in range(docs)])


def shares_of(tokens: list[int], vocab: int = 40) -> np.ndarray:
    shares = np.zeros(vocab)
    shares[tokens] = 1.0 / len(tokens)
    return shares


def predict(
    shares: np.ndarray, old: OldText | None, plan: TrainingPlan = PLAN, calibration=None, corpus=5_000, **terms
):
    prior = np.full(len(shares), 1.0 / len(shares))
    return forecast(
        shares, exposure(shares, plan.resolve(corpus)), prior, old, plan, corpus, calibration or Calibration(), **terms
    )


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-20, 20), min_size=4, max_size=40), st.booleans())
def test_competition_is_never_negative(values, with_old):
    shift = np.array(values)
    old = OldText.of([np.arange(len(values)), np.arange(len(values))[::-1]]) if with_old else None
    prior = np.full(len(values), 1.0 / len(values))
    assert competition(shift, np.ones(len(values), bool), old, prior)[0] >= -1e-9


@settings(max_examples=30, deadline=None)
@given(st.floats(-25, 25))
def test_a_shift_shared_by_every_row_costs_nothing(value):
    old = two_languages()
    prior = np.full(40, 1 / 40)
    shift = np.full(40, value)
    assert competition(shift, np.ones(40, bool), old, prior)[0] == pytest.approx(0.0, abs=1e-9)
    assert competition(shift, np.ones(40, bool), None, prior)[0] == pytest.approx(0.0, abs=1e-9)


def test_push_is_down_for_starved_rows_and_up_for_over_fed_ones():
    prior = np.array([0.25, 0.25, 0.25, 0.25])
    shares = np.array([0.0, 0.25, 0.75, 0.0])
    rows = push(shares, prior, exposure=np.array([1.0, 0.0, 0.0, 0.4]))
    assert rows[0] == -1.0 and rows[3] == -0.4  # starved: down, by the share of steps exposed
    assert rows[1] == 0.0  # fed as the base uses it: no net push
    assert rows[2] == pytest.approx(0.5)  # fed three times the base's use: up


def test_a_corpus_in_a_script_the_old_text_never_mixes_with_hurts_less_than_a_narrow_one_in_its_own():
    old = two_languages()
    disjoint = predict(shares_of(list(range(20, 40))), old)  # feeds every token of the second script
    narrow = predict(shares_of([0, 1, 2]), old)  # feeds three tokens of the first
    assert narrow.head > 5 * disjoint.head
    assert disjoint.head < 0.05
    # without old text (no locality) the disjoint corpus would look far worse
    assert predict(shares_of(list(range(20, 40))), None).head > 10 * disjoint.head


def test_more_learning_rate_forecasts_more_forgetting():
    old, shares = two_languages(), shares_of([0, 1, 2, 3, 25])
    low = predict(shares, old, replace(PLAN, learning_rate=1e-4)).head
    high = predict(shares, old, replace(PLAN, learning_rate=1e-3)).head
    assert 0 < low < high


def test_repetition_raises_the_body_and_the_total_exceeds_the_head():
    old, shares = two_languages(), shares_of([0, 1, 2, 3, 25])
    once = predict(shares, old, corpus=PLAN.tokens_per_step * PLAN.steps)
    often = predict(shares, old, corpus=PLAN.tokens_per_step * PLAN.steps // 20)
    assert once.epochs == pytest.approx(1.0) and often.epochs == pytest.approx(20.0)
    assert once.terms.passes == pytest.approx(1.0) and often.terms.passes == pytest.approx(20.0)
    assert often.body > once.body > 0 and once.total > once.head
    # ln(1 + E): twenty passes forecast ln 21 / ln 2 times the body of one, the head's part aside
    assert often.body / once.body == pytest.approx(math.log(21) / math.log(2))


def test_less_than_one_pass_of_a_large_corpus_forecasts_the_body_of_one_pass():
    old, shares = two_languages(), shares_of([0, 1, 2, 3, 25])
    plan_tokens = PLAN.tokens_per_step * PLAN.steps
    once, fifth = predict(shares, old, corpus=plan_tokens), predict(shares, old, corpus=5 * plan_tokens)
    assert fifth.terms.passes == pytest.approx(0.2)
    assert fifth.body == pytest.approx(once.body) and fifth.curve == once.curve  # fresh text at every step


def test_replay_takes_passes_from_a_small_corpus():
    reference = [str(SAMPLES / "english-prose")]
    plan = replace(PLAN, steps=400)  # many passes over the small Korean notes
    summary = Summary.of(scan([str(SAMPLES / "korean-notes.txt")], "demo", reference=reference), plan)
    replay = scan([str(SAMPLES / "python-code.jsonl")], "demo")  # not the old text's kind: it protects little
    mixed = summary.mixed(replay.shares, 0.5).forecast
    assert mixed.terms.passes == pytest.approx(summary.forecast.terms.passes / 2)
    unprotected = math.log1p(mixed.terms.passes) / math.log1p(summary.forecast.terms.passes)
    assert mixed.body == pytest.approx(summary.forecast.body * mixed.replay.protection * unprotected)


def test_the_body_follows_how_alike_the_corpus_and_the_old_text_are():
    old = two_languages()
    usage = np.bincount(old.ids, minlength=40).astype(float)
    near, far = shares_of([0, 1, 2, 3, 20, 21]), shares_of([0, 1, 2, 3, 20, 21])
    usage_far = usage.copy()
    usage_far[:4] = 0.0  # an old text that never uses the corpus's first four tokens
    alike = predict(near, old, old_usage=usage)
    unlike = predict(far, old, old_usage=usage_far)
    assert unlike.terms.alike < alike.terms.alike and unlike.body < alike.body


def test_a_plan_in_epochs_forecasts_like_the_same_plan_in_steps():
    old, shares, corpus = two_languages(), shares_of([0, 1, 2, 30]), 51_200
    in_steps = predict(shares, old, replace(PLAN, steps=100), corpus=corpus)
    in_epochs = predict(shares, old, replace(PLAN, steps=None, epochs=2.0), corpus=corpus)
    assert in_epochs.total == pytest.approx(in_steps.total)


def test_a_frozen_head_and_the_head_eps_mitigation_forecast_less_from_the_head():
    old, shares = two_languages(), shares_of([0, 1, 2, 30])
    plain = predict(shares, old).head
    assert predict(shares, old, replace(PLAN, trains="head-frozen")).head == 0.0
    assert predict(shares, old, replace(PLAN, head_eps=1.0)).head < 0.2 * plain


def test_the_band_brackets_the_forecast():
    result = predict(shares_of([0, 1, 2]), two_languages())
    assert result.low < result.total < result.high
    size = result.head + result.body  # the band is on the forecast's size, the adaptation taken off or not
    assert result.high - result.total == pytest.approx((Calibration().band - 1) * size)
    bare = predict(shares_of([0, 1, 2]), two_languages(), calibration=Calibration(adaptation=0.0))
    assert bare.high / bare.total == pytest.approx(Calibration().band)
    assert bare.total / bare.low == pytest.approx(Calibration().band)


PROBES = (([0, 1, 2], 2_000), ([0, 1, 2], 20_000), ([3, 4, 25, 26], 5_000), (list(range(10)), 50_000))


def probe_runs(truth: Calibration, cases, early: bool = False) -> list[ProbeRun]:
    """Noiseless probe runs: what the forecast under TRUTH's constants measures for each (tokens, corpus size), and
    with EARLY at the first checkpoint too."""
    old, prior = two_languages(), np.full(40, 1 / 40)
    runs = []
    for tokens, corpus in cases:
        shares = shares_of(tokens)
        made = predict(shares, old, calibration=truth, corpus=corpus)
        drive = Drive.of(shares, exposure(shares, PLAN.resolve(corpus)), prior, PLAN, corpus)

        def kl(kappas, drive=drive, shares=shares):
            return drive.head(kappas, shares > 0, old, prior)

        def early_kl(kappas, drive=drive, shares=shares):
            return drive.early_head(kappas, shares > 0, old, prior)

        at = EarlyPoint(made.curve[0].total, made.terms.curve[0], early_kl) if early else None
        name = f"{tokens} ({corpus})"
        runs.append(ProbeRun(name, made.head, made.total, made.terms.unit, kl, source=str(tokens), early=at))
    return runs


def test_fit_recovers_the_constants_that_made_the_probes():
    truth = Calibration(kappa=50.0, body_gain=3.0)
    probes = probe_runs(truth, PROBES)
    fitted = fit(probes, fingerprint="test", old_loss=2.7)
    assert fitted.old_loss == 2.7  # the old text's base loss the probes' body terms were made with, kept
    assert fitted.kappa == pytest.approx(truth.kappa, rel=0.2)
    assert fitted.body_gain == pytest.approx(truth.body_gain, rel=0.2)
    assert fitted.source.startswith("calibrated")
    for p in fitted.probes:
        assert p["forecast_total"] == pytest.approx(p["total"], rel=0.25)


@pytest.mark.parametrize("adaptation", [0.0, 0.002, 0.01])
def test_fit_measures_the_adaptation_from_the_probes_early_points(adaptation):
    truth = Calibration(kappa=50.0, body_gain=3.0, adaptation=adaptation)
    probes = probe_runs(truth, PROBES, early=True)
    assert checkpoints(PLAN.steps)[0] == EARLY_STEP  # the early points are the forecast's at that step
    fitted = fit(probes)
    assert fitted.adaptation == pytest.approx(adaptation, abs=2e-4)
    assert fitted.body_gain == pytest.approx(truth.body_gain, rel=0.2)
    assert all("early_total" in p for p in fitted.probes)
    assert fit(probe_runs(truth, PROBES)).adaptation == 0.0  # no early point: none is assumed
    assert fit(probes, adaptation=0.05).adaptation == 0.05  # a number fixes it


@pytest.mark.parametrize("gain", [3e-4, 2.5e5, 4e7])
def test_fit_finds_a_body_gain_on_any_scale(gain):
    # A fixed grid ending at 1e5 once pinned v7's gain at its end (its body term's unit is small): the
    # gain's grid is drawn around what the probes ask for, so it is found wherever it lies.
    truth = Calibration(kappa=50.0, body_gain=gain, adaptation=0.0)
    fitted = fit(probe_runs(truth, PROBES), adaptation=0.0)
    assert fitted.body_gain == pytest.approx(gain, rel=0.05)


def test_a_saved_calibration_is_found_again_under_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert load_calibration("abc").source == "default"
    path = save_calibration(Calibration(kappa=7.0, source="calibrated on 4 probe runs", fingerprint="abc"))
    assert path.is_relative_to(tmp_path / "vocabrisk")
    assert json.loads(path.read_text())["kappa"] == 7.0
    assert load_calibration("abc").kappa == 7.0


def test_a_calibration_fitted_on_other_weights_of_the_model_is_set_aside_and_the_forecast_says_why(
    tmp_path, monkeypatch
):
    """A checkpoint trained again in place keeps its calibration key (name, tokenizer, head), not its weights."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = shutil.copytree(DEMO_MODEL_DIR, tmp_path / "model")
    korean = str(SAMPLES / "korean-notes.txt")
    profile = scan([korean], str(folder))
    fitted = Calibration(kappa=7.0, source="calibrated on 4 probe runs", fingerprint=profile.calibration_key,
                         weights=profile.weights_key, old_loss=3.0)  # fmt: skip
    save_calibration(fitted)
    assert Summary.of(profile, GENTLE).forecast.calibration.kappa == 7.0
    saved = Profile.load(profile.save(tmp_path / "profile"))
    assert saved.weights_key == profile.weights_key
    assert Summary.of(saved, GENTLE).forecast.calibration.kappa == 7.0
    weights = folder / "model.safetensors"
    os.utime(weights, ns=(weights.stat().st_atime_ns, weights.stat().st_mtime_ns + 1_000_000_000))
    retrained = scan([korean], str(folder))
    assert retrained.calibration_key == profile.calibration_key
    forecast = Summary.of(retrained, GENTLE).forecast
    assert not forecast.calibration.calibrated and forecast.calibration.old_loss is None
    assert "other weights of this model" in forecast.basis and "vocabrisk calibrate" in forecast.basis
    assert "other weights" in forecast.to_dict()["calibration_set_aside"]
    legacy = {k: v for k, v in fitted.to_dict().items() if k != "weights"}  # saved before weights were recorded
    save_calibration(Calibration.from_dict(legacy))
    assert load_calibration(profile.calibration_key, "any weights").kappa == 7.0


def test_a_calibration_fitted_to_an_earlier_form_is_set_aside_but_its_measured_base_loss_is_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    earlier = Calibration(kappa=7.0, source="calibrated on 8 probe runs", fingerprint="k", old_loss=3.2, form="v9")
    save_calibration(earlier)
    loaded = load_calibration("k")
    assert not loaded.calibrated and loaded.kappa is None and loaded.old_loss == 3.2
    assert f"forecast v9, not {FORM}" in loaded.described and "vocabrisk calibrate" in loaded.described
    save_calibration(replace(earlier, form=FORM))
    assert load_calibration("k").kappa == 7.0


def test_a_profile_keeps_its_old_text_and_every_summary_carries_the_forecast(tmp_path):
    profile = scan([str(SAMPLES / "korean-notes.txt")], "demo")
    assert profile.old_text is not None and len(profile.old_text.ids) > 10_000
    loaded = Profile.load(profile.save(tmp_path / "korean"))
    np.testing.assert_array_equal(loaded.old_text.ids, profile.old_text.ids)
    data = Summary.of(loaded, GENTLE).to_dict()["forecast"]
    assert data["total_nats"] > data["head_nats"] > 0
    assert data["band"][0] < data["total_nats"] < data["band"][1]
    assert math.isclose(data["epochs"], GENTLE.tokens_per_step * GENTLE.steps / profile.total_tokens)


def test_rank_orders_candidates_by_the_forecast():
    ranked = rank([str(SAMPLES / "korean-notes.txt"), str(SAMPLES / "english-prose"), str(SAMPLES)], "demo", GENTLE)
    forecasts = [r.to_dict()["forecast"]["total_nats"] for r in ranked]
    assert forecasts == sorted(forecasts) and len(set(forecasts)) == 3


def test_competition_over_many_scales_equals_one_scale_at_a_time():
    old, prior = two_languages(), np.full(40, 1 / 40)
    shift = np.linspace(-1, 1, 40)
    inside = np.arange(40) % 3 > 0
    together = competition(shift, inside, old, prior, [0.5, 2.0, 8.0])
    apart = [competition(k * shift, inside, old, prior)[0] for k in (0.5, 2.0, 8.0)]
    np.testing.assert_allclose(together, apart)


# ---- v4: the forecast along the plan ---------------------------------------------------------


def test_checkpoints_double_from_five_up_to_the_plans_last_step():
    assert checkpoints(40) == (5, 10, 20, 40)
    assert checkpoints(80) == (5, 10, 20, 40, 80)
    assert checkpoints(1000)[-3:] == (320, 640, 1000)
    assert checkpoints(5) == (5,) and checkpoints(3) == (3,)


def test_the_curve_rises_along_a_constant_plan_and_ends_at_the_headline():
    small = Calibration(body_gain=1000.0)  # a total within ln(40), the toy vocabulary's ceiling, so it has a curve
    corpus = PLAN.tokens_per_step * PLAN.steps
    result = predict(shares_of([0, 1, 2, 3, 25]), two_languages(), calibration=small, corpus=corpus)
    assert [p.step for p in result.curve] == list(checkpoints(PLAN.steps))
    heads, bodies = [p.head for p in result.curve], [p.body for p in result.curve]
    assert heads == sorted(heads) and bodies == sorted(bodies) and heads[0] < heads[-1]
    assert result.curve[-1].total == pytest.approx(result.total)
    assert result.to_dict()["curve"][-1]["total_nats"] == pytest.approx(result.total)


@settings(max_examples=40, deadline=None)
@given(st.floats(0.01, 50.0), st.floats(0.1, 5.0))
def test_a_rows_walk_slows_as_it_goes(x, target):
    down, twice = -saturate(np.array([-x]), None)[0], -saturate(np.array([-2 * x]), None)[0]
    assert 0 < down <= x and down < twice < 2 * down  # slower than linear, never backwards
    up = saturate(np.array([x]), np.array([target]))[0]
    assert 0 < up <= target and up <= x  # an up-pushed row approaches where the corpus's use is met


def test_the_adaptation_is_taken_off_the_total_and_the_text_keeps_its_sign():
    shares = shares_of([0, 1, 2, 3, 25])
    bare = predict(shares, two_languages())
    adapted = predict(shares, two_languages(), calibration=Calibration(adaptation=0.05))
    assert bare.adaptation == 0.0 and "adaptation" not in bare.text
    assert adapted.total == pytest.approx(bare.total - 0.05, abs=1e-3)  # saturated by the plan's end
    early = predict(shares, two_languages(), replace(PLAN, learning_rate=1e-5), Calibration(adaptation=0.05))
    assert early.total < 0 and early.headline.startswith("-") and early.text.startswith("-")


def test_crossing_names_the_first_checkpoint_over_the_budget():
    result = predict(shares_of([0, 1, 2, 3, 25]), two_languages())
    crossed = result.crossing(result.curve[1].total)
    assert crossed is not None and crossed.step == result.curve[2].step
    assert result.crossing(result.total) is None  # within the plan: not crossed


def test_a_higher_learning_rate_forgets_more_than_in_proportion_in_the_body():
    old, shares = two_languages(), shares_of([0, 1, 2, 3, 25])
    low = predict(shares, old, replace(PLAN, learning_rate=1e-4)).body
    high = predict(shares, old, replace(PLAN, learning_rate=3e-4)).body
    assert high > 3 * low > 0  # the loss a noisy optimizer adds is proportional to its rate, once relaxed


def test_mixing_in_the_old_texts_kind_forecasts_less_forgetting():
    reference = [str(SAMPLES / "english-prose")]
    summary = Summary.of(scan([str(SAMPLES / "korean-notes.txt")], "demo", reference=reference), PLAN)
    replay = scan(reference, "demo")
    mixed = [summary.mixed(replay.shares, share).forecast.total for share in (0.05, 0.25, 0.5)]
    assert summary.forecast.total > mixed[0] > mixed[1] > mixed[2]
    assert summary.mixed(replay.shares, 0.0).forecast.total == pytest.approx(summary.forecast.total)
    at_last = summary.mixed(replay.shares, 0.25, curve=False).forecast  # what the advice reads
    assert [p.step for p in at_last.curve] == [PLAN.steps] and at_last.total == mixed[1]  # the same number, exactly
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        summary.mixed(replay.shares, 1.0)


def test_replay_of_the_old_texts_kind_protects_the_body_at_once_and_then_saturates():
    reference = [str(SAMPLES / "english-prose")]
    summary = Summary.of(scan([str(SAMPLES / "python-code.jsonl")], "demo", reference=reference), PLAN)
    own_kind, other_kind = scan(reference, "demo"), scan([str(SAMPLES / "korean-notes.txt")], "demo")
    bodies = {}
    for name, replay in (("own", own_kind), ("other", other_kind)):
        for share in (0.05, 0.25):
            made = summary.mixed(replay.shares, share).forecast
            bodies[name, share] = made.body
            assert made.to_dict()["replay"] == {"share": share, "coverage": made.replay.coverage,
                                                "body_kept": made.replay.protection}  # fmt: skip
    body = summary.forecast.body
    assert summary.forecast.replay is None and "replay" not in summary.forecast.to_dict()
    # the reference is the old text itself: it covers it (to sampling noise), and 5% takes most of what 25% takes
    own = summary.mixed(own_kind.shares, 0.05).forecast.replay
    assert own.coverage > 0.9
    assert body - bodies["own", 0.05] > 2 * (bodies["own", 0.05] - bodies["own", 0.25]) > 0
    # Korean notes share little with English prose: the same shares protect much less
    assert summary.mixed(other_kind.shares, 0.05).forecast.replay.coverage < 0.3
    assert body - bodies["other", 0.25] < 0.5 * (body - bodies["own", 0.25])


@settings(max_examples=50, deadline=None)
@given(st.floats(0.0, 0.99), st.floats(0.0, 1.0))
def test_replay_keeps_between_one_minus_its_coverage_and_all_of_the_body(share, coverage):
    kept = Replay(share, coverage, np.zeros(3), np.zeros(3)).protection
    assert 1.0 - coverage - 1e-12 <= kept <= 1.0
    assert kept == pytest.approx(1.0 - coverage * (1.0 - math.exp(-share / REPLAY_ONSET)))
    assert Replay(0.0, coverage, np.zeros(3), np.zeros(3)).protection == 1.0


def test_an_old_text_of_two_equal_halves_is_wholly_its_own_kind():
    halves = OldText.of([np.array([1, 2, 3, 3]), np.array([1, 2, 3, 3])])
    assert self_alike(halves, 5) == pytest.approx(1.0)
    assert self_alike(OldText.of([np.array([1, 1, 2, 2])]), 5) == pytest.approx(0.0)  # one document, split: no overlap
    assert self_alike(None, 5) == 1.0


def test_leave_one_out_forecasts_each_source_from_the_others_fit():
    probes = probe_runs(Calibration(kappa=50.0, body_gain=3.0), (*PROBES, ([21, 22, 5], 8_000)))
    left = leave_one_out(probes)
    assert left["sources"] == 4 and left["runs"] == 5  # the two runs of [0, 1, 2] are left out together
    assert left["spearman"] > 0.8 and left["within_x2"] == 1.0  # noiseless probes: the others' fit holds
    assert leave_one_out(probes[:3]) is None  # two sources: nothing to leave out fairly


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 50), min_size=2, max_size=30).filter(any), st.integers(2, 6))
def test_token_entropy_is_the_distribution_s_whatever_the_scale(counts, k):
    counts = np.array(counts, dtype=float)
    p = counts[counts > 0] / counts.sum()
    assert token_entropy(counts) == pytest.approx(float(-(p * np.log(p)).sum()))
    assert token_entropy(k * counts) == pytest.approx(token_entropy(counts))
    assert -1e-12 <= token_entropy(counts) <= math.log(np.count_nonzero(counts)) + 1e-12


def test_a_profile_its_saved_copy_and_its_sum_with_itself_read_one_token_entropy(tmp_path):
    profile = scan([str(SAMPLES / "korean-notes.txt")], "demo")
    terms = Summary.of(profile).forecast.terms
    assert terms.entropy == pytest.approx(token_entropy(profile.shares)) and terms.entropy > 0
    assert Summary.of(Profile.load(profile.save(tmp_path / "korean"))).forecast.terms.entropy == terms.entropy
    assert Summary.of(profile + profile).forecast.terms.entropy == pytest.approx(terms.entropy)  # the same shares


def test_a_sum_of_profiles_forecasts_what_its_corpora_scanned_together_do():
    """v7 reads nothing of a corpus but its token counts: a sum of profiles is the corpora scanned together."""
    parts = [scan([str(SAMPLES / name)], "demo") for name in ("korean-notes.txt", "python-code.jsonl")]
    together = scan([str(SAMPLES / name) for name in ("korean-notes.txt", "python-code.jsonl")], "demo")
    summed, whole = Summary.of(parts[0] + parts[1]).forecast, Summary.of(together).forecast
    assert summed.total == pytest.approx(whole.total) and summed.terms.entropy == pytest.approx(whole.terms.entropy)
    assert [p.total for p in summed.curve] == pytest.approx([p.total for p in whole.curve])


def test_a_corpus_spread_over_more_tokens_drives_the_body_less():
    """Term 6's e^{-H1/2}: the same starved share and likeness, the corpus's text spread over four times the
    tokens, a body term half the size."""
    old = two_languages()
    narrow, wide = shares_of([0, 1]), shares_of([0, 1, 2, 3, 4, 5, 6, 7])
    drive = Drive.of(narrow, np.zeros(40), np.full(40, 1 / 40), PLAN, 5_000)
    usage = np.bincount(old.ids, minlength=40).astype(float)
    s_narrow = Body.of(narrow, np.full(40, 0.5), usage, drive)
    s_wide = Body.of(wide, np.full(40, 0.5), usage, drive)
    assert s_wide.entropy - s_narrow.entropy == pytest.approx(math.log(4))
    ratio = (s_wide.unit / (s_wide.starved * s_wide.alike)) / (s_narrow.unit / (s_narrow.starved * s_narrow.alike))
    assert ratio == pytest.approx(0.5)


@settings(max_examples=100, deadline=None)
@given(st.floats(0.0, 10.0), st.floats(0.0, 10.0))
def test_the_transfer_weight_falls_with_the_base_loss_from_below_the_drift_floor_to_zero(a, b):
    low, high = sorted((a, b))
    assert 0.0 <= transfer_weight(high) <= transfer_weight(low) <= 1.0 - DRIFT_FLOOR
    assert transfer_weight(None) == transfer_weight(TRANSFER_UNTIL) == 1.0 - DRIFT_FLOOR
    assert transfer_weight(DRIFT_FROM) == 0.0


def test_an_unknown_base_loss_forecasts_the_most_transfer_and_a_high_one_the_drift_term():
    old = two_languages()
    usage = np.bincount(old.ids, minlength=40).astype(float)
    corpus = shares_of([0, 1, 2, 3, 20, 21])
    unknown = predict(corpus, old, old_usage=usage)
    transfer = predict(corpus, old, old_usage=usage, calibration=Calibration(old_loss=TRANSFER_UNTIL - 0.5))
    drift = predict(corpus, old, old_usage=usage, calibration=Calibration(old_loss=DRIFT_FROM + 0.5))
    most = 1.0 - DRIFT_FLOOR
    assert unknown.terms.transfer == transfer.terms.transfer == most and drift.terms.transfer == 0.0
    assert unknown.body == transfer.body and unknown.head == drift.head  # the head does not read the old loss
    reach = most * transfer.terms.alike + DRIFT_FLOOR * LIKENESS_REFERENCE
    assert math.isclose(drift.body / transfer.body, LIKENESS_REFERENCE / reach, rel_tol=1e-9)
    assert math.isclose(transfer.terms.reach, reach) and drift.terms.reach == LIKENESS_REFERENCE


def test_the_drift_pathway_forecasts_an_unlike_corpus_that_starves_the_old_text_more_than_transfer_does():
    old = two_languages()
    usage = np.bincount(old.ids, minlength=40).astype(float)
    usage_far = usage.copy()
    usage_far[:4] = 0.0
    far = shares_of([0, 1, 2, 3, 20, 21])
    by_transfer = predict(far, old, old_usage=usage_far)
    by_drift = predict(far, old, old_usage=usage_far, calibration=Calibration(old_loss=DRIFT_FROM))
    assert by_transfer.terms.alike < LIKENESS_REFERENCE and by_drift.body > by_transfer.body


def test_old_loss_given_to_a_summary_replaces_the_calibrations_and_every_output_says_which(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    profile = scan([str(SAMPLES / "korean-notes.txt")], "demo")
    unknown, given_ = Summary.of(profile, GENTLE), Summary.of(profile, GENTLE, old_loss=DRIFT_FROM)
    assert unknown.forecast.calibration.old_loss is None
    basis = f"base loss on old text unknown (--old-loss measure): body {1 - DRIFT_FLOOR:.0%} transfer"
    assert basis in unknown.forecast.text
    data = given_.to_dict()["forecast"]
    assert data["constants"]["old_loss"] == DRIFT_FROM and data["terms"]["transfer_weight"] == 0.0
    assert "body 0% transfer" in given_.forecast.text
    kept = Calibration(old_loss=2.0, source="calibrated on 4 probe runs", fingerprint="k")
    assert Calibration.from_dict(json.loads(json.dumps(kept.to_dict()))).old_loss == 2.0
    assert Summary.of(profile, GENTLE, kept, old_loss=3.3).forecast.calibration.old_loss == 3.3
