"""Which base model a profile was counted against, and which weights it has, as the keys what is kept is found by.

A calibration belongs to a model (`model_key`); a measurement made by running the model (its loss on an old text,
its own samples) belongs to its weights as well (`weights_key`): a checkpoint trained again in place keeps its
name, tokenizer and head's shape, and so its model key, while what running it gives has changed.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vocabrisk.model.resolve import ModelFiles

WEIGHT_PATTERNS = ("*.safetensors", "*.bin", "*.pt", "*.pth")


def model_key(model: dict, tokenizer: dict) -> str:
    """Which base model a calibration belongs to: its tokenizer and where its head lives."""
    head = model["head"].to_dict() if model.get("head") else {}
    identity = {
        "tokenizer": tokenizer.get("fingerprint"),
        "model": model.get("name"),
        "head": {k: head.get(k) for k in ("file", "tensor", "rows", "hidden", "data_offset")},
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:20]


def weights_key(files: ModelFiles) -> str:
    """Which weights FILES hold: each weight file's name, size and modification time (in nanoseconds).

    Any rewrite of a file changes the key, so nothing measured on weights that are gone is used again; a copy
    changes it too, which only measures once more. Hashing the bytes would cost seconds to minutes a run.
    """
    paths = (
        [files.gguf] if files.gguf else sorted({p for pattern in WEIGHT_PATTERNS for p in files.folder.glob(pattern)})
    )
    digest = hashlib.sha256()
    for path in paths:
        stat = path.stat()  # through a hub cache's symlinks, the blob's
        digest.update(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]
