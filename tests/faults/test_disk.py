"""Real storage faults while saving: a full disk and a read-only mount (issue 32).

Each case mounts a real file system (a small tmpfs, a read-only bind mount), so the fault is the
kernel's, not a mock of our own code. Mounting needs root with CAP_SYS_ADMIN; elsewhere they skip.
"""

from __future__ import annotations

import subprocess

import pytest
from helpers import KOREAN, SAMPLES, digest, mount, run_cli


def test_a_full_disk_names_the_folder_and_the_cause_and_keeps_the_old_profile(small_disk):
    out = small_disk.root / "profile"
    assert run_cli("scan", KOREAN, "--out", str(out), "-q").exit_code == 0
    before = digest(out)
    small_disk.fill(leave=8_000)  # the probe file fits; the profile's files do not
    result = run_cli("scan", str(SAMPLES), "--out", str(out), "--force", "-q")
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert f"{out}: cannot write the profile (No space left on device)" in said
    assert "free space on that disk" in said and "Traceback" not in said and "OSError" not in said
    assert digest(out) == before  # the earlier profile, byte for byte
    assert not small_disk.litter()  # no staging left behind


@pytest.mark.parametrize("command", ["scan", "gate"])
def test_force_onto_a_read_only_profile_is_refused_before_the_scan(tmp_path, command):
    """The profile folder is read-only, the folder above it is not: the up-front check must look inside."""
    saved, out = tmp_path / "saved", tmp_path / "profile"
    assert run_cli("scan", KOREAN, "--out", str(saved), "-q").exit_code == 0
    out.mkdir()
    if not (mount("--bind", str(saved), str(out)) and mount("-o", "remount,ro,bind", str(out))):
        subprocess.run(["umount", str(out)], check=False)
        pytest.skip("cannot make a read-only bind mount here (needs root with CAP_SYS_ADMIN)")
    try:
        before = digest(out)
        result = run_cli(command, KOREAN, "--out", str(out), "--force", "-q")
        assert result.exit_code == 2
        said = " ".join(result.output.split())
        assert f"{out}: cannot write the profile folder here (Read-only file system: {out})" in said
        assert "PermissionError" not in said and "report it if the input is valid" not in said
        assert digest(out) == before
    finally:
        subprocess.run(["umount", str(out)], check=False)
