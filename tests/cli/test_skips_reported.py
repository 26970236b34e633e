"""What a run skipped is counted, shown by every command, and failed on by the gate: a pipeline can trust it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import KOREAN
from helpers import run_cli as run

from vocabrisk import scan

pytestmark = pytest.mark.usefixtures("no_config_above")


@pytest.fixture
def half_read(tmp_path) -> Path:
    """Finding 1: a folder whose big CSV has no `text` column, beside a small text file."""
    folder = tmp_path / "ko-chatbot"
    folder.mkdir()
    rows = "".join(f"안녕하세요 {i},네 반갑습니다 {i},0\n" for i in range(2000))
    (folder / "ChatbotData.csv").write_text("Q,A,label\n" + rows, encoding="utf-8")
    (folder / "SOURCE.txt").write_text("Korean chatbot data, from a public repository.\n", encoding="utf-8")
    return folder


def test_profile_counts_skipped_files_records_and_bytes(half_read):
    profile = scan([str(half_read)], "demo")
    csv_size = (half_read / "ChatbotData.csv").stat().st_size
    assert (profile.skips.files, profile.skips.records, profile.skips.bytes) == (1, 0, csv_size)
    assert profile.skipped_share > 0.99


def test_gate_fails_on_a_skipped_file_in_every_format(half_read, tmp_path):
    reports = {name: tmp_path / f"gate.{name}" for name in ("junit", "sarif", "markdown", "github", "json")}
    args = ["gate", str(half_read), "--max-risk", "0.99", "-q"]
    args += [f"--report={name}={path}" for name, path in reports.items()]
    result = run(*args)
    assert result.exit_code == 1
    assert "share of the input skipped" in result.stdout and "ChatbotData.csv" in result.stdout
    assert "no column 'text'" in result.stdout
    for name, path in reports.items():
        text = path.read_text(encoding="utf-8")
        assert "max-skipped-share" in text, name
    data = json.loads(reports["json"].read_text())
    assert data["summary"]["skips"]["files"] == 1 and not data["passed"]


def test_max_skipped_share_allows_some_skips_from_flag_and_config(half_read, tmp_path):
    assert run("gate", str(half_read), "--max-risk", "0.99", "--max-skipped-share", "1", "-q").exit_code == 0
    assert run("gate", str(half_read), "--max-risk", "0.99", "--max-skipped-share", "0.5", "-q").exit_code == 1
    (tmp_path / "pyproject.toml").write_text("[tool.vocabrisk.gate]\nmax-risk = 0.99\nmax-skipped-share = 1.0\n")
    assert run("gate", str(half_read), "-q").exit_code == 0


def test_a_clean_corpus_passes_the_skip_check(tmp_path):
    result = run("gate", KOREAN, "--max-risk", "0.99", "-q")
    assert result.exit_code == 0
    assert "share of the input skipped 0.0000 is within max-skipped-share" in result.stdout


def test_scan_rank_and_report_show_what_was_skipped(half_read, tmp_path):
    scanned = run("scan", str(half_read), "--out", str(tmp_path / "p"), "-q")
    assert scanned.exit_code == 0
    assert "skipped" in scanned.stdout and "1 file (" in scanned.stdout and "of the input" in scanned.stdout
    as_json = json.loads(run("scan", str(half_read), "--format", "json").stdout)
    assert as_json["skips"]["files"] == 1 and as_json["skips"]["share"] > 0.99
    ranked = run("rank", str(half_read), KOREAN, "-q")
    assert "skipped 1 file" in ranked.stdout
    ranked_json = json.loads(run("rank", str(half_read), KOREAN, "--format", "json").stdout)
    assert {c["candidate"]: c["skipped"]["files"] for c in ranked_json["candidates"]} == {str(half_read): 1, KOREAN: 0}
    for flag in ("--markdown", "--html"):
        out = tmp_path / f"report{flag}"
        assert run("report", str(tmp_path / "p"), flag, str(out)).exit_code == 0
        assert "1 file (" in out.read_text(encoding="utf-8")


def test_a_row_built_on_a_mostly_skipped_input_says_so(half_read):
    shown = " ".join(run("rank", str(half_read), KOREAN, "-q").stdout.split())  # rich wraps at its width
    assert "of the input was skipped (1 file (" in shown and "every number here describes only the" in shown
    ranked = json.loads(run("rank", str(half_read), KOREAN, "--format", "json").stdout)["candidates"]
    warned = {c["candidate"]: [w for w in c["warnings"] if "of the input was skipped" in w] for c in ranked}
    assert warned[KOREAN] == []
    (warning,) = warned[str(half_read)]
    assert warning.startswith("100% of the input was skipped (1 file (") and "scan again" in warning
    scanned = json.loads(run("scan", str(half_read), "--format", "json").stdout)
    assert warning in scanned["warnings"]


def test_clean_scan_says_nothing_was_skipped():
    result = run("scan", KOREAN, "-q")
    assert "skipped" in result.stdout and "nothing" in result.stdout


def test_skipped_records_count_their_bytes(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text('{"text": "fine"}\n{"body": "no text field here"}\nnot json\n', encoding="utf-8")
    profile = scan([str(path)], "demo")
    assert (profile.skips.files, profile.skips.records) == (0, 2)
    assert profile.skips.bytes == len('{"body": "no text field here"}\n') + len("not json\n")


def test_the_real_korean_chatbot_folder_no_longer_passes_on_its_source_note(shared_data):
    """Finding 1 as reported: the CSV has no `text` column, only SOURCE.txt was counted, and the gate passed."""
    folder = shared_data / "corpora" / "ko-chatbot"
    gpt2 = str(shared_data / "tokenizers" / "gpt2")
    result = run("gate", str(folder), "--model", gpt2, "--max-risk", "0.95", "--format", "github", "-q")
    assert result.exit_code == 1
    assert "::error title=vocabrisk max-skipped-share" in result.stdout and "ChatbotData.csv" in result.stdout
    fixed = run("gate", str(folder), "--model", gpt2, "--max-risk", "0.95", "--text-field", "Q", "-q")
    assert "✓ share of the input skipped 0.0000 is within max-skipped-share 0.0000 (nothing skipped)" in fixed.stdout


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz", ".zst"])
def test_a_truncated_compressed_file_fails_any_skip_limit_short_of_one(tmp_path, suffix):
    """Issue 21, item 3: the second half of a .gz lost was tallied as 0 bytes, so a 0.1% limit passed."""
    import bz2
    import gzip
    import lzma

    import zstandard

    compress = {".gz": gzip.compress, ".bz2": lambda data: bz2.compress(data, 1), ".xz": lzma.compress}.get(
        suffix, zstandard.ZstdCompressor().compress
    )
    records = "".join(json.dumps({"text": f"record {i}: {os.urandom(12).hex()}"}) + "\n" for i in range(6000))
    data = compress(records.encode())
    path = tmp_path / f"data.jsonl{suffix}"
    path.write_bytes(data[: len(data) // 2])
    profile = scan([str(path)], "demo")
    assert (profile.skips.files, profile.skips.unmeasured) == (1, 1)
    assert "cannot be measured" in profile.skips.text
    result = run("gate", str(path), "--max-risk", "0.99", "--max-skipped-share", "0.001", "-q")
    assert result.exit_code == 1
    assert "only an estimate" in result.stdout
    assert run("gate", str(path), "--max-risk", "0.99", "--max-skipped-share", "1", "-q").exit_code == 0
