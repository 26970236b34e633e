"""The pre-commit hook, run by pre-commit itself: `pre-commit try-repo` on this repository from a scratch one.

try-repo clones this repository at HEAD (with its uncommitted changes to tracked files), installs it into a
fresh virtual environment as it would for any user, and runs the hook; the scratch repository is the
README's example, the model swapped for the bundled demo model (CI has no hub). Slow (a package install),
so one test: green on the data as it is, red once it is replaced by data that raises the risk.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml", reason="the hook manifest is read with PyYAML")

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_corpora"
BIN = Path(sys.executable).parent
PRE_COMMIT = BIN / "pre-commit"


def readme_blocks() -> dict[str, str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### pre-commit\n", 1)[1].split("\n## ", 1)[0]
    return {lang: section.split(f"```{lang}\n", 1)[1].split("```", 1)[0] for lang in ("yaml", "toml", "bash")}


def run(command: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(BIN), os.environ["PATH"]]),
        "GIT_AUTHOR_NAME": "test",
        "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "test",
        "GIT_COMMITTER_EMAIL": "test@example.com",
    }
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_readme_config_names_the_hook_this_repository_defines():
    (use,) = yaml.safe_load(readme_blocks()["yaml"])["repos"][0]["hooks"]
    hooks = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert use == {"id": "vocabrisk-gate"}  # no args: the corpus and limits come from vocabrisk.toml
    assert hooks["vocabrisk-gate"]["pass_filenames"] is False and not hooks["vocabrisk-gate"].get("args")


@pytest.mark.slow
def test_pre_commit_try_repo_passes_the_data_then_blocks_a_change_that_raises_its_risk(tmp_path):
    if not PRE_COMMIT.exists():
        pytest.skip("pre-commit is not installed in this environment")
    if run("git rev-parse --is-inside-work-tree", ROOT).returncode != 0:
        pytest.skip("pre-commit try-repo needs this checkout to be a git repository")
    blocks = readme_blocks()
    repo = tmp_path / "data-repo"
    (repo / "data" / "train").mkdir(parents=True)
    shutil.copytree(SAMPLES / "english-prose", repo / "data" / "train", dirs_exist_ok=True)
    (repo / "vocabrisk.toml").write_text(blocks["toml"].replace('model = "gpt2"', 'model = "demo"'))
    baseline, try_repo = [line.split("  #")[0] for line in blocks["bash"].strip().splitlines()]
    assert run(baseline.replace("--model gpt2", "--model demo") + " -q", repo).returncode == 0
    assert run("git init -q && git add -A && git commit -qm data", repo).returncode == 0
    try_repo = try_repo.replace("https://github.com/YOUR-ORG/vocabrisk", str(ROOT))

    passed = run(try_repo, repo)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "vocabrisk gate" in passed.stdout and "Passed" in passed.stdout

    assert run("git rm -rq data/train", repo).returncode == 0  # the English prose replaced by Korean notes
    (repo / "data" / "train").mkdir(parents=True)
    shutil.copy(SAMPLES / "korean-notes.txt", repo / "data" / "train")
    assert run("git add data", repo).returncode == 0  # what the commit would hold
    blocked = run(try_repo, repo)
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert "Failed" in blocked.stdout and "- exit code: 1" in blocked.stdout
    assert "FAILED" in blocked.stdout and "exceeds max-risk-increase" in blocked.stdout
