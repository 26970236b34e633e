"""The per-token table: a profile's numpy columns, read lazily, their DataFrame forms, and the summary on them."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pytest
from rich.console import Console

from vocabrisk import Profile, TrainingPlan, diff, scan
from vocabrisk.advice import advise
from vocabrisk.compare import Ranked
from vocabrisk.gate import Thresholds, evaluate
from vocabrisk.model.head import HeadInfo
from vocabrisk.report import CI_FORMATS
from vocabrisk.report.ci import format_result
from vocabrisk.report.content import build_report
from vocabrisk.report.markdown import render_markdown
from vocabrisk.report.terminal import render_rank, render_scan
from vocabrisk.risk.summary import Summary

SAMPLES = Path(__file__).resolve().parents[1] / "sample_corpora"
COLUMNS = ["token_id", "token", "group", "special", "count", "prior", "reference_count"]
PLAN = TrainingPlan(tokens_per_step=8192, steps=300)


@pytest.fixture(scope="module")
def korean() -> Profile:
    return scan([str(SAMPLES / "korean-notes.txt")], "demo")


def test_to_polars_is_the_tokens_parquet_table(korean, tmp_path):
    table = korean.to_polars()
    assert table.columns == COLUMNS and table.height == korean.vocab_size
    assert table.schema["reference_count"] == pl.Int64 and table["reference_count"].null_count() == 0
    np.testing.assert_array_equal(table["count"].to_numpy(), korean.counts.counts)
    assert table["count"].sum() == korean.total_tokens
    saved = pl.read_parquet(korean.save(tmp_path / "korean") / "tokens.parquet")
    assert saved.equals(table)


def test_to_pandas_is_indexed_by_token_id(korean):
    frame = korean.to_pandas()
    assert isinstance(frame, pd.DataFrame) and frame.index.name == "token_id"
    assert list(frame.columns) == COLUMNS[1:]
    assert frame.loc[0, "token"] == korean.tokens[0]
    assert frame["count"].sum() == korean.total_tokens
    assert frame.groupby("group")["count"].sum().idxmax() == "Hangul"


def test_a_loaded_profile_reads_its_table_on_first_use(korean, tmp_path):
    loaded = Profile.load(korean.save(tmp_path / "korean"))
    assert "table" not in loaded.__dict__, "loading read the per-token data"
    assert loaded.documents == korean.documents and loaded.total_tokens == korean.total_tokens
    assert isinstance(loaded.head, HeadInfo) and loaded.head.to_dict() == korean.model_dict()["head"]  # file by name
    assert loaded.table.equals(korean.table)
    assert "table" in loaded.__dict__
    assert loaded.to_polars().equals(korean.to_polars())


def test_a_profile_without_reference_counts_saves_them_as_nulls_and_reads_none(tmp_path):
    profile = scan([str(SAMPLES / "korean-notes.txt")], "demo", reference=None)
    assert profile.reference_counts is None
    table = profile.to_polars()
    assert table["reference_count"].null_count() == table.height
    loaded = Profile.load(profile.save(tmp_path / "korean"))
    assert loaded.reference_counts is None and loaded.table.equals(profile.table)


def _null_at(token_id: int, column: str) -> pl.Expr:
    return pl.when(pl.col("token_id") == token_id).then(None).otherwise(pl.col(column))


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda t: t.with_columns(count=_null_at(7, "count")), "count has missing"),
        (lambda t: t.with_columns(token_id=pl.col("token_id") + 1), "token_id is not"),
        (lambda t: t.with_columns(reference_count=_null_at(7, "reference_count")), "reference_count has missing"),
    ],
)
def test_a_damaged_table_is_refused_on_first_use(korean, tmp_path, change, reason):
    folder = korean.save(tmp_path / "korean")
    change(pl.read_parquet(folder / "tokens.parquet")).write_parquet(folder / "tokens.parquet")
    meta = json.loads((folder / "profile.json").read_text())
    meta["files"]["tokens.parquet"] = (folder / "tokens.parquet").stat().st_size  # listed as it now is
    (folder / "profile.json").write_text(json.dumps(meta))
    with pytest.raises(Exception, match=f"profile is corrupt.*{reason}"):
        Profile.load(folder).counts  # noqa: B018 (the first use reads the table)


def test_summary_to_polars_adds_the_risk_columns(korean):
    summary = Summary.of(korean, PLAN)
    frame = summary.to_polars()
    assert frame.columns == [*COLUMNS, "coverable", "share", "base_share", "exposure", "contribution", "starved"]
    np.testing.assert_array_equal(frame["contribution"].to_numpy(), summary.risk.contribution)
    assert frame.filter("starved").height == summary.coverage.starved_rows


def test_a_corrupt_table_is_refused_when_loading(korean, tmp_path):
    folder = korean.save(tmp_path / "korean")
    (folder / "tokens.parquet").write_bytes(b"not parquet")
    with pytest.raises(Exception, match=r"tokens\.parquet is 11 bytes where profile\.json says") as raised:
        Profile.load(folder)
    assert raised.value.hint.endswith("scan the corpus again")


def test_profiles_still_add_exactly(korean):
    prose = scan([str(SAMPLES / "english-prose")], "demo")
    both = korean + prose
    np.testing.assert_array_equal(both.counts.counts, korean.counts.counts + prose.counts.counts)
    assert both.total_tokens == korean.total_tokens + prose.total_tokens == int(both.table.count.sum())
    assert both.documents == korean.documents + prose.documents
    assert replace(both.table, count=korean.table.count).equals(korean.table)


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


def _diff_by_masks(old: Profile, new: Profile, plan: TrainingPlan) -> dict:
    """The diff as it was computed before the table: boolean masks over parallel arrays."""
    before, after = Summary.of(old, plan), Summary.of(new, plan)
    newly = after.risk.starved & ~before.risk.starved
    fed = before.risk.starved & ~after.risk.starved

    def tokens(mask):
        order = np.argsort(-np.where(mask, after.risk.prior, -1.0))[: min(15, int(mask.sum()))]
        return {(int(i), new.tokens[i], str(new.groups[i])) for i in order}, after.risk.prior[order]

    return {"newly": int(newly.sum()), "fed": int(fed.sum()), "newly_tokens": tokens(newly), "fed_tokens": tokens(fed)}


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


def test_a_scan_and_its_reports_import_no_dataframe_library():
    """The columns are numpy so that a command pays no DataFrame import (issue 14); only to_polars,
    to_pandas and the Parquet file bring polars in."""
    scan_and_report = (
        "from vocabrisk.cli.commands import main; "
        "main(['scan', 'sample_corpora/korean-notes.txt', '--model', 'demo', '--format', 'json', '-q'], "
        "standalone_mode=False)"
    )
    code = f"import io, sys; sys.stdout = io.StringIO(); {scan_and_report}; print(*sys.modules, file=sys.stderr)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=SAMPLES.parent)
    loaded = set(done.stderr.splitlines()[-1].split())
    assert not {"polars", "pandas", "pyarrow"} & loaded


def test_reports_count_one_file_and_one_document_in_the_singular(korean):
    from vocabrisk.report.html import render_html

    assert (korean.documents, len(korean.sources)) == (1, 1)
    report = build_report([Ranked("korean", Summary.of(korean, PLAN))])
    assert "**corpus** 1 document, 110.9 kB, 17,716 tokens, 1 file\n" in render_markdown(report)
    pytest.importorskip("matplotlib")
    assert "<dd>1 document · 110.9 kB · 17,716 tokens · 1 file</dd>" in render_html(report)
