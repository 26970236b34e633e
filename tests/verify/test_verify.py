"""`vocabrisk verify`: a tiny real fine-tune of the demo model, measured and held against the scan."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from click.testing import CliRunner  # noqa: E402

from vocabrisk.cli.commands import main  # noqa: E402
from vocabrisk.risk.plan import TrainingPlan  # noqa: E402
from vocabrisk.verify.metrics import top_share  # noqa: E402
from vocabrisk.verify.run import TrainConfig, VerifyConfig, load_causal_lm, verify  # noqa: E402
from vocabrisk.verify.train import finetune  # noqa: E402

SAMPLES = Path(__file__).resolve().parents[2] / "sample_corpora"
KOREAN = str(SAMPLES / "korean-notes.txt")
TINY = TrainConfig(TrainingPlan(steps=40, learning_rate=2e-3, tokens_per_step=512, warmup_steps=5), seq_len=64)
FAST = {"--steps": "4", "--tokens-per-step": "128", "--seq-len": "32", "--eval-windows": "4"}


@pytest.fixture(scope="module")
def korean():
    torch.set_num_threads(2)
    return verify([KOREAN], "demo", VerifyConfig(train=TINY, compare_eps=True, eval_windows=8))


def test_measurements_are_finite_and_consistent(korean):
    report = korean.report
    plain = report["runs"]["plain"]
    for key in ("forgetting", "learning", "forgetting_head_restored", "forgetting_head_only"):
        assert math.isfinite(plain[key])
    assert plain["forgetting"] > 0, "a Korean-only run forgets the demo's English-heavy old text"
    assert plain["learning"] > 0, "and learns the held-out Korean"
    assert report["data"]["old_text"].endswith("reference.txt.gz")
    assert report["prediction"]["band"] == "high"
    assert len(korean.losses["plain"]) == TINY.steps
    json.dumps(report)


def test_restoring_the_head_takes_back_what_the_head_caused(korean):
    plain = korean.report["runs"]["plain"]
    assert plain["forgetting_head_only"] > 0
    assert plain["forgetting_head_restored"] < plain["forgetting"]
    starved = plain["edits"]["starved_rows"]
    assert starved["rows"] == korean.report["prediction"]["starved_rows"]
    assert starved["forgetting"] < plain["forgetting"]


def test_starved_rows_drift_more_than_fed_rows_and_the_scan_named_them(korean):
    rows = korean.rows
    assert np.median(rows["drift"][rows["never_seen"]]) > np.median(rows["drift"][~rows["never_seen"]])
    top = top_share(rows["drift"], 0.1)
    assert rows["starved"][top].mean() > 0.9, "the rows that drifted most are rows the scan called starved"
    agreement = korean.report["agreement"]
    assert agreement["auroc_top"] > 0.5 and agreement["spearman"] > 0
    # exposure ties every never-seen row, so its top k is a random pick among them: barely above the
    # base rate, though nine in ten of the rows that drift most are rows it called starved
    assert agreement["precision_at_k"] > agreement["top_share"]


def test_the_head_eps_run_differs_in_the_head_eps_alone_and_moves_starved_rows_less(korean):
    runs = korean.report["runs"]
    recommended = korean.report["recommended_head_eps"]
    assert runs["head_eps"]["head_eps"] == recommended["value"] > runs["plain"]["head_eps"]
    assert recommended["starved_gradient"] < recommended["fed_gradient"]
    assert runs["head_eps"]["forgetting_head_only"] < runs["plain"]["forgetting_head_only"]
    assert set(runs["head_eps"]["vs_plain"]) == {"forgetting_removed", "learning_kept"}


def test_with_lr_zero_nothing_drifts_and_nothing_is_forgotten():
    config = VerifyConfig(
        train=TrainConfig(TrainingPlan(steps=3, learning_rate=0.0, tokens_per_step=128), seq_len=32), eval_windows=4
    )
    result = verify([KOREAN], "demo", config)
    plain = result.report["runs"]["plain"]
    assert np.all(result.rows["drift"] == 0)
    assert plain["forgetting"] == 0 and plain["learning"] == 0
    assert plain["forgetting_head_only"] == 0 and plain["forgetting_head_restored"] == 0


def test_without_old_text_the_base_model_samples_its_own(tmp_path):
    """A model folder with no bundled sample and no --reference: forgetting is measured on self-generated text."""
    from vocabrisk.model.resolve import DEMO_MODEL_DIR

    folder = tmp_path / "tiny"
    config = transformers.GPT2Config(vocab_size=4096, n_embd=16, n_layer=1, n_head=2, n_positions=64,
                                     bos_token_id=0, eos_token_id=0, tie_word_embeddings=True)  # fmt: skip
    torch.manual_seed(0)
    transformers.GPT2LMHeadModel(config).save_pretrained(folder)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (folder / name).write_bytes((DEMO_MODEL_DIR / name).read_bytes())
    config = VerifyConfig(train=TrainConfig(TrainingPlan(steps=3, tokens_per_step=128), seq_len=32), eval_windows=4)
    result = verify([KOREAN], str(folder), config)
    assert result.report["data"]["old_text"].startswith("self-generated: 4 samples")
    assert result.report["head"]["tied"] is True
    assert result.report["prediction"]["prior"].startswith("reference: self-generated.txt")


def test_cli_verify_writes_json_and_a_plot(tmp_path):
    plot = tmp_path / "verify.png"
    args = ["verify", KOREAN, "--model", "demo", "--compare-eps", "--head-eps", "1e-4", "--format", "json"]
    args += [x for pair in FAST.items() for x in pair] + ["--plot", str(plot)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["runs"]["head_eps"]["head_eps"] == 1e-4
    assert plot.stat().st_size > 10_000


def test_cli_verify_renders_the_terminal_report_and_refuses_bf16_on_cpu():
    args = ["verify", KOREAN, "--model", "demo", *[x for pair in FAST.items() for x in pair]]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "Measured" in result.stdout and "per-row" in result.stdout
    refused = CliRunner().invoke(main, [*args, "--bf16"])
    assert refused.exit_code == 2 and "GPU" in refused.output


@pytest.mark.parametrize("schedule", ["constant", "linear", "cosine"])
def test_verify_trains_on_the_plan_it_forecasts_step_by_step(schedule, monkeypatch):
    """One plan, one warm-up rule: each optimizer step runs at the learning rate the forecast reads (`lr_at`),
    with the plan's betas, eps and weight decay."""
    from vocabrisk.model.loaded import load_model

    plan = TrainingPlan(steps=7, learning_rate=1e-3, tokens_per_step=64, warmup_steps=3, lr_schedule=schedule,
                        beta1=0.8, beta2=0.95, eps=1e-6, weight_decay=0.01)  # fmt: skip
    config = TrainConfig(plan, seq_len=32)
    seen = []
    step = torch.optim.AdamW.step

    def recording(optimizer, *args, **kwargs):
        seen.append([(g["lr"], g["betas"], g["eps"], g["weight_decay"]) for g in optimizer.param_groups])
        return step(optimizer, *args, **kwargs)

    monkeypatch.setattr(torch.optim.AdamW, "step", recording)
    model = load_causal_lm(load_model("demo"), "cpu")
    finetune(model, torch.randint(0, 100, (4096,)), config)
    assert config.plan is plan and len(seen) == plan.steps
    for index, groups in enumerate(seen):
        assert [lr for lr, *_ in groups] == pytest.approx([float(plan.lr_at(index))] * len(groups))
        assert {(betas, eps) for _, betas, eps, _ in groups} == {((0.8, 0.95), 1e-6)}
        assert {wd for *_, wd in groups} <= {0.0, 0.01}  # no decay on norms and biases, as transformers does


