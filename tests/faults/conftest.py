"""A small real disk for the storage faults: a tmpfs mounted for one test (needs root with CAP_SYS_ADMIN)."""

from __future__ import annotations

import subprocess

import pytest
from helpers import Disk, mount


@pytest.fixture
def small_disk(tmp_path) -> Disk:
    """A 400 kB tmpfs: room for a demo profile of one sample corpus, not for one of all of them."""
    where = tmp_path / "disk"
    where.mkdir()
    if not mount("-t", "tmpfs", "-o", "size=400k", "tmpfs", str(where)):
        pytest.skip("cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)")
    yield Disk(where)
    subprocess.run(["umount", str(where)], check=False)
