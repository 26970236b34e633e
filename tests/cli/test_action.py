"""The GitHub Action (`action.yml`) runs green, red and in error on a scratch repository, as the runner runs it.

Its steps run through `scripts/run_action.py`, which runs `run:` steps as the runner does (bash, inputs
substituted, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY and the rest as files, workflow commands read as
annotations). setup-python has a stand-in that puts a fresh virtual environment's Python on the PATH, so
the action's own install step installs vocabrisk from this checkout into it, as it would on a runner; the
other actions it uses (cache, upload-sarif) cannot run here, and what they would be given is checked.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
from helpers import scratch_repo

yaml = pytest.importorskip("yaml", reason="the action is read with PyYAML")

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_corpora"
BIN = Path(sys.executable).parent


def _load_runner():
    spec = importlib.util.spec_from_file_location("run_action", ROOT / "scripts" / "run_action.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["run_action"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


runner = _load_runner()


@pytest.fixture(scope="module")
def hosted_python(tmp_path_factory) -> Path:
    """The Python setup-python gives a job: a fresh virtual environment, without vocabrisk."""
    venv = tmp_path_factory.mktemp("hosted") / "python"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    return venv / "bin"


def stand_ins(python: Path) -> dict:
    def setup_python(inputs: dict, job) -> None:
        assert inputs["python-version"]
        job.path.insert(0, str(python))

    return {"actions/setup-python": setup_python}


def readme_workflow() -> dict:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### GitHub Actions\n", 1)[1].split("\n### ", 1)[0]
    return yaml.safe_load(section.split("```yaml\n", 1)[1].split("```", 1)[0])


def readme_inputs() -> dict[str, str]:
    """The `with:` of the README workflow's vocabrisk step, the model swapped for demo (CI has no hub)."""
    (step,) = [s for s in readme_workflow()["jobs"]["gate"]["steps"] if "/vocabrisk@" in s.get("uses", "")]
    return {**step["with"], "model": "demo"}


def test_the_readme_workflow_names_the_action_and_inputs_it_has():
    spec = yaml.safe_load((ROOT / "action.yml").read_text())
    workflow = readme_workflow()
    assert set(readme_inputs()) <= set(spec["inputs"])
    assert workflow["permissions"]["security-events"] == "write"  # what upload-sarif needs
    assert spec["runs"]["using"] == "composite"
    extras = spec["inputs"]["extras"]["description"]
    assert "remote" in extras and "gguf" in extras


@pytest.mark.slow
def test_the_action_passes_data_within_its_limits_and_publishes_every_report(tmp_path, hosted_python):
    repo = scratch_repo(tmp_path, "english-prose")
    done = runner.run_action(readme_inputs(), repo, stand_ins=stand_ins(hosted_python))
    gate = done.step("Gate the training data")
    assert done.conclusion == "success", gate.stdout + gate.stderr + done.step("Install vocabrisk").stderr
    assert (hosted_python / "vocabrisk").exists()  # installed by the action's own step, typed
    assert list(hosted_python.parent.glob("lib/python3*/site-packages/vocabrisk/py.typed"))
    assert done.outputs["result"] == "passed" and done.outputs["exit-code"] == "0"
    (notice,) = [a for a in done.annotations if a.kind == "notice"]
    assert notice.properties["title"] == "vocabrisk gate" and "data/train: passed 3 checks" in notice.message
    assert not [a for a in done.annotations if a.kind == "error"]
    assert "## vocabrisk gate ✅ passed" in done.summary
    assert ElementTree.parse(done.outputs["junit"]).getroot().get("failures") == "0"
    upload = done.step("Upload the SARIF report to code scanning")
    assert upload.uses.startswith("github/codeql-action/upload-sarif@")
    assert upload.inputs == {"sarif_file": done.outputs["sarif"], "category": "vocabrisk"}
    assert json.loads(Path(upload.inputs["sarif_file"]).read_text())["runs"][0]["results"] == []
    assert done.step("Cache the model's files and vocabrisk's vocabulary facts").inputs["key"] == "vocabrisk-Linux-demo"
    assert done.step("Fail on a breached limit").outcome == "skipped"


@pytest.mark.slow
def test_the_action_fails_a_breach_with_its_annotation_and_still_reports_it(tmp_path, hosted_python):
    repo = scratch_repo(tmp_path, "korean-notes.txt")
    inputs = {**readme_inputs(), "max-group-risk": "Latin=0.01\n  *=0.9  \n"}
    done = runner.run_action(inputs, repo, stand_ins=stand_ins(hosted_python))
    assert done.conclusion == "failure" and done.outputs["result"] == "failed"
    assert done.step("Fail on a breached limit").returncode == 1
    errors = {a.properties["title"]: a for a in done.annotations if a.kind == "error"}
    assert {"vocabrisk max-risk", "vocabrisk max-risk-increase", "vocabrisk max-group-risk"} <= set(errors)
    assert errors["vocabrisk max-risk"].message.startswith("corpus risk ")
    assert "exceeds max-risk 0.6000 (band high)" in errors["vocabrisk max-risk"].message
    assert "## vocabrisk gate ❌ failed" in done.summary
    sarif = json.loads(Path(done.step("Upload the SARIF report to code scanning").inputs["sarif_file"]).read_text())
    rules = {result["ruleId"] for result in sarif["runs"][0]["results"]}
    assert {"max-risk", "max-risk-increase", "max-group-risk"} <= rules

    reporting = runner.run_action({**inputs, "fail-on-breach": "false"}, repo, stand_ins=stand_ins(hosted_python))
    assert reporting.conclusion == "success" and reporting.outputs["result"] == "failed"
    assert "fail-on-breach is off" in reporting.step("Fail on a breached limit").stdout


@pytest.mark.slow
def test_a_gate_that_cannot_judge_fails_the_job_whatever_fail_on_breach_says(tmp_path, hosted_python):
    (tmp_path / "vocabrisk.toml").write_text('[gate]\nmodel = "demo"\nmax-risk = 2\n')  # not a share: exit 2
    inputs = {"corpus": str(SAMPLES / "english-prose"), "fail-on-breach": "false", "cache": "false"}
    done = runner.run_action(inputs, tmp_path, stand_ins=stand_ins(hosted_python))
    assert done.conclusion == "failure" and done.outputs["result"] == "error" and done.outputs["exit-code"] == "2"
    (error,) = [a for a in done.annotations if a.kind == "error"]
    assert "max-risk = 2 is not a number from 0 to 1" in error.message
    assert "could not judge" in done.summary
    assert done.step("Cache the model's files and vocabrisk's vocabulary facts").outcome == "skipped"
