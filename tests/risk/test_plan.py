"""The training plan: its length in steps or epochs, its schedule, and reading it from TrainingArguments."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from vocabrisk import scan
from vocabrisk.cli.commands import main
from vocabrisk.errors import PlanError
from vocabrisk.risk.plan import LR_SCHEDULES, TrainingPlan
from vocabrisk.risk.plan_settings import resolve_plan

# A TrainingArguments JSON as `to_json_string()` writes it, cut to the fields a plan reads plus a few it ignores.
HF_ARGS = {
    "output_dir": "out",
    "per_device_train_batch_size": 8,
    "gradient_accumulation_steps": 4,
    "num_train_epochs": 3.0,
    "max_steps": -1,
    "learning_rate": 5e-5,
    "lr_scheduler_type": "linear",
    "warmup_ratio": 0.0,
    "warmup_steps": 0,
    "adam_beta1": 0.9,
    "adam_beta2": 0.999,
    "adam_epsilon": 1e-8,
    "weight_decay": 0.0,
    "optim": "adamw_torch",
    "seed": 42,
}


def test_defaults_stay_what_they_were():
    plan = TrainingPlan()
    assert (plan.tokens_per_step, plan.steps, plan.beta2) == (524_288, 1_000, 0.999)
    assert plan.memory_steps == pytest.approx(1000)
    assert plan.total_tokens == 524_288_000
    assert plan.mean_lr == pytest.approx(2e-5)
    assert plan.head_trains


def test_a_plan_in_epochs_takes_its_steps_from_the_corpus():
    plan = TrainingPlan(tokens_per_step=1_000, epochs=2.5)
    assert plan.steps is None
    assert plan.steps_for(10_500) == 27  # 26.25 steps, rounded up
    resolved = plan.resolve(10_500)
    assert (resolved.steps, resolved.epochs) == (27, 2.5)
    assert resolved.resolve(40_000).steps == 100  # a resolved plan re-resolves for another corpus
    assert plan.implied_epochs(10_500) == resolved.implied_epochs(10_500) == 2.5
    assert plan.steps_for(10) == 1 and plan.implied_epochs(10) == 100  # 25 tokens: one step of 1,000 is 100 epochs
    assert "less than one optimizer step of 1,000 tokens: the run's one step goes over it 100 times" in (
        plan.repeats_warning(10)
    )
    with pytest.raises(PlanError, match="resolve"):
        _ = plan.total_tokens


def test_implied_epochs_and_the_repetition_warning():
    plan = TrainingPlan(tokens_per_step=1_000, steps=100)
    assert plan.implied_epochs(50_000) == pytest.approx(2.0)
    assert plan.repeats_warning(50_000) is None
    assert plan.implied_epochs(0) is None and plan.repeats_warning(0) is None
    warning = plan.repeats_warning(10_000)
    assert warning.startswith("the plan repeats this corpus 10 times;") and "--training-args" in warning
    assert "1,049 times" in TrainingPlan().repeats_warning(500_000)  # 524,288,000 / 500,000


@pytest.mark.parametrize(
    "schedule, expected",
    [
        ("constant", [0.0, 0.5, 1.0, 1.0, 1.0, 1.0]),
        ("linear", [0.0, 0.5, 1.0, 0.75, 0.5, 0.25]),
        ("cosine", [0.0, 0.5, 1.0, 0.5 * (1 + math.cos(math.pi / 4)), 0.5, 0.5 * (1 + math.cos(3 * math.pi / 4))]),
    ],
)
def test_lr_follows_transformers_schedules(schedule, expected):
    # transformers' get_*_schedule_with_warmup with 2 warmup steps of 6, lr 1: the same factors
    plan = TrainingPlan(steps=6, warmup_steps=2, learning_rate=1.0, lr_schedule=schedule)
    assert plan.lr_at(np.arange(6)) == pytest.approx(expected)
    assert plan.lr_at(3) == pytest.approx(expected[3])


@given(
    steps=st.integers(1, 3000),
    warmup=st.integers(0, 4000),
    schedule=st.sampled_from(LR_SCHEDULES),
    lr=st.floats(1e-7, 1.0),
)
def test_mean_lr_is_the_mean_of_the_schedule(steps, warmup, schedule, lr):
    plan = TrainingPlan(steps=steps, warmup_steps=warmup, learning_rate=lr, lr_schedule=schedule)
    assert plan.mean_lr == pytest.approx(float(np.mean(plan.lr_at(np.arange(steps)))), rel=1e-9, abs=1e-15)
    assert 0.0 <= plan.mean_lr <= lr * (1 + 1e-12)


def test_warmup_ratio_rounds_up_as_transformers_does():
    assert TrainingPlan(steps=1000, warmup_ratio=0.03).warmup == 30
    assert TrainingPlan(steps=10, warmup_ratio=0.01).warmup == 1
    assert TrainingPlan(steps=10, warmup_steps=4, warmup_ratio=0.5).warmup == 4


@pytest.mark.parametrize("trains, head", [("all", True), ("head-frozen", False), ("lora", False), ("lora+head", True)])
def test_what_trains_says_whether_the_head_does(trains, head):
    assert TrainingPlan(trains=trains).head_trains is head


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"trains": "everything"}, "trains = 'everything' is not one of all, head-frozen, lora, lora+head"),
        ({"lr_schedule": "polynomial"}, "lr_schedule = 'polynomial'"),
        ({"beta2": 1.0}, "beta2 = 1.0 is not a number from 0 up to"),
        ({"steps": 0}, "steps = 0 is not a positive whole number"),
        ({"steps": 10.5}, "steps = 10.5"),
        ({"epochs": 0}, "epochs = 0 is not a positive number"),
        ({"head_eps": 0.0}, "head_eps = 0.0 is not a positive number"),
        ({"learning_rate": float("nan")}, "learning_rate = nan"),
        ({"tokens_per_step": True}, "tokens_per_step = True"),
    ],
)
def test_bad_fields_are_refused_by_name(fields, message):
    with pytest.raises(PlanError, match=message.replace("(", r"\(").replace("+", r"\+")):
        TrainingPlan(**fields)


def test_dicts_round_trip_and_old_plan_dicts_still_load():
    plan = TrainingPlan(tokens_per_step=4096, epochs=3.0, lr_schedule="cosine", trains="lora", head_eps=1e-5)
    assert TrainingPlan.from_dict(json.loads(json.dumps(plan.to_dict()))) == plan
    resolved = plan.resolve(100_000)
    assert TrainingPlan.from_dict(resolved.to_dict()) == resolved
    old = TrainingPlan.from_dict({"tokens_per_step": 4096, "steps": 500, "beta2": 0.99})
    assert old == TrainingPlan(tokens_per_step=4096, steps=500, beta2=0.99)


# ---- TrainingArguments ---------------------------------------------------------------------
def test_training_arguments_give_tokens_per_step_epochs_and_optimizer():
    plan = TrainingPlan.from_training_arguments(HF_ARGS, seq_len=1024, world_size=2)
    assert plan.tokens_per_step == 8 * 4 * 2 * 1024
    assert (plan.steps, plan.epochs) == (None, 3.0)
    assert (plan.learning_rate, plan.lr_schedule, plan.warmup_steps) == (5e-5, "linear", 0)
    assert (plan.beta1, plan.beta2, plan.eps, plan.weight_decay) == (0.9, 0.999, 1e-8, 0.0)


def test_training_arguments_max_steps_win_over_epochs_and_warmup_ratio_applies():
    args = {**HF_ARGS, "max_steps": 200, "warmup_ratio": 0.1, "lr_scheduler_type": "cosine"}
    plan = TrainingPlan.from_training_arguments(args, seq_len=512)
    assert (plan.steps, plan.epochs, plan.lr_schedule, plan.warmup) == (200, None, "cosine", 20)


def test_transformers_constant_schedule_ignores_warmup_and_a_fraction_of_warmup_steps_is_a_ratio():
    constant = {**HF_ARGS, "lr_scheduler_type": "constant", "warmup_steps": 50}
    constant = TrainingPlan.from_training_arguments(constant, 64)
    assert (constant.lr_schedule, constant.warmup) == ("constant", 0)
    with_warmup = {**HF_ARGS, "lr_scheduler_type": "constant_with_warmup", "warmup_steps": 50}
    assert TrainingPlan.from_training_arguments(with_warmup, 64).warmup_steps == 50
    ratio = TrainingPlan.from_training_arguments({**HF_ARGS, "max_steps": 100, "warmup_steps": 0.05}, 64)
    assert ratio.warmup == 5
    assert TrainingPlan.from_training_arguments({**HF_ARGS, "warmup_steps": 30.0}, 64).warmup_steps == 30


def test_a_trl_sft_config_says_its_own_sequence_length():
    assert TrainingPlan.from_training_arguments({**HF_ARGS, "max_seq_length": 2048}).tokens_per_step == 32 * 2048
    assert TrainingPlan.from_training_arguments({**HF_ARGS, "max_length": 1024}).tokens_per_step == 32 * 1024
    assert TrainingPlan.from_training_arguments({**HF_ARGS, "max_length": 1024}, seq_len=16).tokens_per_step == 32 * 16


@pytest.mark.parametrize(
    "change, message",
    [
        ({"per_device_train_batch_size": 0}, "field per_device_train_batch_size = 0 is not a positive whole number"),
        ({"gradient_accumulation_steps": "4"}, "field gradient_accumulation_steps = '4'"),
        ({"num_train_epochs": -1.0}, "field num_train_epochs = -1.0 is not a positive number"),
        ({"adam_beta2": 1.5}, "field adam_beta2 = 1.5"),
        ({"lr_scheduler_type": "inverse_sqrt"}, "field lr_scheduler_type = 'inverse_sqrt' is not one vocabrisk models"),
        ({"optim": "sgd"}, "field optim = 'sgd' is not an Adam optimizer"),
    ],
)
def test_bad_training_arguments_name_the_file_and_field(tmp_path, change, message):
    path = tmp_path / "training_args.json"
    path.write_text(json.dumps({**HF_ARGS, **change}))
    with pytest.raises(PlanError, match=f"^{path}: {message}"):
        TrainingPlan.from_training_arguments(path, seq_len=128)


def test_files_that_are_not_training_arguments_say_so(tmp_path):
    with pytest.raises(PlanError, match="cannot read"):
        TrainingPlan.from_training_arguments(tmp_path / "missing.json", seq_len=128)
    (tmp_path / "bin").write_bytes(b"\x80\x04\x95 pickled")
    with pytest.raises(PlanError, match="not JSON"):
        TrainingPlan.from_training_arguments(tmp_path / "bin", seq_len=128)
    (tmp_path / "state.json").write_text(json.dumps({"global_step": 10, "log_history": []}))
    with pytest.raises(PlanError, match="no field per_device_train_batch_size"):
        TrainingPlan.from_training_arguments(tmp_path / "state.json", seq_len=128)
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(PlanError, match="JSON list"):
        TrainingPlan.from_training_arguments(tmp_path / "list.json", seq_len=128)
    with pytest.raises(PlanError, match=r"no sequence length(.|\n)*--seq-len"):
        TrainingPlan.from_training_arguments(HF_ARGS)


def test_a_real_training_arguments_json_reads_back(tmp_path):
    transformers = pytest.importorskip("transformers", reason="needs the verify extra")
    pytest.importorskip("torch", reason="TrainingArguments needs torch")
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path / "out"),
        per_device_train_batch_size=4,
        gradient_accumulation_steps=8,
        max_steps=300,
        learning_rate=3e-4,
        warmup_steps=30,
        lr_scheduler_type="cosine",
        adam_beta1=0.85,
        adam_beta2=0.95,
        adam_epsilon=1e-6,
        weight_decay=0.1,
        report_to=[],
    )
    path = tmp_path / "training_args.json"
    path.write_text(args.to_json_string())
    plan = TrainingPlan.from_training_arguments(path, seq_len=2048)
    assert plan == TrainingPlan(
        tokens_per_step=4 * 8 * 2048, steps=300, learning_rate=3e-4, warmup_steps=30, lr_schedule="cosine",
        beta1=0.85, beta2=0.95, eps=1e-6, weight_decay=0.1,
    )  # fmt: skip
    epochs = transformers.TrainingArguments(output_dir=str(tmp_path / "out"), num_train_epochs=2, report_to=[])
    path.write_text(epochs.to_json_string())
    assert TrainingPlan.from_training_arguments(path, seq_len=512).epochs == 2.0


# ---- precedence ----------------------------------------------------------------------------
def test_flags_win_over_training_arguments_which_win_over_the_configuration(tmp_path):
    path = tmp_path / "training_args.json"
    path.write_text(json.dumps({**HF_ARGS, "max_steps": 300}))
    configured = {"steps": 50, "lr": 1e-4, "adam_beta2": 0.99, "trains": "lora"}
    configured |= {"training_args": str(path), "seq_len": 64}
    plan = resolve_plan({}, configured)
    # the file's steps and lr beat the configuration's; what the file does not say comes from the configuration
    assert (plan.steps, plan.learning_rate, plan.beta2, plan.trains) == (300, 5e-5, 0.999, "lora")
    assert plan.tokens_per_step == 32 * 64
    flagged = resolve_plan({"epochs": 2.0, "lr": 1e-3, "seq_len": 128}, configured)
    assert (flagged.steps, flagged.epochs, flagged.learning_rate) == (None, 2.0, 1e-3)
    assert flagged.tokens_per_step == 32 * 128
    assert resolve_plan({}, {"epochs": 4.0}) == TrainingPlan(epochs=4.0)
    assert resolve_plan({"steps": 10}, {"epochs": 4.0}) == TrainingPlan(steps=10)
    assert resolve_plan({}) == TrainingPlan()


def test_a_flag_replaces_a_training_arguments_field_vocabrisk_cannot_read(tmp_path):
    path = tmp_path / "training_args.json"
    path.write_text(json.dumps({**HF_ARGS, "lr_scheduler_type": "inverse_sqrt"}))
    with pytest.raises(PlanError, match="lr_scheduler_type"):
        resolve_plan({"training_args": str(path), "seq_len": 8})
    plan = resolve_plan({"training_args": str(path), "seq_len": 8, "lr_schedule": "linear"})
    assert plan.lr_schedule == "linear"


@pytest.mark.parametrize(
    "flags, message",
    [
        ({"steps": 10, "epochs": 1.0}, "both --steps and --epochs"),
        ({"seq_len": 2048}, "--seq-len only apply to a TrainingArguments file"),
        ({"world_size": 8, "seq_len": 8}, "--seq-len and --world-size only apply"),
        ({"beta3": 0.5}, "unknown settings --beta3"),
    ],
)
def test_flags_that_cannot_make_a_plan_are_refused(flags, message):
    with pytest.raises(PlanError, match=message):
        resolve_plan(flags)


# ---- the command line ----------------------------------------------------------------------
SAMPLES = Path(__file__).resolve().parents[2] / "sample_corpora"
PROSE = str(SAMPLES / "english-prose")


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("profiles")
    names = ("english-prose", "korean-notes.txt")
    return {name: str(scan([str(SAMPLES / name)], "demo").save(root / name)) for name in names}


@pytest.fixture
def in_tmp(tmp_path, monkeypatch) -> Path:
    """Run in an empty folder, so no configuration file above the checkout applies."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def cli(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def json_plans(saved: dict[str, str], *flags: str) -> list[dict]:
    """The plan each command judges under, as its JSON says."""
    prose, korean = saved["english-prose"], saved["korean-notes.txt"]
    scanned = json.loads(cli("scan", PROSE, "--format", "json", *flags).stdout)["risk"]["plan"]
    ranked = json.loads(cli("rank", prose, korean, "--format", "json", *flags).stdout)["candidates"]
    diffed = json.loads(cli("diff", korean, prose, "--format", "json", *flags).stdout)["plan"]
    gated = json.loads(cli("gate", prose, "--max-risk", "1", "--format", "json", *flags).stdout)
    return [scanned, *(row["plan"] for row in ranked), diffed, gated["summary"]["risk"]["plan"]]


