"""The documented CI examples work: each test runs what the example runs, against the sample corpora.

The GitHub Actions workflow's `run:` steps and the pre-commit hook's entry and args are read with a
real YAML parser and executed in a scratch repository holding `examples/vocabrisk.toml`, a committed
baseline of the data and the data itself; the model is swapped for the bundled demo model, the only
change, because CI has no network for a hub model.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import helpers
import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 reads TOML through the backport
    import tomli as tomllib


yaml = pytest.importorskip("yaml", reason="the examples are parsed with PyYAML")

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_corpora"
EXAMPLES = ROOT / "examples"
BIN = str(Path(sys.executable).parent)  # where the `vocabrisk` console script of this environment lives


def scratch_repo(path: Path, data: str) -> Path:
    """A data repository (helpers.scratch_repo) configured by examples/vocabrisk.toml."""
    shutil.copy(EXAMPLES / "vocabrisk.toml", path / "vocabrisk.toml")
    return helpers.scratch_repo(path, data)


def run(command: list[str] | str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    shell = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", command] if isinstance(command, str) else command
    environ = {**os.environ, "PATH": BIN + os.pathsep + os.environ["PATH"], **(env or {})}
    return subprocess.run(shell, cwd=cwd, env=environ, capture_output=True, text=True, timeout=120)


# ---- GitHub Actions ------------------------------------------------------------------------
def workflow() -> dict:
    return yaml.safe_load((EXAMPLES / "github-actions.yml").read_text())


def run_workflow(repo: Path, summary: Path) -> dict[str, subprocess.CompletedProcess]:
    """Each `run:` step as the runner runs it (bash -eo pipefail); after a failure, only `if:` steps run."""
    pytest.importorskip("matplotlib", reason="the workflow installs vocabrisk[report] for its HTML report")
    spec = workflow()
    env = {**spec["env"], "MODEL": "demo", "GITHUB_STEP_SUMMARY": str(summary)}
    results, failed = {}, False
    for step in spec["jobs"]["vocabrisk"]["steps"]:
        if "run" not in step or "pip install" in step["run"] or (failed and "if" not in step):
            continue
        results[step["name"]] = result = run(step["run"], repo, env)
        failed = failed or result.returncode != 0
    return results


def test_workflow_passes_data_within_its_limits_and_publishes_every_report(tmp_path):
    repo = scratch_repo(tmp_path, "english-prose")
    results = run_workflow(repo, tmp_path / "summary.md")
    gate = results["Gate the training data"]
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "::notice title=vocabrisk gate::" in gate.stdout
    assert "✅ passed" in (tmp_path / "summary.md").read_text()
    assert ElementTree.parse(repo / "vocabrisk-out" / "gate.xml").getroot().get("failures") == "0"
    assert results["Report with plots, this data ranked against the baseline"].returncode == 0
    assert (repo / "vocabrisk-out" / "report.html").read_text().count("<svg") == 7  # ranking + 3 per profile


def test_workflow_fails_a_data_change_that_raises_the_risk_and_still_reports(tmp_path):
    repo = scratch_repo(tmp_path, "korean-notes.txt")
    results = run_workflow(repo, tmp_path / "summary.md")
    gate = results["Gate the training data"]
    assert gate.returncode == 1, gate.stdout + gate.stderr
    errors = [line for line in gate.stdout.splitlines() if line.startswith("::error ")]
    assert any("title=vocabrisk max-risk::" in line for line in errors)
    assert any("title=vocabrisk max-risk-increase::" in line for line in errors)
    assert "❌ failed" in (tmp_path / "summary.md").read_text()
    sarif = (repo / "vocabrisk-out" / "gate.sarif").read_text()
    assert '"ruleId": "max-group-risk"' in sarif
    assert results["Report with plots, this data ranked against the baseline"].returncode == 0


def test_workflow_installs_an_extra_that_exists_and_triggers_on_the_data_it_gates():
    spec = workflow()
    triggers = spec.get("on") or spec[True]  # YAML 1.1 reads a bare `on` key as true
    assert "data/**" in triggers["pull_request"]["paths"]
    install = next(s["run"] for s in spec["jobs"]["vocabrisk"]["steps"] if "pip install" in s.get("run", ""))
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert re.search(r"vocabrisk\[(\w+)\]", install)[1] in extras


# ---- pre-commit ----------------------------------------------------------------------------
def hook_command() -> tuple[list[str], dict, dict]:
    """The command pre-commit runs for the example config: the hook's entry, then the config's args."""
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    use = yaml.safe_load((EXAMPLES / "pre-commit-config.yaml").read_text())["repos"][0]["hooks"][0]
    hook = hooks[use["id"]]
    args = list(use.get("args", hook.get("args", [])))
    args[args.index("--model") + 1] = "demo"
    assert hook["pass_filenames"] is False, "the gate judges the whole corpus, not the changed files"
    return shlex.split(hook["entry"]) + args, hook, use


@pytest.mark.parametrize("data, exit_code", [("english-prose", 0), ("korean-notes.txt", 1)])
def test_pre_commit_hook_passes_or_blocks_the_commit(tmp_path, data, exit_code):
    command, _, _ = hook_command()
    result = run(command, scratch_repo(tmp_path, data))
    assert result.returncode == exit_code, result.stdout + result.stderr
    assert ("PASSED" if exit_code == 0 else "FAILED") in result.stdout


def test_pre_commit_hook_runs_when_data_or_limits_change_and_not_for_code():
    _, hook, use = hook_command()
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert hook["entry"].split()[0] in scripts
    for path in ("data/train/stories-1.txt", "data/train/part-0.jsonl.zst", "vocabrisk.toml", "sub/pyproject.toml"):
        assert re.search(hook["files"], path), path
    assert not re.search(hook["files"], "src/train.py")
    assert re.search(use["files"], "data/train/stories-1.txt") and not re.search(use["files"], "data/eval/x.txt")
