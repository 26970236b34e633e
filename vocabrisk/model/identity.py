"""Which base model a profile was counted against, as the key its forecast calibration is kept under."""

from __future__ import annotations

import hashlib
import json


def model_key(model: dict, tokenizer: dict) -> str:
    """Which base model a calibration belongs to: its tokenizer and where its head lives."""
    head = model["head"].to_dict() if model.get("head") else {}
    identity = {
        "tokenizer": tokenizer.get("fingerprint"),
        "model": model.get("name"),
        "head": {k: head.get(k) for k in ("file", "tensor", "rows", "hidden", "data_offset")},
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:20]