def test_every_command_judges_under_the_configured_plan_and_flags_override_it(saved, in_tmp):
    (in_tmp / "vocabrisk.toml").write_text("[plan]\ntokens-per-step = 4096\nsteps = 300\nadam-beta2 = 0.99\n")
    configured = TrainingPlan(tokens_per_step=4096, steps=300, beta2=0.99).to_dict()
    assert json_plans(saved) == [configured] * 5
    flagged = TrainingPlan(tokens_per_step=4096, steps=300, beta2=0.95, learning_rate=1e-4).to_dict()
    assert json_plans(saved, "--beta2", "0.95", "--lr", "1e-4") == [flagged] * 5
    report = cli("report", saved["english-prose"], "--markdown", "-", "--adam-beta2", "0.95", "--lr", "1e-4")
    assert "300 steps × 4,096 tokens" in report.stdout and "β=(0.9, 0.95)" in report.stdout


def judgements(saved: dict[str, str], *flags: str) -> list[tuple]:
    """(plan, risk, forecast) of the saved english-prose profile as scan, rank, diff and gate give them."""
    prose = saved["english-prose"]
    scanned = json.loads(cli("scan", prose, "--format", "json", *flags).stdout)
    (ranked,) = json.loads(cli("rank", prose, "--format", "json", *flags).stdout)["candidates"]
    diffed = json.loads(cli("diff", saved["korean-notes.txt"], prose, "--format", "json", *flags).stdout)
    gated = json.loads(cli("gate", prose, "--max-risk", "1", "--format", "json", *flags).stdout)["summary"]
    return [
        (scanned["risk"]["plan"], scanned["risk"]["score"], scanned["forecast"]),
        (ranked["plan"], ranked["risk"], ranked["forecast"]),
        (diffed["plan"], diffed["risk_after"], diffed["forecast_after"]),
        (gated["risk"]["plan"], gated["risk"]["score"], gated["forecast"]),
    ]


