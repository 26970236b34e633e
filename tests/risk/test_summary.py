"""The summary on a profile's table: its columns beside the risk's, each derived once, and diff as a join."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from vocabrisk import Profile, TrainingPlan, diff, scan
from vocabrisk.advice import advise
from vocabrisk.compare import Ranked
from vocabrisk.gate import Thresholds, evaluate
from vocabrisk.report import CI_FORMATS
from vocabrisk.report.ci import format_result
from vocabrisk.report.content import build_report
from vocabrisk.report.markdown import render_markdown
from vocabrisk.report.terminal import render_rank, render_scan
from vocabrisk.risk.summary import Summary

COLUMNS = ["token_id", "token", "group", "special", "count", "prior", "reference_count"]
PLAN = TrainingPlan(tokens_per_step=8192, steps=300)


def _diff_by_masks(old: Profile, new: Profile, plan: TrainingPlan) -> dict:
    """The diff as it was computed before the table: boolean masks over parallel arrays."""
    before, after = Summary.of(old, plan), Summary.of(new, plan)
    newly = after.risk.starved & ~before.risk.starved
    fed = before.risk.starved & ~after.risk.starved

    def tokens(mask):
        order = np.argsort(-np.where(mask, after.risk.prior, -1.0))[: min(15, int(mask.sum()))]
        return {(int(i), new.tokens[i], str(new.groups[i])) for i in order}, after.risk.prior[order]

    return {"newly": int(newly.sum()), "fed": int(fed.sum()), "newly_tokens": tokens(newly), "fed_tokens": tokens(fed)}


def test_summary_to_polars_adds_the_risk_columns(korean):
    summary = Summary.of(korean, PLAN)
    frame = summary.to_polars()
    assert frame.columns == [*COLUMNS, "coverable", "share", "base_share", "exposure", "contribution", "starved"]
    np.testing.assert_array_equal(frame["contribution"].to_numpy(), summary.risk.contribution)
    assert frame.filter("starved").height == summary.coverage.starved_rows


def test_summary_derives_what_it_shows_once_for_every_command(korean, monkeypatch):
    built = {"coverage": 0, "groups": 0, "top_at_risk": 0}

    def counted(name):
        compute = getattr(Summary, name).func

        def wrapper(self):
            built[name] += 1
            return compute(self)

        prop = cached_property(wrapper)
        prop.__set_name__(Summary, name)
        return prop

    for name in built:
        monkeypatch.setattr(Summary, name, counted(name))
    summary = Summary.of(korean, PLAN)
    console = Console(file=open(Path("/dev/null"), "w"), width=160)  # noqa: SIM115
    render_scan(summary, advise(summary), console)
    summary.to_dict()
    result = evaluate(summary, Thresholds(max_risk=0.1, max_group_risk={"*": 0.5}, max_starved_share=0.9))
    for name in CI_FORMATS:
        format_result(result, name)
    ranked = [Ranked("korean", summary)]
    render_rank(ranked, console)
    ranked[0].to_dict()
    render_markdown(build_report(ranked))
    assert built == {"coverage": 1, "groups": 1, "top_at_risk": 1}


def test_diff_as_a_join_matches_the_masks_on_real_corpora(shared_data):
    corpora = shared_data / "corpora"
    old = scan([str(corpora / "en-shakespeare" / "input.txt")], "demo")
    new = scan([str(corpora / "de-grimm" / "de-grimm.txt")], "demo")
    joined, masked = diff(old, new, PLAN), _diff_by_masks(old, new, PLAN)
    assert (joined["newly_starved"], joined["no_longer_starved"]) == (masked["newly"], masked["fed"])
    assert joined["newly_starved"] > 0 and joined["no_longer_starved"] > 0
    prior = Summary.of(new, PLAN).risk.prior  # the base model's use over coverable rows, as the lists are ordered
    for key, listed in (("newly_tokens", "newly_starved_tokens"), ("fed_tokens", "no_longer_starved_tokens")):
        rows = joined[listed]
        expected_rows, expected_priors = masked[key]
        # the same usage at every position; among tokens of equal usage the join lists the lowest ids
        assert [prior[r["token_id"]] for r in rows] == pytest.approx(list(expected_priors), rel=0, abs=0)
        ids = [r["token_id"] for r in rows]
        assert all(ids[i] < ids[i + 1] for i in range(len(ids) - 1) if prior[ids[i]] == prior[ids[i + 1]])
        untied = {r for r in expected_rows if (np.asarray(expected_priors) == prior[r[0]]).sum() == 1}
        assert untied <= {(r["token_id"], r["token"], r["group"]) for r in rows}
    assert joined["starved_before"] == Summary.of(old, PLAN).coverage.starved_rows
