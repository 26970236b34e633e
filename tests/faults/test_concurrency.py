"""Two commands writing one output at once: the second is refused by name, the first finishes whole (issue 32)."""

from __future__ import annotations

import signal

import pytest
from helpers import KOREAN, reading_stdin, run_cli

from vocabrisk import Profile


@pytest.mark.parametrize(("flag", "what"), [("--out", "profile folder"), ("--checkpoint", "checkpoint folder")])
def test_a_second_scan_onto_an_output_being_written_is_refused(tmp_path, flag, what):
    target = tmp_path / "target"
    first = reading_stdin("scan", "-", flag, str(target), "-q")
    try:
        second = run_cli("scan", KOREAN, flag, str(target), "-q")
        assert second.exit_code == 2
        said = " ".join(second.output.split())
        assert f"{target}: another vocabrisk command is writing this {what} now" in said
        assert "wait until that command ends" in said
    finally:
        first.stdin.close()  # the first scan's input ends: it finishes and saves
        stderr = first.stderr.read()
        first.wait(timeout=120)
    assert first.returncode == 0, stderr.decode()
    if flag == "--out":
        assert Profile.load(target).documents == 1  # the first scan's profile, whole
        assert run_cli("scan", KOREAN, flag, str(target), "-q", "--force").exit_code == 0  # free once it ended


def test_a_killed_writer_leaves_no_lock_behind(tmp_path):
    target = tmp_path / "target"
    first = reading_stdin("scan", "-", "--out", str(target), "-q")
    first.send_signal(signal.SIGKILL)  # no handler runs: the OS lock ends with the process
    first.communicate(timeout=60)
    assert run_cli("scan", KOREAN, "--out", str(target), "-q").exit_code == 0
