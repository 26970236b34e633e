"""Data and base model for v1.py: real corpora split three ways, a tokenizer, a pretrained model.

Each corpus in ../shared/data is cut into chunks of about CHUNK_CHARS characters, shuffled
with a fixed seed and split into a pretraining share, an old-text share (held out from
pretraining, the reference that forgetting is measured on and the scan's prior comes from)
and a fine-tuning pool the candidate corpora are drawn from. The tokenizer (byte-level BPE)
and a small GPT-2 with an untied head are trained on the pretraining mix and cached, so
reruns skip straight to fine-tuning.

The later versions take its paths (`REPO`, `SHARED`), chunkers and `write_jsonl` (suite_v2.py, suite_v3.py,
suite_v4.py, score.py).
"""

from __future__ import annotations

import csv
import json
import math
import random
import re
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

from byte_level_bpe import EOT, train_tokenizer  # noqa: E402 - scripts/, put on the path above

SHARED = REPO.parent / "shared" / "data" / "corpora"
CACHE = REPO / "benchmarks" / ".cache" / "validity"
CHUNK_CHARS = 1500
SPLITS = {"pretrain": 0.55, "reference": 0.10, "finetune": 0.35}


@dataclass(frozen=True)
class BaseSpec:
    """The base model and its pretraining; the cache key is made of these fields."""

    vocab_size: int = 4096
    hidden: int = 128
    layers: int = 2
    heads: int = 4
    seq_len: int = 64
    batch_size: int = 16
    steps: int = 1500
    peak_lr: float = 3e-3
    warmup: int = 100
    seed: int = 0

    def key(self) -> str:
        return "base-" + "-".join(str(v) for v in asdict(self).values())


def _paragraph_chunks(text: str) -> list[str]:
    """Consecutive paragraphs joined until a chunk reaches CHUNK_CHARS."""
    chunks, current = [], ""
    for paragraph in re.split(r"\n\s*\n", text):
        if not paragraph.strip():
            continue
        current = f"{current}\n\n{paragraph}" if current else paragraph
        if len(current) >= CHUNK_CHARS:
            chunks.append(current)
            current = ""
    return [*chunks, current] if current else chunks


def _line_chunks(lines: list[str]) -> list[str]:
    chunks, current = [], []
    for line in lines:
        current.append(line)
        if sum(len(x) + 1 for x in current) >= CHUNK_CHARS:
            chunks.append("\n".join(current))
            current = []
    return [*chunks, "\n".join(current)] if current else chunks


def raw_corpora() -> dict[str, list[str]]:
    """Every shared corpus as a list of chunks (documents)."""
    with (SHARED / "ko-chatbot" / "ChatbotData.csv").open(encoding="utf-8", newline="") as fh:
        korean = [f"{row['Q']}\n{row['A']}" for row in csv.DictReader(fh)]
    wiki = "".join((SHARED / "en-wikitext2" / name).read_text(encoding="utf-8") for name in ("valid.txt", "test.txt"))
    return {
        "en-shakespeare": _paragraph_chunks((SHARED / "en-shakespeare" / "input.txt").read_text(encoding="utf-8")),
        "en-wikitext": _paragraph_chunks(wiki.replace(" \n \n", "\n\n")),
        "de-grimm": _paragraph_chunks((SHARED / "de-grimm" / "de-grimm.txt").read_text(encoding="utf-8")),
        "ko-chatbot": _line_chunks(korean),
        "code-lua": _paragraph_chunks((SHARED / "code-lua" / "lua_src_c.txt").read_text(encoding="utf-8")),
    }


def split_corpora(corpora: dict[str, list[str]], seed: int = 0) -> dict[str, dict[str, list[str]]]:
    """{corpus: {split: chunks}}, the same on every run."""
    result = {}
    for name, chunks in corpora.items():
        shuffled = chunks[:]
        random.Random(f"{seed}-{name}").shuffle(shuffled)
        first = round(len(shuffled) * SPLITS["pretrain"])
        second = first + round(len(shuffled) * SPLITS["reference"])
        result[name] = {
            "pretrain": shuffled[:first],
            "reference": shuffled[first:second],
            "finetune": shuffled[second:],
        }
    return result


def write_jsonl(path: Path, texts: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for text in texts:
            fh.write(json.dumps({"text": text}, ensure_ascii=False) + "\n")
    return path


def read_jsonl(path: Path) -> list[str]:
    """The texts `write_jsonl` wrote, in order."""
    return [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines()]


def gpt2_config(spec: BaseSpec):
    """The benchmark GPT-2's architecture: untied head, no dropout."""
    from transformers import GPT2Config

    return GPT2Config(
        vocab_size=spec.vocab_size,
        n_positions=spec.seq_len,
        n_embd=spec.hidden,
        n_layer=spec.layers,
        n_head=spec.heads,
        tie_word_embeddings=False,
        bos_token_id=0,
        eos_token_id=0,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )


def pretrain(spec: BaseSpec, stream, log, device: str = "cpu") -> object:
    """A small GPT-2 with an untied head, AdamW with warmup and cosine decay on random windows."""
    import torch
    from transformers import GPT2LMHeadModel

    torch.manual_seed(spec.seed)
    model = GPT2LMHeadModel(gpt2_config(spec)).to(device)
    stream = stream.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=spec.peak_lr, betas=(0.9, 0.95), weight_decay=0.01)
    generator = torch.Generator().manual_seed(spec.seed)
    offsets = torch.arange(spec.seq_len)
    model.train()
    for step in range(spec.steps):
        warm = (step + 1) / spec.warmup
        progress = max(0.0, (step - spec.warmup) / max(1, spec.steps - spec.warmup))
        lr = spec.peak_lr * min(warm, 0.1 + 0.45 * (1 + math.cos(math.pi * progress)))
        for group in optimizer.param_groups:
            group["lr"] = lr
        starts = torch.randint(0, len(stream) - spec.seq_len, (spec.batch_size, 1), generator=generator)
        batch = stream[(starts + offsets).to(device)]
        loss = model(input_ids=batch, labels=batch).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step % 250 == 0 or step == spec.steps - 1:
            log(f"  pretrain step {step:>5}  loss {loss.item():.3f}")
    return model


def base_model(spec: BaseSpec, log) -> tuple[Path, dict]:
    """The cached base model folder (tokenizer.json, config, safetensors) and the data splits."""
    import numpy as np
    import torch

    splits = split_corpora(raw_corpora())
    folder = CACHE / spec.key()
    if (folder / "model.safetensors").exists():
        return folder, splits
    started = time.monotonic()
    mix = [chunk for parts in splits.values() for chunk in parts["pretrain"]]
    tokenizer = train_tokenizer(mix, spec.vocab_size)
    ids = [np.append(e.ids, 0) for e in tokenizer.encode_batch(mix)]
    random.Random(spec.seed).shuffle(ids)
    stream = torch.from_numpy(np.concatenate(ids).astype(np.int64))
    log(f"pretraining on {len(mix)} documents, {len(stream):,} tokens")
    model = pretrain(spec, stream, log)
    staging = folder.with_name(folder.name + ".partial")
    staging.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(staging / "tokenizer.json"))
    (staging / "tokenizer_config.json").write_text(json.dumps({"eos_token": EOT, "bos_token": EOT}) + "\n")
    model.save_pretrained(staging)
    (staging / "BUILD.json").write_text(
        json.dumps({**asdict(spec), "tokens": len(stream), "seconds": round(time.monotonic() - started)}) + "\n"
    )
    staging.rename(folder)
    return folder, splits
