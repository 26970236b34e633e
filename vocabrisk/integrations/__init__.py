"""vocabrisk inside the tools a team already runs.

- `vocabrisk.integrations.training`: watch, in your own training run, the head rows a scan
  predicted would starve (a transformers Trainer callback, a PyTorch monitor; needs torch).
- `vocabrisk.integrations.datatrove`: count the documents of a datatrove pipeline as they flow,
  one partial profile per task, merged into the profile `vocabrisk scan` gives (needs datatrove).

The training names are importable from here, as they always were (`from vocabrisk.integrations
import watch`); they load on first use, so that the datatrove step never imports torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vocabrisk.integrations.training import HeadDriftMonitor, HeadDriftWarning, VocabriskCallback, watch

__all__ = ["HeadDriftMonitor", "HeadDriftWarning", "VocabriskCallback", "watch"]  # from .training


def __getattr__(name: str):
    if name not in __all__:
        raise AttributeError(f"module 'vocabrisk.integrations' has no attribute {name!r}")
    return getattr(importlib.import_module("vocabrisk.integrations.training"), name)
