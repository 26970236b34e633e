"""The base model's loss on the old text: what weighs the forecast's two body pathways (`forecast.transfer_weight`).

One forward pass over windows of the old text, as the v9 design measured it: OLD_LOSS_WINDOW tokens each (a
longer context predicts better, so an evaluation loss at another length reads on another scale), up to
OLD_LOSS_WINDOWS of them spread over the text. `calibrate` keeps it with the constants; a scan, a rank or a gate
measures it (`--old-loss auto`, the default, where that is cheap; `--old-loss measure` whatever it costs) and keeps
it per model, weights and old text so that it runs once, and a report of a saved profile finds it there.

The module imports torch only to measure: finding a kept loss, or deciding not to measure, costs a scan nothing.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from vocabrisk.errors import ModelError
from vocabrisk.model.head import parameter_count
from vocabrisk.storage.cache import cache_folder
from vocabrisk.storage.outputs import write_atomic

if TYPE_CHECKING:  # a report or a gate of a saved profile finds a kept loss without the counting stack
    from vocabrisk.model.loaded import LoadedModel
    from vocabrisk.prior.old_text import OldText

OLD_LOSS_WINDOW = 256  # tokens: the windows the v9 design's base losses were measured on (benchmarks' regime A)
OLD_LOSS_WINDOWS = 32
# `--old-loss auto` measures on the CPU up to this many weights: the first scan of SmolLM2-135M with an old text
# took 64-70 s and 1.5 GB on two cores (a scan without it 1.4-1.6 s; docs/PERFORMANCE.md), once per model, weights
# and old text; a larger model costs minutes and gigabytes a scan should not spend unasked (`--old-loss measure`).
AUTO_MAX_PARAMETERS = 200_000_000


def loss_on(model, stream, device: str, bf16: bool = False) -> float:
    """MODEL's mean next-token loss over windows of STREAM (nats per token; shorter windows where it is short)."""
    from vocabrisk.verify.data import windows
    from vocabrisk.verify.measure import final_hidden, matrix_loss, output_matrix

    old = windows(stream, min(OLD_LOSS_WINDOW, len(stream)), OLD_LOSS_WINDOWS)
    return matrix_loss(final_hidden(model, old, device, bf16), output_matrix(model), old, device)


def kept_path(model_key: str, weights_key: str | None, old: OldText) -> Path:
    """Where the loss of the model (its calibration key and weights key) on OLD is kept: weights trained again
    measure again."""
    text = hashlib.blake2b(np.asarray(old.ids, dtype=np.int64).tobytes(), digest_size=12).hexdigest()
    return cache_folder() / "old-loss" / f"{model_key}-{weights_key}-{text}.json"


def kept_old_loss(model_key: str, weights_key: str | None, old: OldText) -> float | None:
    """The loss measured before on this model, weights and old text, else None."""
    path = kept_path(model_key, weights_key, old)
    try:
        return float(json.loads(path.read_text(encoding="utf-8"))["old_loss"])
    except (OSError, ValueError, KeyError, TypeError):  # not measured yet, or a kept file that is not ours
        return None


def measure_old_loss(loaded: LoadedModel, old: OldText, device: str = "cpu") -> float:
    """LOADED's loss on OLD (its token ids), from the cache where this model and old text were measured before."""
    kept = kept_old_loss(loaded.calibration_key, loaded.weights_key, old)
    if kept is not None:
        return kept
    import torch

    from vocabrisk.verify.run import load_causal_lm

    value = loss_on(load_causal_lm(loaded, device), torch.from_numpy(np.asarray(old.ids, dtype=np.int64)), device)
    kept = {"old_loss": value, "window": OLD_LOSS_WINDOW, "windows": OLD_LOSS_WINDOWS, "tokens": len(old.ids)}
    write_atomic(kept_path(loaded.calibration_key, loaded.weights_key, old), json.dumps(kept) + "\n", "old-loss cache")
    return value


def auto_old_loss(
    loaded: LoadedModel, old: OldText, say: Callable[[str], None] = lambda _message: None
) -> float | None:
    """LOADED's loss on OLD where it costs little: kept from an earlier run, else measured here (one forward pass
    on the CPU) where torch and transformers are installed and the model has at most AUTO_MAX_PARAMETERS weights
    in safetensors or GGUF and a causal head; else None, which the forecast reads as unknown. SAY hears of a
    measurement."""
    kept = kept_old_loss(loaded.calibration_key, loaded.weights_key, old)
    if kept is not None:
        return kept
    if loaded.head is None or not all(importlib.util.find_spec(name) for name in ("torch", "transformers")):
        return None
    try:
        count = parameter_count(loaded.files)
    except ModelError:
        return None
    if count is None or count > AUTO_MAX_PARAMETERS:
        return None
    say(
        f"measuring {loaded.files.name}'s loss on the old text ({count / 1e6:,.0f}M weights, up to "
        f"{OLD_LOSS_WINDOWS} windows of {OLD_LOSS_WINDOW} tokens; once, then kept; --old-loss none skips it)"
    )
    try:
        value = measure_old_loss(loaded, old)
    except (ModelError, ImportError, MemoryError):  # weights transformers cannot load (a GGUF without `gguf`, ...)
        return None
    say(
        f"base loss on the old text: {value:.3f} nats; "
        f"where torch is absent (CI), --old-loss {value:.3f} gives the same"
    )
    return value
