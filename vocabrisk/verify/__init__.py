"""Check the scan's predictions by training: `vocabrisk verify`, and the head-eps fix as an API.

Needs the optional extra `vocabrisk[verify]` (torch, transformers). `import vocabrisk` never
imports this package, and the names below load on first use:

- `verify(inputs, model, VerifyConfig(...))`: a short fine-tune, measured (see `run`);
- `head_eps_param_groups(model, head_eps)` / `make_head_eps_optimizer(model, lr, head_eps)`:
  AdamW with Adam's eps raised for the output head only (see `mitigation`);
- `vocabrisk.verify.hf.HeadEpsTrainer`: the same for the Hugging Face Trainer.
"""

from __future__ import annotations

import importlib

_LAZY = {
    "verify": "vocabrisk.verify.run",
    "VerifyConfig": "vocabrisk.verify.run",
    "VerifyResult": "vocabrisk.verify.run",
    "TrainConfig": "vocabrisk.verify.train",
    "head_eps_param_groups": "vocabrisk.verify.mitigation",
    "make_head_eps_optimizer": "vocabrisk.verify.mitigation",
    "HeadReport": "vocabrisk.verify.mitigation",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'vocabrisk.verify' has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY[name]), name)
