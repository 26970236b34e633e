"""Doctests: `python -m pytest` also runs the examples in vocabrisk's docstrings (`--doctest-modules`).

Modules of the optional `verify` extra import torch at the top, and the datatrove steps datatrove;
where these are not installed, their docstrings are not collected (CI's torch environment runs them).
"""

import importlib.util
from pathlib import Path

import pytest
from _pytest.doctest import DoctestItem

collect_ignore_glob = ["tests/typing/*.py"]  # for mypy to read (tests/test_typing.py), never to run
if importlib.util.find_spec("torch") is None:
    collect_ignore_glob += ["vocabrisk/verify/*.py", "vocabrisk/integrations/training.py"]
if importlib.util.find_spec("datatrove") is None:
    collect_ignore_glob += ["vocabrisk/integrations/datatrove.py"]


@pytest.fixture(autouse=True)
def _doctests_run_at_the_repo_root(request, monkeypatch):
    """The examples name `sample_corpora/` as a user in a clone would: from the repository's root."""
    if isinstance(request.node, DoctestItem):
        monkeypatch.chdir(Path(__file__).parent)
