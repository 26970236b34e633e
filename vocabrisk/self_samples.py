"""A prior from text the base model writes itself, for when none of its training data is at hand.

Ancestral sampling (temperature 1, nothing cut; EOS sampled like any token, as documents follow
one another in packed pretraining) draws from the model's own distribution, so the token counts
of its samples estimate how much it relies on each token. The sampler is the one `vocabrisk
verify` uses for old text when none is given; its ids are counted directly, with no decode and
re-encode. Counts are cached per model and settings
under `$VOCABRISK_CACHE` (default `~/.cache/vocabrisk`), since sampling a large model is the
slow part. Needs torch and transformers (`pip install 'vocabrisk[verify]'`).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vocabrisk.errors import ModelError
from vocabrisk.model.resolve import ModelFiles
from vocabrisk.outputs import atomic_file


@dataclass(frozen=True)
class SamplingPlan:
    samples: int = 48
    length: int = 256
    batch_size: int = 16
    seed: int = 0
    device: str = "cpu"

    def key(self) -> str:
        return f"n{self.samples}-len{self.length}-seed{self.seed}"


def cache_dir() -> Path:
    return Path(os.environ.get("VOCABRISK_CACHE") or Path.home() / ".cache" / "vocabrisk")


def _model_key(files: ModelFiles) -> str:
    """Identify a checkpoint by its config and weight-file names and sizes (hashing GBs is too slow)."""
    digest = hashlib.sha256()
    for path in sorted(files.folder.glob("*.json")) + sorted(files.folder.glob("*.safetensors")):
        digest.update(f"{path.name}:{path.stat().st_size}".encode())
        if path.suffix == ".json":
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def self_sample_counts(files: ModelFiles, vocab_size: int, start_id: int, plan: SamplingPlan) -> np.ndarray:
    """Token counts of `plan.samples` sequences the model generates from `start_id`, cached."""
    cached = cache_dir() / "self-samples" / _model_key(files) / f"{plan.key()}.npy"
    if cached.exists():
        counts = np.load(cached)
        if counts.shape == (vocab_size,):
            return counts
    counts = _generate_counts(files, vocab_size, start_id, plan)
    with atomic_file(cached) as file:
        np.save(file, counts)
    return counts


def _generate_counts(files: ModelFiles, vocab_size: int, start_id: int, plan: SamplingPlan) -> np.ndarray:
    try:
        from transformers import AutoModelForCausalLM

        from vocabrisk.verify.data import self_generated
    except ImportError as exc:
        raise ModelError(
            "a prior from self-generated samples needs torch and transformers",
            hint="pip install 'vocabrisk[verify]', or use --reference or the data-free prior",
        ) from exc
    folder, options = files.pretrained()
    model = AutoModelForCausalLM.from_pretrained(folder, torch_dtype="auto", **options).to(plan.device)
    counts = np.zeros(vocab_size, dtype=np.int64)
    for first in range(0, plan.samples, plan.batch_size):
        batch = min(plan.batch_size, plan.samples - first)
        ids = self_generated(model, start_id, batch, plan.length, plan.seed + first, plan.device)
        ids = ids[:, 1:].reshape(-1).numpy()  # the start token was given, not sampled
        counts += np.bincount(ids[ids < vocab_size], minlength=vocab_size)
    return counts