@pytest.mark.parametrize(
    "flags, expected",
    [
        ((), TrainingPlan(tokens_per_step=2048, steps=40, learning_rate=1e-4, beta2=0.99)),
        (("--adam-beta2", "0.95", "--steps", "60"), TrainingPlan(tokens_per_step=2048, steps=60, learning_rate=1e-4,
                                                                 beta2=0.95)),
        (("--config", "other.toml"), TrainingPlan(tokens_per_step=512, steps=80, trains="head-frozen")),
        (("--config", "other.toml", "--lr", "3e-4"), TrainingPlan(tokens_per_step=512, steps=80, trains="head-frozen",
                                                                  learning_rate=3e-4)),
    ],
)  # fmt: skip
def test_one_saved_profile_gets_the_same_risk_and_forecast_from_every_command(saved, in_tmp, flags, expected):
    """One plan everywhere: the flags, over --config or else the nearest configuration file, over the defaults."""
    default = judgements(saved)[0]
    (in_tmp / "vocabrisk.toml").write_text("[plan]\ntokens-per-step = 2048\nsteps = 40\nlr = 1e-4\nadam-beta2 = 0.99\n")
    (in_tmp / "other.toml").write_text("[plan]\ntokens-per-step = 512\nsteps = 80\ntrains = 'head-frozen'\n")
    judged = judgements(saved, *flags)
    plan, risk, forecast = judged[0]
    assert plan == expected.to_dict()
    assert judged == [(plan, risk, forecast)] * 4
    assert risk != default[1] and forecast["total_nats"] != default[2]["total_nats"], "the plan changes the numbers"
    report = cli("report", saved["english-prose"], "--markdown", "-", *flags).stdout
    assert f"forecast {forecast['total_nats']:+.3f} nats, starved usage {risk:.3f}" in report
    assert f"{expected.steps:,} steps × {expected.tokens_per_step:,} tokens" in report


