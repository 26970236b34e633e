"""Shared fixtures: real tokenizers and corpora from ../shared/data, skipped where absent (failed, in CI)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The folder of third-party reference data; tests that need it skip cleanly without it, except in CI, which
    always has it beside the clone: there a test that cannot find it fails, so none passes by skipping."""
    if not SHARED_DATA.is_dir():
        missing = f"../shared/data is not present beside this checkout ({SHARED_DATA})"
        pytest.fail(missing) if os.environ.get("CI") else pytest.skip(missing)
    return SHARED_DATA


@pytest.fixture(scope="session")
def korean():
    """The profile of the Korean sample against the demo model, scanned once for the tests that only read it."""
    from vocabrisk import scan

    return scan([str(REPO_ROOT / "sample_corpora" / "korean-notes.txt")], "demo")


@pytest.fixture
def no_config_above(tmp_path, monkeypatch):
    """Run in an empty folder, so no configuration file above the checkout applies."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="session", autouse=True)
def cache_folder(tmp_path_factory) -> Path:
    """The suite caches vocabulary facts in a folder of its own, not in the user's ~/.cache."""
    folder = tmp_path_factory.mktemp("xdg-cache")
    os.environ["XDG_CACHE_HOME"] = str(folder)
    return folder


@pytest.fixture(scope="session")
def readme_example():
    """The code of the first fenced block under a README heading: tests run what the README shows."""
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")

    def block(heading: str) -> str:
        after = text.split(f"\n{heading}\n", 1)[1]
        return after.split("```", 2)[1].split("\n", 1)[1]

    return block
