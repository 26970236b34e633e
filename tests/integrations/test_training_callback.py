"""The training callback and monitor: starved-row drift measured and logged in real runs.

A short Hugging Face Trainer run and a plain PyTorch loop fine-tune the demo model on the
Korean sample (whose tokens the English demo model's head mostly lacks), on the CPU.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("accelerate")

import vocabrisk  # noqa: E402
from vocabrisk import TrainingPlan, scan  # noqa: E402
from vocabrisk.counting import SpecialTokenPolicy, TokenCounter  # noqa: E402
from vocabrisk.integrations import HeadDriftMonitor, HeadDriftWarning, VocabriskCallback, watch  # noqa: E402
from vocabrisk.model.resolve import DEMO_MODEL_DIR  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
KOREAN = REPO / "sample_corpora" / "korean-notes.txt"
SEQUENCE = 64
PLAN = TrainingPlan(tokens_per_step=8 * SEQUENCE, steps=12)
KEYS = {"vocabrisk/starved_drift", "vocabrisk/fed_drift", "vocabrisk/starved_to_fed", "vocabrisk/prediction_spearman"}


@pytest.fixture(scope="module")
def profile():
    return scan([str(KOREAN)], "demo")


@pytest.fixture(scope="module")
def windows() -> torch.Tensor:
    counter = TokenCounter(DEMO_MODEL_DIR / "tokenizer.json", 4096, SpecialTokenPolicy(), 0)
    ids = [i for text in KOREAN.read_text(encoding="utf-8").split("\n\n") for i in counter.encode([text])[0]]
    usable = len(ids) // SEQUENCE * SEQUENCE
    return torch.tensor(ids[:usable]).view(-1, SEQUENCE)


def demo_model(**config):
    torch.manual_seed(0)
    return transformers.AutoModelForCausalLM.from_pretrained(DEMO_MODEL_DIR, **config)


class Windows(torch.utils.data.Dataset):
    def __init__(self, windows):
        self.windows = windows

    def __len__(self):
        return len(self.windows)

    def __getitem__(self, i):
        return {"input_ids": self.windows[i], "labels": self.windows[i]}


class Recorder(transformers.TrainerCallback):
    """Stands in for a report_to logger: what on_log hands to the loggers."""

    def __init__(self):
        self.logs = []

    def on_log(self, args, state, control, logs=None, **kwargs):
        self.logs.append(dict(logs))


def trainer_for(model, windows, tmp_path, **args):
    options = dict(
        output_dir=str(tmp_path),
        max_steps=12,
        per_device_train_batch_size=8,
        learning_rate=1e-3,
        logging_steps=1000,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        disable_tqdm=True,
    )
    return transformers.Trainer(
        model=model, args=transformers.TrainingArguments(**(options | args)), train_dataset=Windows(windows)
    )


def test_trainer_run_logs_starved_row_drift_through_the_trainers_loggers(profile, windows, tmp_path):
    trainer = trainer_for(demo_model(), windows, tmp_path)
    recorder = Recorder()
    trainer.add_callback(recorder)  # a logger added before training, as report_to's are
    with pytest.warns(HeadDriftWarning, match=r"head_eps=\d") as warned:
        callback = watch(trainer, profile, plan=PLAN, every=4, threshold=0.001)
        trainer.train()
    assert len(warned) == 1  # once, however many measurements pass the threshold
    logged = [logs for logs in recorder.logs if set(logs) >= KEYS]
    history = [entry for entry in trainer.state.log_history if set(entry) >= KEYS]
    assert [entry["step"] for entry in history] == [4, 8, 12] == [h["step"] for h in callback.monitor.history]
    assert len(logged) == 3 and "loss" in logged[0]
    drift = [entry["vocabrisk/starved_drift"] for entry in history]
    assert 0 < drift[0] < drift[1] < drift[2]  # the starved rows keep walking away
    assert all(entry["vocabrisk/fed_drift"] > 0 for entry in history)
    assert callback.monitor.starved_rows > 100 and callback.monitor.fed_rows > 100
    assert np.isfinite(history[-1]["vocabrisk/prediction_spearman"])


def test_callback_in_the_callbacks_list_still_reaches_the_log_history(profile, windows, tmp_path):
    trainer = trainer_for(demo_model(), windows, tmp_path, max_steps=4)
    trainer.add_callback(VocabriskCallback(profile, plan=PLAN, every=2, threshold=10.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", HeadDriftWarning)  # under the threshold: no warning
        trainer.train()
    assert [e["step"] for e in trainer.state.log_history if set(e) >= KEYS] == [2, 4]


def test_plain_pytorch_loop_with_a_tied_bf16_head(profile, windows):
    model = demo_model()
    model.lm_head.weight = model.transformer.wte.weight  # the demo's head is untied: tie it as GPT-2's is
    model = model.to(torch.bfloat16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    monitor = HeadDriftMonitor(model, profile, plan=PLAN, every=3, threshold=1.0)
    assert monitor.tied and monitor.measure()["vocabrisk/starved_drift"] == 0.0
    for step in range(1, 7):
        batch = windows[(step - 1) * 8 : step * 8]
        model(input_ids=batch, labels=batch).loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        metrics = monitor.step(step)
        assert (metrics is not None) == (step % 3 == 0)
    assert [h["step"] for h in monitor.history] == [3, 6]
    assert monitor.history[-1]["vocabrisk/starved_drift"] > 0 and not monitor.warned


def test_lora_with_a_trained_lm_head_is_watched_through_peft(profile, windows, tmp_path):
    peft = pytest.importorskip("peft")
    for config in (
        peft.LoraConfig(r=4, target_modules=["c_attn"], modules_to_save=["lm_head"], task_type="CAUSAL_LM"),
        peft.LoraConfig(r=4, target_modules=["c_attn", "lm_head"], task_type="CAUSAL_LM"),
    ):
        model = peft.get_peft_model(demo_model(), config)
        trainer = trainer_for(model, windows, tmp_path, max_steps=4)
        callback = watch(trainer, profile, plan=PLAN, every=2, threshold=10.0)
        trainer.train()
        assert [h["step"] for h in callback.monitor.history] == [2, 4]
        assert callback.monitor.history[-1]["vocabrisk/starved_drift"] > 0, config.target_modules


def test_readme_example_watches_a_trainer_run(readme_example, windows, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    trainer = trainer_for(demo_model(), windows, tmp_path, max_steps=50, per_device_train_batch_size=2)
    example = readme_example("### Watching the starved rows in your own training run")
    with pytest.warns(HeadDriftWarning, match="by step 50"):  # 50 steps at lr 1e-3 move the starved rows
        exec(example, {"trainer": trainer, "vocabrisk": vocabrisk})
    assert [e["step"] for e in trainer.state.log_history if set(e) >= KEYS] == [50]
