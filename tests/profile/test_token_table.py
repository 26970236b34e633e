"""The per-token table: a profile's numpy columns, read lazily, and their Parquet and DataFrame forms."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pandas as pd
import polars as pl
import pytest
from helpers import SAMPLES

from vocabrisk import Profile, TrainingPlan, scan
from vocabrisk.model.head import HeadInfo

COLUMNS = ["token_id", "token", "group", "special", "count", "prior", "reference_count"]
PLAN = TrainingPlan(tokens_per_step=8192, steps=300)


def _null_at(token_id: int, column: str) -> pl.Expr:
    return pl.when(pl.col("token_id") == token_id).then(None).otherwise(pl.col(column))


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


def test_counts_that_do_not_add_up_to_the_profiles_tokens_are_refused_when_loading(korean, tmp_path):
    """Zeroed counts with profile.json's file sizes updated: the gate printed "158,749 tokens" beside
    "4,095 of 4,095 rows starved" (issue 32)."""
    folder = korean.save(tmp_path / "korean")
    pl.read_parquet(folder / "tokens.parquet").with_columns(count=pl.lit(0, pl.Int64)).write_parquet(
        folder / "tokens.parquet"
    )
    meta = json.loads((folder / "profile.json").read_text())
    meta["files"]["tokens.parquet"] = (folder / "tokens.parquet").stat().st_size
    (folder / "profile.json").write_text(json.dumps(meta))
    with pytest.raises(Exception, match=rf"counts add up to 0 tokens where profile\.json says {korean.total_tokens:,}"):
        Profile.load(folder)


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


def test_saving_a_profile_imports_no_dataframe_library(tmp_path):
    """tokens.parquet is built from the columns' buffers: pyarrow's `pa.array` on Python or numpy values imports
    pandas the first time (0.18 s of every scan with --out)."""
    save = (
        "from vocabrisk import scan; import sys; "
        f"scan(['sample_corpora/korean-notes.txt'], 'demo').save({str(tmp_path / 'saved')!r}); "
        "print(*sys.modules, file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", save], capture_output=True, text=True, check=True, cwd=SAMPLES.parent)
    loaded = set(done.stderr.splitlines()[-1].split())
    assert "pyarrow" in loaded and not {"polars", "pandas"} & loaded
    table = pl.read_parquet(tmp_path / "saved" / "tokens.parquet")
    assert table.equals(Profile.load(tmp_path / "saved").to_polars())
    assert table["token"].to_list() == Profile.load(tmp_path / "saved").table.token.tolist()