def test_a_plan_of_part_windows_trains_and_forecasts_whole_ones():
    config = TrainConfig(TrainingPlan(steps=2, tokens_per_step=1000), seq_len=128)
    assert (config.batch_size, config.plan.tokens_per_step) == (7, 896)


def test_measuring_along_a_run_does_not_change_it():
    """`after_step` sees every step once, may evaluate the model, and leaves the run as it would have been:
    the benchmark's curves (forgetting at several steps of one run) measure the run that ends at the last."""
    from vocabrisk.model.loaded import load_model
    from vocabrisk.verify.measure import final_hidden

    config = TrainConfig(TrainingPlan(steps=4, learning_rate=1e-3, tokens_per_step=64, warmup_steps=1), seq_len=32)
    stream, probe = torch.randint(0, 100, (4096,)), torch.randint(0, 100, (2, 32))
    plain = load_causal_lm(load_model("demo"), "cpu")
    measured = load_causal_lm(load_model("demo"), "cpu")
    seen = []

    def along(done: int) -> None:
        seen.append((done, measured.training))
        final_hidden(measured, probe, "cpu")  # puts the model in eval mode, as the benchmark's measurement does

    first = finetune(plain, stream, config)
    second = finetune(measured, stream, config, after_step=along)
    assert seen == [(1, True), (2, True), (3, True), (4, True)]
    assert second.losses == first.losses
    for a, b in zip(plain.parameters(), measured.parameters(), strict=True):
        assert torch.equal(a, b)