def test_a_training_arguments_file_sets_the_plan_from_flags_or_the_configuration(saved, in_tmp, monkeypatch):
    (in_tmp / "train").mkdir()
    (in_tmp / "train" / "training_args.json").write_text(json.dumps({**HF_ARGS, "max_steps": 120}))
    flags = ("--training-args", str(in_tmp / "train" / "training_args.json"), "--seq-len", "256", "--world-size", "2")
    expected = TrainingPlan.from_training_arguments(HF_ARGS | {"max_steps": 120}, seq_len=256, world_size=2)
    assert expected.tokens_per_step == 8 * 4 * 2 * 256
    data = json.loads(cli("scan", PROSE, "--format", "json", *flags).stdout)
    assert data["risk"]["plan"] == expected.to_dict()
    # the same from the configuration file, with the path relative to it, run from a folder below
    (in_tmp / "vocabrisk.toml").write_text('[plan]\ntraining-args = "train/training_args.json"\nseq-len = 256\n')
    monkeypatch.chdir(in_tmp / "train")
    result = cli("diff", saved["korean-notes.txt"], saved["english-prose"], "--format", "json")
    assert json.loads(result.stdout)["plan"] == replace(expected, tokens_per_step=8 * 4 * 256).to_dict()


def test_the_implied_epochs_are_shown_and_a_plan_that_repeats_the_corpus_is_warned_about(saved, in_tmp):
    data = json.loads(cli("scan", PROSE, "--format", "json").stdout)
    epochs = TrainingPlan().total_tokens / data["tokens"]
    assert data["risk"]["implied_epochs"] == pytest.approx(epochs)
    assert data["warnings"] == [TrainingPlan().repeats_warning(data["tokens"])]
    text = cli("scan", PROSE).stdout
    assert f"({epochs:,.0f} epochs over this corpus)" in text and "the plan repeats this corpus" in text
    stated = json.loads(cli("scan", PROSE, "--format", "json", "--epochs", "2", "--tokens-per-step", "512").stdout)
    assert stated["warnings"] == [] and stated["risk"]["implied_epochs"] == 2.0
    assert stated["risk"]["plan"]["steps"] == math.ceil(2 * data["tokens"] / 512)
    gate = cli("gate", saved["english-prose"], "--max-risk", "1", "--format", "github")
    assert "::warning title=vocabrisk warning::the plan repeats this corpus" in gate.stdout
    rank = cli("rank", saved["english-prose"], saved["korean-notes.txt"])
    assert "epochs" in rank.stdout and rank.stdout.count("the plan repeats this corpus") == 2


