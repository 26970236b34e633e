"""The README's examples run as they are written (as tokenizers' test_quicktour.py and sqlite-utils'
test_docs.py run theirs), and its layout section is the one the tree makes."""

from __future__ import annotations

import contextlib
import io
import runpy
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_python_api_example_runs_and_prints_what_it_says(readme_example, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # it saves profiles/sample where it runs, and reads sample_corpora/ from there
    (tmp_path / "sample_corpora").symlink_to(REPO / "sample_corpora")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(readme_example("## Python API"), "README.md (Python API)", "exec"), {})
    score, band, group, *_ = printed.getvalue().splitlines()[0].split(" ", 3)
    assert 0.0 <= float(score) <= 1.0 and band in ("low", "medium", "high") and group
    assert (tmp_path / "profiles" / "sample" / "profile.json").is_file()
    value, derivation = printed.getvalue().splitlines()[1].split(" ", 1)
    assert float(value) > 0 and derivation.startswith("largest eps keeping")  # the head-only eps is a number


def test_the_layout_section_is_the_one_the_tree_makes():
    sys.path.insert(0, str(REPO / "scripts"))
    layout = runpy.run_path(str(REPO / "scripts" / "layout.py"))
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert layout["readme_with_block"](readme) == readme, (
        "the README's layout is stale: python scripts/layout.py --write"
    )
