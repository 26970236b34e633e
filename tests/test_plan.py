"""The training plan: its length in steps or epochs, its schedule, and reading it from TrainingArguments."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from vocabrisk.plan import LR_SCHEDULES, PlanError, TrainingPlan, resolve_plan

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
    assert plan.steps_for(10_500) == 25  # 10 whole batches an epoch, as the Trainer counts them
    resolved = plan.resolve(10_500)
    assert (resolved.steps, resolved.epochs) == (25, 2.5)
    assert resolved.resolve(40_000).steps == 100  # a resolved plan re-resolves for another corpus
    assert plan.implied_epochs(10_500) == pytest.approx(25_000 / 10_500)
    assert plan.steps_for(10) == 3  # a corpus smaller than one step is still one batch an epoch
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
    assert 0.0 <= plan.mean_lr <= lr


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