def test_an_epochs_plan_gives_each_candidate_its_own_steps(saved, in_tmp):
    ranked = cli("rank", *saved.values(), "--epochs", "3", "--tokens-per-step", "256", "--format", "json")
    rows = json.loads(ranked.stdout)["candidates"]
    assert len({row["plan"]["steps"] for row in rows}) == 2
    for row in rows:
        assert row["plan"]["steps"] == math.ceil(3 * row["tokens"] / 256)
        assert row["implied_epochs"] == 3.0 and row["warnings"] == []


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--seq-len", "2048"], "--seq-len only apply to a TrainingArguments file"),
        (["--steps", "10", "--epochs", "1"], "both --steps and --epochs"),
        (["--trains", "head"], "'head' is not one of"),
        (["--training-args", "missing.json", "--seq-len", "8"], "missing.json: cannot read"),
    ],
)
def test_plan_flags_that_cannot_make_a_plan_exit_2_before_scanning(in_tmp, flags, message):
    result = CliRunner().invoke(main, ["scan", PROSE, *flags])
    assert result.exit_code == 2
    assert message in result.output.replace("\n", " ")


# ---- the README's section runs as written --------------------------------------------------
def readme_blocks(language: str) -> list[str]:
    """The LANGUAGE code blocks of the README's "The training plan" section."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## The training plan\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.DOTALL)


def run_here(command: list[str] | str, cwd: Path) -> subprocess.CompletedProcess:
    """COMMAND as a shell runs it in CWD, with this environment's `vocabrisk` first on the PATH."""
    env = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"]}
    shell = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", command] if isinstance(command, str) else command
    return subprocess.run(shell, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def write_training_args(folder: Path) -> dict:
    """The README's Python example run in FOLDER where transformers is installed, else its JSON by hand."""
    (python,) = readme_blocks("python")
    try:
        import torch  # noqa: F401  (TrainingArguments needs it)
        import transformers  # noqa: F401
    except ImportError:
        args = {**HF_ARGS, "per_device_train_batch_size": 8, "gradient_accumulation_steps": 4, "num_train_epochs": 2.0,
                "learning_rate": 1e-4, "lr_scheduler_type": "cosine", "warmup_steps": 100}  # fmt: skip
        (folder / "training_args.json").write_text(json.dumps(args))
    else:
        result = run_here([sys.executable, "-c", python], folder)
        assert result.returncode == 0, result.stderr
    return json.loads((folder / "training_args.json").read_text())


def test_the_readme_plan_examples_run_as_written(in_tmp):
    (in_tmp / "sample_corpora").symlink_to(SAMPLES, target_is_directory=True)
    args = write_training_args(in_tmp)
    assert (args["num_train_epochs"], args["lr_scheduler_type"], args["warmup_steps"]) == (2, "cosine", 100)
    (commands,) = readme_blocks("bash")
    for command in commands.strip().splitlines():
        result = run_here(command, in_tmp)
        assert result.returncode == 0, command + "\n" + result.stderr
        shown = "epochs over this corpus" if " scan " in command else "400 steps × 8,192 tokens"
        assert shown in result.stdout, command + "\n" + result.stdout
    (toml,) = readme_blocks("toml")
    (in_tmp / "pyproject.toml").write_text(toml)
    (in_tmp / "train").mkdir()
    (in_tmp / "training_args.json").rename(in_tmp / "train" / "training_args.json")
    result = run_here(["vocabrisk", "scan", "sample_corpora/english-prose", "--format", "json"], in_tmp)
    expected = replace(TrainingPlan.from_training_arguments(args, seq_len=1024), trains="lora")
    assert json.loads(result.stdout)["risk"]["plan"] == expected.resolve(json.loads(result.stdout)["tokens"]).to_dict()


def test_an_epochs_plan_shorter_than_one_step_says_how_often_its_step_goes_over_the_corpus(saved, in_tmp):
    korean = saved["korean-notes.txt"]  # 17,716 tokens: one default step of 524,288 goes over it ~30 times
    short = json.loads(cli("gate", korean, "--max-risk", "1", "--epochs", "1e-7", "--format", "json").stdout)
    assert short["summary"]["risk"]["implied_epochs"] == pytest.approx(524_288 / 17_716)
    assert short["summary"]["forecast"]["epochs"] == pytest.approx(524_288 / 17_716)
    assert "the run's one step goes over it 30 times" in short["summary"]["warnings"][0]
    text = cli("scan", korean, "--epochs", "1e-7", "-q").stdout
    assert "1e-07 epochs = 1 step × 524,288 tokens (30 epochs over this corpus)" in text
    tiny = cli("gate", korean, "--max-risk", "1", "--steps", "1", "--tokens-per-step", "5").stdout
    assert "1 step × 5 tokens (0.00028 epochs over this corpus)" in tiny


@pytest.mark.parametrize("flag", ["--max-risk", "--max-forgetting", "--max-starved-share", "--max-skipped-share",
                                  "--lr", "--adam-eps", "--epochs"])  # fmt: skip
@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_non_finite_number_is_refused_at_the_flag(saved, in_tmp, flag, value):
    result = CliRunner().invoke(main, ["gate", saved["korean-notes.txt"], f"{flag}={value}", "--format", "json"])
    assert result.exit_code == 2 and f"'{value}' is not a finite number" in result.output
    assert json.loads(result.stdout)["error"]["message"].startswith(f"Invalid value for '{flag}'")


def test_a_configured_infinite_limit_is_refused(saved, in_tmp):
    (in_tmp / "vocabrisk.toml").write_text("[gate]\nmax-forgetting = inf\n")
    result = CliRunner().invoke(main, ["gate", saved["korean-notes.txt"]])
    assert result.exit_code == 2 and "max-forgetting = inf is not a number of nats" in result.output


def test_every_json_report_is_strict_json_even_with_a_non_finite_number(saved):
    from vocabrisk import Profile, Summary
    from vocabrisk.gate import Thresholds, evaluate
    from vocabrisk.report.ci import format_result

    result = evaluate(Summary.of(Profile.load(saved["korean-notes.txt"])), Thresholds(max_risk=1.0))
    broken = replace(result, checks=[replace(result.checks[0], value=math.nan), *result.checks[1:]])

    def strict(text: str) -> dict:
        return json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in JSON"))

    report = strict(format_result(broken, "json"))
    assert report["checks"][0]["value"] is None and report["non_finite"]["values"] == {"checks[0].value": "nan"}
    assert "JSON has no NaN" in report["non_finite"]["why"]
    sarif = strict(format_result(broken, "sarif"))
    assert sarif["runs"][0]["results"][0]["properties"]["value"] is None and "non_finite" in sarif
