"""Shared fixtures: real tokenizers and corpora from ../shared/data, skipped where absent."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The folder of third-party reference data; tests that need it skip cleanly without it."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present in this checkout")
    return SHARED_DATA
