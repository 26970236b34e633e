"""The base model's loss on the old text: what weighs the forecast's two body pathways (`forecast.transfer_weight`).

One forward pass over windows of the old text, as the v9 design measured it: OLD_LOSS_WINDOW tokens each (a
longer context predicts better, so an evaluation loss at another length reads on another scale), up to
OLD_LOSS_WINDOWS of them spread over the text. `calibrate` keeps it with the constants; `--old-loss measure`
measures it for a scan, a rank or a gate, and keeps it per model, weights and old text so that it runs once.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import torch

from vocabrisk.model.loaded import LoadedModel
from vocabrisk.prior.old_text import OldText
from vocabrisk.storage.cache import cache_folder
from vocabrisk.storage.outputs import write_atomic
from vocabrisk.verify.data import windows
from vocabrisk.verify.measure import final_hidden, matrix_loss, output_matrix

OLD_LOSS_WINDOW = 256  # tokens: the windows the v9 design's base losses were measured on (benchmarks' regime A)
OLD_LOSS_WINDOWS = 32


def loss_on(model, stream: torch.Tensor, device: str, bf16: bool = False) -> float:
    """MODEL's mean next-token loss over windows of STREAM (nats per token; shorter windows where it is short)."""
    old = windows(stream, min(OLD_LOSS_WINDOW, len(stream)), OLD_LOSS_WINDOWS)
    return matrix_loss(final_hidden(model, old, device, bf16), output_matrix(model), old, device)


def measure_old_loss(loaded: LoadedModel, old: OldText, device: str = "cpu") -> float:
    """LOADED's loss on OLD (its token ids), from the cache where this model and old text were measured before."""
    from vocabrisk.verify.run import load_causal_lm

    model = f"{loaded.calibration_key}-{loaded.weights_key}"  # weights trained again measure again
    text = hashlib.blake2b(np.asarray(old.ids, dtype=np.int64).tobytes(), digest_size=12).hexdigest()
    path = cache_folder() / "old-loss" / f"{model}-{text}.json"
    if path.is_file():
        return float(json.loads(path.read_text(encoding="utf-8"))["old_loss"])
    value = loss_on(load_causal_lm(loaded, device), torch.from_numpy(np.asarray(old.ids, dtype=np.int64)), device)
    kept = {"old_loss": value, "window": OLD_LOSS_WINDOW, "windows": OLD_LOSS_WINDOWS, "tokens": len(old.ids)}
    write_atomic(path, json.dumps(kept) + "\n", "old-loss cache")
    return value
