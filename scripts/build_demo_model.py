"""Build vocabrisk's built-in demo model into vocabrisk/demo_model/.

A byte-level BPE tokenizer and a tiny GPT-2 with an untied lm_head, both trained on CPU
from the generated pretraining mix of make_sample_corpora.py, so `--model demo` works
offline and its forgetting risk can be checked against the shipped sample corpora.

    /work/demo-venv/bin/python scripts/build_demo_model.py [--force]

Needs torch, transformers, tokenizers and safetensors; nothing is downloaded.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import make_sample_corpora as corpora
import tokenizers
import torch
import transformers
from byte_level_bpe import EOT, train_tokenizer
from safetensors import safe_open
from tokenizers import Tokenizer
from transformers import AutoModelForCausalLM, AutoTokenizer, GPT2Config, GPT2LMHeadModel

OUT_DIR = corpora.REPO_ROOT / "vocabrisk" / "demo_model"
REFERENCE_NAME = "reference.txt.gz"
VOCAB_SIZE = 4096
N_POSITIONS = 256

SEED = 0
PRETRAIN_SEED = 20260
PRETRAIN_BYTES = 3_000_000
BATCH_SIZE = 16
SEQ_LEN = 128
STEPS = 800
PEAK_LR = 3e-3
WARMUP_STEPS = 100
MIN_LR_RATIO = 0.1
WEIGHT_DECAY = 0.01
FINAL_LOSS_WINDOW = 50


def save_tokenizer(tokenizer: Tokenizer, folder: Path) -> None:
    """tokenizer.json plus the two small files transformers' AutoTokenizer reads."""
    tokenizer.save(str(folder / "tokenizer.json"))
    config = {
        "tokenizer_class": "GPT2TokenizerFast",
        "bos_token": EOT,
        "eos_token": EOT,
        "unk_token": EOT,
        "add_prefix_space": False,
        "clean_up_tokenization_spaces": False,
        "model_max_length": N_POSITIONS,
    }
    special = {"bos_token": EOT, "eos_token": EOT, "unk_token": EOT}
    _write_json(folder / "tokenizer_config.json", config)
    _write_json(folder / "special_tokens_map.json", special)


def token_stream(tokenizer: Tokenizer, documents: list[str]) -> torch.Tensor:
    """All documents as one id sequence, each followed by `<|endoftext|>`."""
    ids: list[int] = []
    for encoding in tokenizer.encode_batch(documents):
        ids.extend(encoding.ids)
        ids.append(0)
    return torch.tensor(ids, dtype=torch.long)


def build_model() -> GPT2LMHeadModel:
    """The fixed demo architecture; dropout is off because this model underfits anyway."""
    config = GPT2Config(
        vocab_size=VOCAB_SIZE,
        n_positions=N_POSITIONS,
        n_embd=128,
        n_layer=2,
        n_head=4,
        tie_word_embeddings=False,
        bos_token_id=0,
        eos_token_id=0,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )
    torch.manual_seed(SEED)
    return GPT2LMHeadModel(config)


def learning_rate(step: int, steps: int) -> float:
    """Linear warmup, then cosine decay to MIN_LR_RATIO of the peak."""
    if step < WARMUP_STEPS:
        return PEAK_LR * (step + 1) / WARMUP_STEPS
    progress = (step - WARMUP_STEPS) / max(1, steps - WARMUP_STEPS)
    return PEAK_LR * (MIN_LR_RATIO + (1 - MIN_LR_RATIO) * 0.5 * (1 + math.cos(math.pi * progress)))


