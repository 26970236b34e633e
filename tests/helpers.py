"""What many tests share: the repository's paths, the command line run in-process, a scratch data repository,
a small real disk for storage faults.

`tests/` is on the import path (`pythonpath` in pyproject.toml), so a test module imports these as
`from helpers import ...`; fixtures live in conftest.py.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
from click.testing import CliRunner, Result

from vocabrisk.cli.commands import main

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_corpora"
KOREAN = str(SAMPLES / "korean-notes.txt")
BIN = Path(sys.executable).parent  # where the `vocabrisk` console script of this environment lives


def reading_stdin(*args: str) -> subprocess.Popen:
    """`vocabrisk ARGS` in a process of its own, reading standard input that has not ended yet (close its stdin
    to end it), returned once the command is reading: past its output checks."""
    process = subprocess.Popen(
        [sys.executable, "-m", "vocabrisk.cli", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    # A write this large returns only once the command is reading: the pipe holds 64 KiB.
    writer = threading.Thread(target=process.stdin.write, args=(b"some words of text\n" * 100_000,))
    writer.start()
    writer.join(timeout=120)
    return process


def run_cli(*args: str, input: str | None = None) -> Result:
    """`vocabrisk ARGS` in this process, exceptions let through (a traceback is a test failure)."""
    return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)


def scratch_repo(path: Path, data: str) -> Path:
    """A data repository at PATH: data/train holds DATA (a sample corpus), .vocabrisk/baseline a profile of
    english-prose, scanned by the console script as a CI job would."""
    (path / "data" / "train").mkdir(parents=True)
    source = SAMPLES / data
    if source.is_dir():
        shutil.copytree(source, path / "data" / "train", dirs_exist_ok=True)
    else:
        shutil.copy(source, path / "data" / "train")
    scan = [BIN / "vocabrisk", "scan", SAMPLES / "english-prose", "--model", "demo", "--out", ".vocabrisk/baseline"]
    subprocess.run([*map(str, scan), "-q"], cwd=path, check=True, timeout=120)
    return path


def digest(folder: Path) -> dict[str, str]:
    """Each file of FOLDER (not below it) by name: its SHA-256."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def assert_same_profile(folder: Path, expected: Path) -> None:
    """The profile saved in FOLDER is EXPECTED's: profile.json and tokens.parquet byte for byte, old_text.npz
    array for array (a zip's member timestamps differ between saves)."""
    for name in ("profile.json", "tokens.parquet"):
        assert (folder / name).read_bytes() == (expected / name).read_bytes(), name
    with np.load(folder / "old_text.npz") as ours, np.load(expected / "old_text.npz") as theirs:
        assert ours.files == theirs.files and all(np.array_equal(ours[k], theirs[k]) for k in ours.files)


def mount(*args: str) -> bool:
    return shutil.which("mount") is not None and subprocess.run(["mount", *args], capture_output=True).returncode == 0


class Disk:
    """A mounted tmpfs: `fill(leave)` takes all but LEAVE bytes of its free space, `empty()` gives it back."""

    def __init__(self, root: Path):
        self.root = root
        self._filler = root / "filler"

    def fill(self, leave: int) -> None:
        self.empty()
        self._filler.write_bytes(b"\0" * max(shutil.disk_usage(self.root).free - leave, 0))

    def empty(self) -> None:
        self._filler.unlink(missing_ok=True)

    def litter(self) -> list[str]:
        """Hidden files or folders anywhere on the disk: staging a failed write left behind."""
        return [str(p) for p in self.root.rglob(".*")]
