"""Two commands writing one output at once: the second is refused by name, the first finishes whole (issue 32)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from helpers import KOREAN, reading_stdin, run_cli

from vocabrisk import Profile
from vocabrisk.storage.locks import hold, lock_path


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


def test_another_users_command_is_refused_while_one_writes_and_takes_the_lock_after(tmp_path):
    """Two users on one machine: the lock is one OS lock for both (the other user is `nobody`, locking with
    flock(1), the call filelock makes), and the other user can add locks of its own to the shared folder."""
    if os.geteuid() != 0 or not (shutil.which("setpriv") and shutil.which("flock")):
        pytest.skip("needs root, setpriv and flock to act as a second user")

    def other_user_locks(output: Path) -> int:
        nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        return subprocess.run([*nobody, "flock", "--nonblock", str(lock_path(output)), "true"]).returncode

    held = hold(tmp_path / "profile", "profile folder")
    try:
        assert other_user_locks(tmp_path / "profile") == 1  # refused while this command writes
    finally:
        held.release()
    assert other_user_locks(tmp_path / "profile") == 0
    assert other_user_locks(tmp_path / "another") == 0  # a lock file it makes itself, beside root's
