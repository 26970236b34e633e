"""Real storage faults while saving: a full disk and a read-only mount (issue 32).

Each case mounts a real file system (a small tmpfs, a read-only bind mount), so the fault is the
kernel's, not a mock of our own code. Mounting needs root with CAP_SYS_ADMIN; elsewhere they skip.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import KOREAN, SAMPLES, run_cli


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0 if shutil.which("mount") else False


@pytest.fixture
def small_disk(tmp_path):
    """A 400 kB tmpfs: room for a demo profile's probe files, not for a profile of the sample corpora."""
    where = tmp_path / "disk"
    where.mkdir()
    if not _mount("-t", "tmpfs", "-o", "size=400k", "tmpfs", str(where)):
        pytest.skip("cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)")
    yield where
    subprocess.run(["umount", str(where)], check=False)


def digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def fill(disk: Path, leave: int) -> None:
    """Fill DISK until about LEAVE bytes are free."""
    free = shutil.disk_usage(disk).free
    (disk / "filler").write_bytes(b"\0" * max(free - leave, 0))


def test_a_full_disk_names_the_folder_and_the_cause_and_keeps_the_old_profile(small_disk):
    out = small_disk / "profile"
    assert run_cli("scan", KOREAN, "--out", str(out), "-q").exit_code == 0
    before = digest(out)
    fill(small_disk, leave=8_000)  # the probe file fits; the profile's files do not
    result = run_cli("scan", str(SAMPLES), "--out", str(out), "--force", "-q")
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert f"{out}: cannot write the profile (No space left on device)" in said
    assert "free space on that disk" in said and "Traceback" not in said and "OSError" not in said
    assert digest(out) == before  # the earlier profile, byte for byte
    assert not [p for p in small_disk.iterdir() if p.name.startswith(".")]  # no staging left behind


@pytest.mark.parametrize("command", ["scan", "gate"])
def test_force_onto_a_read_only_profile_is_refused_before_the_scan(tmp_path, command):
    """The profile folder is read-only, the folder above it is not: the up-front check must look inside."""
    saved, out = tmp_path / "saved", tmp_path / "profile"
    assert run_cli("scan", KOREAN, "--out", str(saved), "-q").exit_code == 0
    out.mkdir()
    if not (_mount("--bind", str(saved), str(out)) and _mount("-o", "remount,ro,bind", str(out))):
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
