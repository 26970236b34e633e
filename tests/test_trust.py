"""A gate a pipeline can trust: skips shown and failed on, exit codes CI can read, outputs checked first."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from vocabrisk import Profile, scan
from vocabrisk.cli.commands import main
from vocabrisk.storage.outputs import OutputError, atomic_file, replace_files, write_atomic

SAMPLES = Path(__file__).resolve().parents[1] / "sample_corpora"
KOREAN = str(SAMPLES / "korean-notes.txt")


pytestmark = pytest.mark.usefixtures("no_config_above")


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)


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


def test_clean_scan_says_nothing_was_skipped():
    result = run("scan", KOREAN, "-q")
    assert "skipped" in result.stdout and "nothing" in result.stdout


def test_skipped_records_count_their_bytes(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text('{"text": "fine"}\n{"body": "no text field here"}\nnot json\n', encoding="utf-8")
    profile = scan([str(path)], "demo")
    assert (profile.skips.files, profile.skips.records) == (0, 2)
    assert profile.skips.bytes == len('{"body": "no text field here"}\n') + len("not json\n")


def test_report_with_no_output_flag_prints_markdown(tmp_path):
    scan([KOREAN], "demo").save(tmp_path / "p")
    result = run("report", str(tmp_path / "p"))
    assert result.exit_code == 0 and "# vocabrisk:" in result.stdout and "**skipped** nothing" in result.stdout


# ---- exit codes and outputs ----------------------------------------------------------


def test_unwritable_out_is_exit_2_before_the_scan(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    scanned = []
    monkeypatch.setattr("vocabrisk.profile.scan.scan", lambda *a, **k: scanned.append(1))
    for command in (["scan", KOREAN], ["gate", KOREAN]):
        result = CliRunner().invoke(main, [*command, "--out", str(blocker / "profile"), "-q"])
        assert result.exit_code == 2, result.output
        assert "cannot write the profile folder" in result.output and "Traceback" not in result.output
    result = CliRunner().invoke(main, ["gate", KOREAN, "--report", f"junit={blocker}/gate.xml", "-q"])
    assert result.exit_code == 2 and "cannot write the report" in result.output
    assert not scanned


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only folders")
def test_read_only_out_folder_is_exit_2(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    result = CliRunner().invoke(main, ["gate", KOREAN, "--out", str(folder / "p"), "-q"])
    assert result.exit_code == 2 and "cannot write" in result.output


def test_existing_profile_is_not_overwritten_without_force(tmp_path):
    out = tmp_path / "baseline"
    assert run("scan", KOREAN, "--out", str(out), "-q").exit_code == 0
    before = (out / "profile.json").read_text()
    refused = CliRunner().invoke(main, ["scan", str(SAMPLES), "--out", str(out), "-q"])
    assert refused.exit_code == 2 and "--force" in refused.output
    assert (out / "profile.json").read_text() == before
    assert run("scan", str(SAMPLES), "--out", str(out), "--force", "-q").exit_code == 0
    assert Profile.load(out).documents > 1


def test_saved_profiles_and_reports_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        assert run("gate", KOREAN, "--max-risk", "1", "--out", str(tmp_path / "p"), "--report",
                   f"junit={tmp_path}/r/gate.xml", "-q").exit_code == 0  # fmt: skip
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "p").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "p" / "profile.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "r" / "gate.xml").stat().st_mode) == 0o644


def test_a_failed_write_leaves_the_old_file_and_no_temporary_one(tmp_path):
    target = tmp_path / "result.json"
    write_atomic(target, "old\n")
    with pytest.raises(RuntimeError, match="killed"), atomic_file(target, text=True) as file:
        file.write("half of the new")
        raise RuntimeError("killed mid-write")
    assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["result.json"]
    with pytest.raises(OutputError, match="cannot write the report"):
        write_atomic(tmp_path / "result.json" / "under-a-file.md", "x", "report")


def test_a_failed_folder_write_leaves_the_old_folder_and_no_staging(tmp_path):
    target = tmp_path / "profile"
    own = ("index", "a.txt", "b.txt")
    with replace_files(target, own, "index") as staging:
        (staging / "a.txt").write_text("old")
        (staging / "index").write_text("old")
    (target / "NOTES.md").write_text("mine")
    with pytest.raises(RuntimeError, match="killed"), replace_files(target, own, "index") as staging:
        (staging / "a.txt").write_text("new")
        raise RuntimeError("killed mid-write")
    assert (target / "a.txt").read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["profile"]
    with replace_files(target, own, "index") as staging:
        (staging / "b.txt").write_text("new")
        (staging / "index").write_text("new")
    assert sorted(p.name for p in target.iterdir()) == ["NOTES.md", "b.txt", "index"]  # a.txt was its own
    assert [p.name for p in tmp_path.iterdir()] == ["profile"]


def test_an_unexpected_error_is_exit_2_without_traceback_unless_debug(monkeypatch):
    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device", "/tmp/x")

    monkeypatch.setattr("vocabrisk.profile.scan.scan", broken)
    result = CliRunner().invoke(main, ["gate", KOREAN, "-q"])
    assert result.exit_code == 2 and "No space left on device" in result.output
    assert "Traceback" not in result.output and "--debug" in result.output
    debug = CliRunner().invoke(main, ["--debug", "gate", KOREAN, "-q"])
    assert isinstance(debug.exception, OSError)
    monkeypatch.setenv("VOCABRISK_DEBUG", "1")  # what --debug's help offers instead of the flag
    assert isinstance(CliRunner().invoke(main, ["gate", KOREAN, "-q"]).exception, OSError)


def test_keyboard_interrupt_is_exit_130(monkeypatch, tmp_path):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("vocabrisk.profile.scan.scan", interrupted)
    result = CliRunner().invoke(main, ["gate", KOREAN, "--out", str(tmp_path / "p"), "-q"])
    assert result.exit_code == 130 and "interrupted" in result.output
    assert not (tmp_path / "p").exists()


def test_sigint_during_a_gate_exits_130_and_writes_nothing(tmp_path):
    """A real Ctrl-C: the gate reads standard input that never ends, and is interrupted."""
    out = tmp_path / "profile"
    process = subprocess.Popen(
        [sys.executable, "-m", "vocabrisk.cli", "gate", "-", "--out", str(out), "--report", f"junit={tmp_path}/g.xml"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    # A write this large returns only once the gate is reading: the pipe holds 64 KiB.
    writer = threading.Thread(target=process.stdin.write, args=(b"some words of text\n" * 100_000,))
    writer.start()
    writer.join(timeout=120)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr.decode()
    assert b"Traceback" not in stderr and b"interrupted" in stderr
    assert not out.exists() and not (tmp_path / "g.xml").exists()


def test_missing_reference_or_mix_names_the_option(tmp_path):
    for option in ("--reference", "--mix"):
        result = CliRunner().invoke(main, ["scan", KOREAN, option, str(tmp_path / "nope.txt"), "-q"])
        output = " ".join(result.output.split())  # unwrapped
        assert result.exit_code == 2 and f"{option} {tmp_path / 'nope.txt'}: not found" in output
        assert "standard input" not in result.output


def test_group_limits_match_group_names_whatever_their_case():
    result = run("gate", KOREAN, "--max-group-risk", "hangul=1", "--max-group-risk", "LATIN=1", "-q")
    assert result.exit_code == 0, result.output
    assert "Hangul risk" in result.stdout or "token groups within max-group-risk" in result.stdout


def test_counts_in_messages_agree_in_number():
    result = run("scan", KOREAN, "-q")
    assert "1 document " in result.stdout and "1 file " in result.stdout
    assert "1 documents" not in result.stdout and "1 files" not in result.stdout


def test_gate_counts_in_worker_processes_like_scan(tmp_path):
    args = ["gate", str(SAMPLES), "--max-risk", "1", "--format", "json", "-q"]
    one, two = (json.loads(run(*args, *extra).stdout) for extra in ([], ["--workers", "2"]))
    assert one["summary"]["risk"] == two["summary"]["risk"] and one["summary"]["tokens"] == two["summary"]["tokens"]


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


def test_gate_refuses_a_saved_profile_given_beside_a_corpus(tmp_path):
    """Issue 21, item 10: `gate PROFILE CORPUS` counted the profile's own files as corpus."""
    scan([KOREAN], "demo").save(tmp_path / "profile")
    result = CliRunner().invoke(main, ["gate", str(tmp_path / "profile"), KOREAN, "--max-risk", "0.99", "-q"])
    assert result.exit_code == 2
    output = " ".join(result.output.split())  # the console wraps lines
    assert f"{tmp_path / 'profile'} is a saved vocabrisk profile, not a corpus to count" in output
    assert "--baseline" in output and "Traceback" not in output
