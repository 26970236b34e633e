"""A prior from text the base model writes itself, for when none of its training data is at hand.

Ancestral sampling (temperature 1, nothing cut; EOS sampled like any token, as documents follow
one another in packed pretraining) draws from the model's own distribution, so the token counts
of its samples estimate how much it relies on each token. `self_generated` is also the sampler
`vocabrisk verify` uses for old text when none is given; here its ids are counted directly,
with no decode and re-encode. Counts are cached per model and settings under
`$XDG_CACHE_HOME/vocabrisk` (default `~/.cache/vocabrisk`), since sampling a large model is the slow
part. Needs torch and transformers (`pip install 'vocabrisk[verify]'`), imported only to sample.
"""

from __future__ import annotations

import hashlib
import inspect
from dataclasses import dataclass

import numpy as np

from vocabrisk.errors import require
from vocabrisk.model.identity import weights_key
from vocabrisk.model.resolve import ModelFiles
from vocabrisk.storage.cache import cache_folder
from vocabrisk.storage.outputs import atomic_file


@dataclass(frozen=True)
class SamplingPlan:
    samples: int = 48
    length: int = 256
    batch_size: int = 16
    seed: int = 0
    device: str = "cpu"

    def key(self) -> str:
        return f"n{self.samples}-len{self.length}-seed{self.seed}"


def _model_key(files: ModelFiles) -> str:
    """Identify a checkpoint by its config and tokenizer files' bytes and its weights (`weights_key`)."""
    digest = hashlib.sha256(weights_key(files).encode())
    for path in sorted(files.folder.glob("*.json")):
        digest.update(f"{path.name}:".encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def self_sample_counts(files: ModelFiles, vocab_size: int, start_id: int, plan: SamplingPlan) -> np.ndarray:
    """Token counts of `plan.samples` sequences the model generates from `start_id`, cached."""
    cached = cache_folder() / "self-samples" / _model_key(files) / f"{plan.key()}.npy"
    if cached.exists():
        counts = np.load(cached)
        if counts.shape == (vocab_size,):
            return counts
    counts = _generate_counts(files, vocab_size, start_id, plan)
    with atomic_file(cached) as file:
        np.save(file, counts)
    return counts


def _generate_counts(files: ModelFiles, vocab_size: int, start_id: int, plan: SamplingPlan) -> np.ndarray:
    transformers = require("transformers", "verify", "a prior from self-generated samples",
                           otherwise="use --reference or the data-free prior")  # fmt: skip
    folder, options = files.pretrained()
    model = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype="auto", **options).to(plan.device)
    counts = np.zeros(vocab_size, dtype=np.int64)
    for first in range(0, plan.samples, plan.batch_size):
        batch = min(plan.batch_size, plan.samples - first)
        ids = self_generated(model, start_id, batch, plan.length, plan.seed + first, plan.device)
        ids = ids[:, 1:].reshape(-1).numpy()  # the start token was given, not sampled
        counts += np.bincount(ids[ids < vocab_size], minlength=vocab_size)
    return counts


def self_generated(model, start_id: int, count: int, seq_len: int, seed: int, device: str):
    """Samples of the base model's own distribution (temperature 1, nothing cut), shape (count, seq_len).

    With no old data at all these stand in for it: their loss after training measures what the
    model lost of what it used to produce. EOS is sampled like any token (documents follow
    one another as in packed pretraining), which `generate` would treat as a stop.
    """
    import torch

    generator = torch.Generator(device=device).manual_seed(seed)
    model.eval()
    ids = torch.full((count, 1), start_id, dtype=torch.long, device=device)
    # transformers 5 renamed `past_key_values` to `cache`; take whichever this version has.
    name = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
    step_input, past = ids, None
    with torch.no_grad():
        for _ in range(seq_len - 1):
            out = model(input_ids=step_input, use_cache=True, **{name: past})
            past = out[name]
            step_input = torch.multinomial(out.logits[:, -1].float().softmax(-1), 1, generator=generator)
            ids = torch.cat([ids, step_input], dim=1)
    return ids.cpu()
