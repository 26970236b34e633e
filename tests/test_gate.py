"""The CI gate: limits from flags and TOML, baselines, exit codes 0/1/2, and the formats CI reads."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path
from xml.etree import ElementTree

import pytest
from click.testing import CliRunner

from vocabrisk import Profile, SpecialTokenPolicy, TrainingPlan, scan
from vocabrisk.cli.commands import main
from vocabrisk.cli.config import load_config
from vocabrisk.gate import Thresholds, evaluate
from vocabrisk.report.ci import RULES, format_result
from vocabrisk.risk.summary import Summary

SAMPLES = Path(__file__).resolve().parents[1] / "sample_corpora"
PROSE, KOREAN = str(SAMPLES / "english-prose"), str(SAMPLES / "korean-notes.txt")
# Risks under the default plan, from `vocabrisk rank sample_corpora/* --model demo`: all 0.054 (medium),
# english-prose 0.542, korean-notes 0.741 (both high); prose + korean together 0.436.


pytestmark = pytest.mark.usefixtures("no_config_above")


@pytest.fixture(scope="module")
def profiles(tmp_path_factory) -> dict[str, str]:
    """Saved profiles of the sample corpora (and one under another counting policy)."""
    root = tmp_path_factory.mktemp("profiles")
    saved = {}
    for name, inputs, kwargs in (
        ("prose", [PROSE], {}),
        ("korean", [KOREAN], {}),
        ("prose_eos", [PROSE], {"policy": SpecialTokenPolicy(append_eos=True)}),
    ):
        saved[name] = str(scan(inputs, "demo", **kwargs).save(root / name))
    return saved


def gate(*args: str):
    return CliRunner().invoke(main, ["gate", *args, "--quiet"], catch_exceptions=False)


def test_exit_0_within_limits_1_over_them(profiles):
    assert gate(profiles["prose"], "--max-risk", "0.6").exit_code == 0
    failed = gate(profiles["prose"], "--max-risk", "0.5")
    assert failed.exit_code == 1
    assert re.search(r"corpus risk 0\.5\d{3} exceeds max-risk 0\.5000", failed.stdout)


def test_with_no_limit_anywhere_the_gate_fails_on_the_high_band():
    assert gate(str(SAMPLES), "--model", "demo").exit_code == 0  # medium
    result = gate(KOREAN, "--model", "demo")
    assert result.exit_code == 1
    assert "default max-risk" in result.stdout


def test_a_saved_profile_is_gated_without_loading_any_model(profiles):
    assert gate(profiles["korean"], "--max-risk", "0.8").exit_code == 0
    # a model stated that is not the profile's is refused by its name, without loading it
    result = gate(profiles["korean"], "--model", "no/such-model-anywhere", "--max-risk", "0.8")
    assert result.exit_code == 2 and "counted against the model 'demo', not 'no/such-model-anywhere'" in result.output


def test_starved_share_and_group_limits_name_the_group_that_breaks_and_sum_up_the_rest(profiles):
    result = gate(profiles["korean"], "--max-starved-share", "0.95", "--max-group-risk", "*=0.2",
                  "--max-group-risk", "code symbols=0.05")  # fmt: skip
    assert result.exit_code == 1
    assert "✓ share of starved rows" in result.stdout
    assert re.search(r"✗ Latin risk 0\.\d{4} exceeds max-group-risk 0\.2000", result.stdout)
    assert "✗ code symbols risk" in result.stdout
    assert re.search(
        r"✓ \d+ token groups within max-group-risk \(closest: [\w ]+ risk 0\.\d{4}, limit 0\.2000\)", result.stdout
    )
    checks = json.loads(gate(profiles["korean"], "--max-group-risk", "*=0.2", "--format", "json").stdout)["checks"]
    assert len([c for c in checks if c["rule"] == "max-group-risk"]) == 9, "JSON keeps one check per group"


def test_a_group_the_vocabulary_lacks_is_a_usage_error_that_lists_the_real_ones(profiles):
    result = gate(profiles["prose"], "--max-group-risk", "Klingon=0.1")
    assert result.exit_code == 2
    assert "Klingon" in result.stderr and "code symbols" in result.stderr


def test_a_change_that_raises_risk_over_the_baseline_fails(profiles):
    raised = gate(KOREAN, "--baseline", profiles["prose"])
    assert raised.exit_code == 1
    assert re.search(r"risk increase over the baseline 0\.\d{4} exceeds max-risk-increase 0\.0000", raised.stdout)
    assert "newly starved" in raised.stdout
    assert gate(KOREAN, "--baseline", profiles["prose"], "--max-risk-increase", "0.3").exit_code == 0
    lowered = gate(PROSE, KOREAN, "--baseline", profiles["prose"])
    assert lowered.exit_code == 0, "adding Korean text to the prose feeds rows: the risk falls"


def test_a_baseline_counted_another_way_is_refused_not_compared(profiles):
    result = gate(profiles["prose"], "--baseline", profiles["prose_eos"])
    assert result.exit_code == 2
    assert "baseline" in result.stderr and "special-token policies" in result.stderr
    assert gate(profiles["prose"], "--baseline", "missing-folder").exit_code == 2


def test_an_increase_limit_needs_a_baseline_and_out_may_not_overwrite_it(profiles):
    assert gate(profiles["prose"], "--max-risk-increase", "0.1").exit_code == 2
    before = (Path(profiles["prose"]) / "profile.json").read_text()
    assert gate(KOREAN, "--baseline", profiles["prose"], "--out", profiles["prose"]).exit_code == 2
    assert (Path(profiles["prose"]) / "profile.json").read_text() == before


def test_limits_come_from_the_nearest_pyproject_and_flags_override_them(profiles, tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "pipeline"\n\n[tool.vocabrisk.plan]\nsteps = 1000\n\n[tool.vocabrisk.gate]\nmax-risk = 0.5\n'
        f'baseline = "{Path(profiles["prose"]).as_posix()}"\nmax-risk-increase = 0.3\n'
    )
    (tmp_path / "pipeline" / "step").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "pipeline" / "step")
    result = gate(profiles["korean"])
    assert result.exit_code == 1
    assert "exceeds max-risk 0.5000" in result.stdout and "within max-risk-increase 0.3000" in result.stdout
    assert f"configuration file: {tmp_path / 'pyproject.toml'}" in result.stdout
    assert gate(profiles["korean"], "--max-risk", "0.8").exit_code == 0


def test_vocabrisk_toml_sets_model_plan_and_a_baseline_relative_to_itself(profiles, tmp_path):
    (tmp_path / "base").symlink_to(profiles["prose"], target_is_directory=True)
    (tmp_path / "vocabrisk.toml").write_text(
        '[gate]\nmodel = "demo"\nbaseline = "base"\n[gate.max-group-risk]\n"*" = 0.3\n'
        "[plan]\ntokens-per-step = 4096\nsteps = 500\n"
    )
    data = json.loads(gate(KOREAN, "--format", "json").stdout)
    assert data["baseline"]["path"] == str(tmp_path / "base")
    assert data["summary"]["risk"]["plan"] == TrainingPlan(tokens_per_step=4096, steps=500).to_dict()
    assert {c["rule"] for c in data["checks"]} == {"max-group-risk", "max-risk-increase", "max-skipped-share"}


def test_with_no_inputs_the_gate_judges_the_corpus_the_configuration_names(profiles, tmp_path, monkeypatch):
    (tmp_path / "data").mkdir()
    shutil.copy(KOREAN, tmp_path / "data")
    (tmp_path / "pyproject.toml").write_text('[tool.vocabrisk.gate]\ncorpus = "data"\nmax-risk = 0.5\n')
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")  # relative to the file, named from where the gate runs
    data = json.loads(gate("--format", "json").stdout)
    assert data["inputs"] == ["../data"] and data["passed"] is False
    assert gate(profiles["prose"], "--max-risk", "0.6").exit_code == 0  # INPUTS given win
    config = load_config(start=tmp_path)
    assert config.corpus == ("../data",)
    (tmp_path / "pyproject.toml").write_text('[tool.vocabrisk.gate]\ncorpus = ["a/*.jsonl", "s3://bucket/b/"]\n')
    assert load_config(start=tmp_path).corpus == ("../a/*.jsonl", "s3://bucket/b/")  # a URL as it is


def test_with_no_inputs_and_no_corpus_configured_the_gate_says_where_to_name_one(tmp_path):
    result = gate()
    assert result.exit_code == 2
    assert "no corpus to gate: name it (vocabrisk gate data/train)" in result.stderr.replace("\n", " ")
    (tmp_path / "vocabrisk.toml").write_text("[gate]\nmax-risk = 0.5\n")
    assert f"set `corpus` in {tmp_path / 'vocabrisk.toml'}" in gate().stderr.replace("\n", "")


@pytest.mark.parametrize(
    "text, message",
    [
        ("[gate\n", "not valid TOML"),
        ("[gate]\ncorpus = 3\n", "corpus = 3 is not a path or a list of paths"),
        ("[gate]\nmax-risk = 2\n", "max-risk = 2 is not a number from 0 to 1"),
        ("[gate]\nmax_risk = 0.2\n", "unknown keys: max_risk"),
        ("[plan]\nadam-beta2 = 1.0\n", "table plan: adam-beta2 = 1.0 is not a number from 0 up to"),
        ("[plan]\nsteps = 0\n", "steps = 0 is not a positive whole number"),
        ("[plan]\nsteps = 10\nepochs = 2\n", "both steps and epochs are given"),
        ("[plan]\ntrains = 'head'\n", "trains = 'head' is not one of all, head-frozen, lora, lora+head"),
        ("[plan]\nlearning-rate = 1e-4\n", "unknown settings learning-rate"),
        ("[gate]\nsteps = 500\n", "table gate has plan keys: steps"),
        ("[gate]\nmax-group-risk = 0.1\n", "max-group-risk must map group names"),
    ],
)
def test_a_bad_configuration_file_is_an_error_naming_the_file(profiles, tmp_path, text, message):
    (tmp_path / "vocabrisk.toml").write_text(text)
    result = gate(profiles["prose"])
    assert result.exit_code == 2
    assert str(tmp_path / "vocabrisk.toml") in result.stderr.replace("\n", "")
    assert message in result.stderr.replace("\n", " ")


def test_a_pyproject_without_a_vocabrisk_table_is_passed_over(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert load_config(start=tmp_path / "sub").path is None


@pytest.mark.parametrize("option", ["--max-group-risk=Latin", "--max-group-risk=Latin=2", "--report=xml=out.xml"])
def test_malformed_options_are_usage_errors(profiles, option):
    assert gate(profiles["prose"], option).exit_code == 2


def test_one_run_writes_every_report_format_ci_reads(profiles, tmp_path):
    reports = [f"--report={f}={tmp_path / ('out.' + f)}" for f in ("junit", "sarif", "markdown", "json")]
    result = gate(KOREAN, "--baseline", profiles["prose"], "--max-risk", "0.5", "--format", "github", *reports)
    assert result.exit_code == 1
    errors = [line for line in result.stdout.splitlines() if line.startswith("::error ")]
    assert len(errors) == 2
    assert errors[0].startswith(f"::error title=vocabrisk max-risk,file={KOREAN.replace(':', '%3A')}::corpus risk")

    suite = ElementTree.parse(tmp_path / "out.junit").getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("3", "2")
    cases = [c.get("classname") for c in suite.iter("testcase")]
    assert cases == ["vocabrisk.gate.max-risk", "vocabrisk.gate.max-skipped-share", "vocabrisk.gate.max-risk-increase"]

    sarif = json.loads((tmp_path / "out.sarif").read_text())
    run = sarif["runs"][0]
    assert sarif["version"] == "2.1.0"
    assert {r["ruleId"] for r in run["results"]} <= {rule["id"] for rule in run["tool"]["driver"]["rules"]}
    assert run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("korean-notes.txt")

    markdown = (tmp_path / "out.markdown").read_text()
    assert markdown.startswith("## vocabrisk gate ❌ failed")
    assert re.search(r"\| ❌ \| corpus risk \(max-risk\) \| 0\.\d{4} \| 0\.5000 \|", markdown)
    assert json.loads((tmp_path / "out.json").read_text())["exit_code"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json", "out.junit", "out.markdown", "out.sarif"]


def test_a_passing_gate_leaves_a_notice_and_no_error(profiles):
    result = gate(profiles["prose"], "--max-risk", "0.6", "--format", "github")
    assert not [line for line in result.stdout.splitlines() if line.startswith("::error")]
    assert result.stdout.splitlines()[-1].startswith("::notice title=vocabrisk gate::")


def test_workflow_commands_escape_what_would_end_or_split_them(profiles):
    summary = Summary.of(Profile.load(profiles["prose"]))
    result = evaluate(summary, Thresholds(max_risk=0.1), inputs=["a,b:c.txt"])
    breached = replace(result.checks[0], subject="100% over\nlimit")
    line = format_result(replace(result, checks=[breached, *result.checks[1:]]), "github").splitlines()[-1]
    assert line.startswith("::error title=vocabrisk max-risk::100%25 over%0Alimit ")


def test_the_python_api_gives_the_same_verdict(profiles):
    summary = Summary.of(Profile.load(profiles["korean"]), TrainingPlan())
    result = evaluate(summary, Thresholds(max_risk=0.5), baseline=Profile.load(profiles["prose"]), inputs=[KOREAN])
    assert (result.passed, result.exit_code) == (False, 1)
    assert [c.rule for c in result.checks if not c.passed] == ["max-risk", "max-risk-increase"]


def test_gate_can_save_the_profile_it_scanned(tmp_path):
    assert gate(KOREAN, "--max-risk", "0.8", "--out", str(tmp_path / "saved")).exit_code == 0
    assert gate(str(tmp_path / "saved"), "--max-risk", "0.7").exit_code == 1


def test_korean_chatbot_fails_where_english_passes_against_gpt2(shared_data, tmp_path):
    gpt2 = str(shared_data / "tokenizers" / "gpt2")
    chatbot = str(shared_data / "corpora" / "ko-chatbot" / "ChatbotData.csv")
    english = str(shared_data / "corpora" / "en-shakespeare" / "input.txt")
    passed = gate(english, "--model", gpt2, "--max-risk", "0.5", "--out", str(tmp_path / "english"))
    assert passed.exit_code == 0, passed.output
    failed = gate(chatbot, "--model", gpt2, "--text-field", "Q", "--text-field", "A", "--max-risk", "0.5",
                  "--baseline", str(tmp_path / "english"))  # fmt: skip
    assert failed.exit_code == 1
    assert "exceeds max-risk 0.5000" in failed.stdout and "exceeds max-risk-increase" in failed.stdout


def test_every_rule_a_check_can_break_is_described_to_junit_and_sarif(profiles):
    summary = Summary.of(Profile.load(profiles["korean"]))
    limits = Thresholds(0.0, 0.0, 0.0, max_group_risk={"*": 0.0}, max_risk_increase=-1.0)
    result = evaluate(summary, limits, Profile.load(profiles["prose"]))
    assert {c.rule for c in result.checks if not c.passed} == set(RULES) - {"max-skipped-share"}
    failures = ElementTree.fromstring(format_result(result, "junit").split("\n", 1)[1]).iter("failure")
    assert {f.get("type"): f.text for f in failures}.items() <= RULES.items()
    sarif = json.loads(format_result(result, "sarif"))["runs"][0]
    assert {r["ruleId"] for r in sarif["results"]} == {rule["id"] for rule in sarif["tool"]["driver"]["rules"]} - {
        "max-skipped-share"
    }


ERROR_FORMATS = ("json", "github", "junit", "sarif", "markdown")


def _error_in(name: str, text: str) -> str:
    """The error message a report in format NAME carries (AssertionError where it carries none)."""
    if name == "json":
        data = json.loads(text)
        assert data["passed"] is False and data["exit_code"] == 2
        return data["error"]["message"]
    if name == "junit":
        suites = ElementTree.fromstring(text.split("\n", 1)[1])
        assert suites.get("errors") == "1" and not list(suites.iter("failure"))
        return next(suites.iter("error")).get("message")
    if name == "sarif":
        (run,) = json.loads(text)["runs"]
        (invocation,) = run["invocations"]
        assert invocation["executionSuccessful"] is False and run["results"] == []
        return invocation["toolExecutionNotifications"][0]["message"]["text"]
    if name == "github":
        (line,) = [line for line in text.splitlines() if line.startswith("::error ")]
        return line
    assert text.startswith("## vocabrisk gate ⚠️ error")
    return text


@pytest.mark.parametrize(
    ("break_it", "message"),
    [
        (lambda args, tmp: [str(tmp / "no-such-corpus"), *args[1:]], "no-such-corpus"),  # an input error
        (lambda args, tmp: [*args, "--max-group-risk", "Klingon=0.1"], "Klingon"),  # found while judging
        (lambda args, tmp: [*args, "--max-risk", "abc"], "--max-risk"),  # a flag click refuses
    ],
)
def test_an_erroring_gate_overwrites_every_report_with_the_error(profiles, tmp_path, break_it, message):
    reports = {name: tmp_path / f"gate.{name}" for name in ERROR_FORMATS}
    args = [profiles["prose"], "--max-risk", "1", *(f"--report={n}={p}" for n, p in reports.items())]
    assert gate(*args).exit_code == 0
    assert json.loads(reports["json"].read_text(encoding="utf-8"))["passed"] is True  # an earlier passing run
    for output_format in ERROR_FORMATS:
        result = gate(*break_it(args, tmp_path), "--format", output_format)
        assert result.exit_code == 2
        assert message in _error_in(output_format, result.stdout), result.stdout  # stdout too: CI reads it
        for name, path in reports.items():
            assert message in _error_in(name, path.read_text(encoding="utf-8")), name
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in reports.values())  # no staging


def test_a_forecast_past_a_uniform_guess_is_flagged_not_printed_and_fails_any_limit():
    """The demo's vocabulary caps a loss rise at ln(4,096) = 8.3 nats; lr 0.5 forecasts more (issue 21)."""
    args = [str(KOREAN), "--model", "demo", "--steps", "100000", "--lr", "0.5"]
    scanned = CliRunner().invoke(main, ["scan", *args, "--format", "json"])
    forecast = json.loads(scanned.stdout)["forecast"]
    assert forecast["beyond_possible"] and forecast["total_nats"] is None and forecast["band"] is None
    assert forecast["ceiling_nats"] == pytest.approx(8.3178, abs=1e-3)
    gated = CliRunner().invoke(main, ["gate", *args, "--max-forgetting", "50", "--format", "json"])
    assert gated.exit_code == 1
    check = next(c for c in json.loads(gated.stdout)["checks"] if c["rule"] == "max-forgetting")
    assert not check["passed"] and "beyond what is possible" in check["message"] and "exceeds" not in check["message"]
    text = CliRunner().invoke(main, ["scan", *args], env={"COLUMNS": "200"}).output
    assert "beyond what a forecast can say" in text and "+8.32 nats" in text
