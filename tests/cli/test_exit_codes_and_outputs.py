"""Exit codes CI can read, and outputs checked before a run and written whole or not at all."""

from __future__ import annotations

import os
import signal
import stat

import pytest
from click.testing import CliRunner
from helpers import KOREAN, SAMPLES, reading_stdin
from helpers import run_cli as run

from vocabrisk import Profile, scan
from vocabrisk.cli.commands import main
from vocabrisk.storage.outputs import OutputError, atomic_file, replace_files, write_atomic

pytestmark = pytest.mark.usefixtures("no_config_above")


def test_report_with_no_output_flag_prints_markdown(tmp_path):
    scan([KOREAN], "demo").save(tmp_path / "p")
    result = run("report", str(tmp_path / "p"))
    assert result.exit_code == 0 and "# vocabrisk:" in result.stdout and "**skipped** nothing" in result.stdout


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


@pytest.mark.parametrize(("stop", "code", "said"), [(signal.SIGINT, 130, b"interrupted"),
                                                     (signal.SIGTERM, 143, b"terminated (SIGTERM)")])  # fmt: skip
def test_a_signal_during_a_gate_writes_no_profile_and_replaces_its_reports(tmp_path, stop, code, said):
    """A real Ctrl-C, or the SIGTERM a scheduler sends: the gate reads standard input that never ends, and is
    stopped. An earlier run's passing report is replaced by the interruption, as an erroring gate's is (issue 32):
    CI must not read it as this run's."""
    out = tmp_path / "profile"
    (tmp_path / "g.xml").write_text('<testsuite tests="1" failures="0"/>', encoding="utf-8")  # the last run passed
    process = reading_stdin("gate", "-", "--out", str(out), "--report", f"junit={tmp_path}/g.xml")
    process.send_signal(stop)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == code, stderr.decode()
    assert b"Traceback" not in stderr and said + b": each --report now says so" in stderr
    assert not out.exists()
    report = (tmp_path / "g.xml").read_text(encoding="utf-8")
    assert "interrupted before the gate could judge the corpus" in report and 'errors="1"' in report