def train(model: GPT2LMHeadModel, stream: torch.Tensor, steps: int) -> list[float]:
    """AdamW on random windows of the stream; returns the loss of every step."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=PEAK_LR, betas=(0.9, 0.95), weight_decay=WEIGHT_DECAY)
    windows = torch.Generator().manual_seed(SEED)
    offsets = torch.arange(SEQ_LEN)
    losses = []
    model.train()
    for step in range(steps):
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, steps)
        starts = torch.randint(0, len(stream) - SEQ_LEN, (BATCH_SIZE, 1), generator=windows)
        batch = stream[starts + offsets]
        loss = model(input_ids=batch, labels=batch).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
        if step % 100 == 0 or step == steps - 1:
            print(f"step {step:>5}  loss {losses[-1]:.4f}  lr {learning_rate(step, steps):.2e}", flush=True)
    return losses


@torch.no_grad()
def heldout_loss(model: GPT2LMHeadModel, stream: torch.Tensor) -> float:
    """Mean next-token loss over non-overlapping SEQ_LEN windows of the reference text."""
    model.eval()
    usable = len(stream) // SEQ_LEN * SEQ_LEN
    windows = stream[:usable].view(-1, SEQ_LEN)
    total = 0.0
    for batch in windows.split(BATCH_SIZE):
        # .loss is a mean over batch * (SEQ_LEN - 1) predictions; weight by window count.
        total += model(input_ids=batch, labels=batch).loss.item() * len(batch)
    return total / len(windows)


def check_saved_model(folder: Path, tokenizer: Tokenizer, reference: torch.Tensor, expected: float) -> None:
    """Reload what was written, as vocabrisk will, and fail loudly if anything is off."""
    with safe_open(str(folder / "model.safetensors"), framework="pt") as weights:
        names = set(weights.keys())
        if not {"lm_head.weight", "transformer.wte.weight"} <= names:
            raise RuntimeError(f"model.safetensors lacks a separate lm_head: {sorted(names)}")
        if torch.equal(weights.get_tensor("lm_head.weight"), weights.get_tensor("transformer.wte.weight")):
            raise RuntimeError("lm_head.weight equals transformer.wte.weight: the head is tied")
    fast = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    sample = corpora.reference_text()[:600]
    if fast(sample)["input_ids"] != tokenizer.encode(sample).ids:
        raise RuntimeError("AutoTokenizer and tokenizer.json disagree on the reference sample")
    reloaded = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True)
    if not math.isclose(heldout_loss(reloaded, reference), expected, rel_tol=1e-5):
        raise RuntimeError("the reloaded model's held-out loss differs from the trained one")


def _write_json(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_build_record(folder: Path, steps: int, losses: list[float], heldout: float, tokens: int) -> None:
    """BUILD.json: how the folder was made and the checksum of every other file in it."""
    record = {
        "seed": SEED,
        "pretraining": {"seed": PRETRAIN_SEED, "bytes": PRETRAIN_BYTES, "tokens": tokens},
        "tokenizer": {"type": "byte-level BPE", "vocab_size": VOCAB_SIZE, "special_tokens": {EOT: 0}},
        "training": {
            "steps": steps,
            "batch_size": BATCH_SIZE,
            "seq_len": SEQ_LEN,
            "optimizer": f"AdamW(betas=(0.9, 0.95), weight_decay={WEIGHT_DECAY}), grad clip 1.0",
            "schedule": f"linear warmup {WARMUP_STEPS} steps, cosine from {PEAK_LR} to {PEAK_LR * MIN_LR_RATIO:g}",
            "torch_threads": torch.get_num_threads(),
            "first_train_loss": round(losses[0], 4),
            "final_train_loss": round(sum(losses[-FINAL_LOSS_WINDOW:]) / len(losses[-FINAL_LOSS_WINDOW:]), 4),
            "final_train_loss_is": f"mean over the last {FINAL_LOSS_WINDOW} steps",
        },
        "heldout_loss_reference": round(heldout, 4),
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "tokenizers": tokenizers.__version__,
        },
        "files": {path.name: _sha256(path) for path in sorted(folder.iterdir())},
    }
    _write_json(folder / "BUILD.json", record)


def build(folder: Path, steps: int) -> None:
    """Everything the demo folder holds, written into `folder`."""
    started = time.monotonic()
    corpora.write_reference(folder / REFERENCE_NAME)
    documents = corpora.pretraining_documents(PRETRAIN_SEED, PRETRAIN_BYTES)
    tokenizer = train_tokenizer(documents, VOCAB_SIZE)
    save_tokenizer(tokenizer, folder)
    stream = token_stream(tokenizer, documents)
    reference = torch.tensor(tokenizer.encode(corpora.reference_text()).ids, dtype=torch.long)
    print(f"{len(documents)} documents, {len(stream)} tokens; tokenizer in {time.monotonic() - started:.0f}s")
    model = build_model()
    losses = train(model, stream, steps)
    heldout = heldout_loss(model, reference)
    model.save_pretrained(folder)
    check_saved_model(folder, tokenizer, reference, heldout)
    write_build_record(folder, steps, losses, heldout, len(stream))
    print(f"held-out loss {heldout:.4f}; built in {time.monotonic() - started:.0f}s")


def blocking_files(out: Path) -> list[str]:
    """Files in `out` that a build would replace with different content."""
    if not out.exists():
        return []
    expected_reference = corpora.gzip_bytes(corpora.reference_text().encode("utf-8"))
    return sorted(
        path.name
        for path in out.iterdir()
        if not (path.name == REFERENCE_NAME and path.read_bytes() == expected_reference)
    )


def replace_folder(new: Path, out: Path) -> None:
    """Swap `new` into place with renames, so `out` is never half-written."""
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}-old-", dir=out.parent))
    if out.exists():
        out.rename(old / out.name)
    new.rename(out)
    shutil.rmtree(old)


def configure_libraries() -> None:
    """Same bits on every run on one machine: one thread, deterministic kernels, quiet logs."""
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(SEED)
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--force", action="store_true", help="replace an existing demo model")
    args = parser.parse_args()
    out = args.out.resolve()
    blocking = blocking_files(out)
    if blocking and not args.force:
        print(f"{out} already holds {', '.join(blocking)}; pass --force to replace it.", file=sys.stderr)
        return 1
    configure_libraries()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-new-", dir=out.parent))
    staging.chmod(0o755)  # mkdtemp's 0700 would otherwise become the shipped folder's mode
    try:
        build(staging, args.steps)
        replace_folder(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    for path in sorted(out.iterdir()):
        print(f"{path.stat().st_size:>9}  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
