"""What many tests share: the repository's paths, the command line run in-process, a scratch data repository.

`tests/` is on the import path (`pythonpath` in pyproject.toml), so a test module imports these as
`from helpers import ...`; fixtures live in conftest.py.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner, Result

from vocabrisk.cli.commands import main

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_corpora"
KOREAN = str(SAMPLES / "korean-notes.txt")
BIN = Path(sys.executable).parent  # where the `vocabrisk` console script of this environment lives


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
