"""vocabrisk: which output-head rows a corpus will starve, and how much forgetting that risks.

The names below are imported on first use (PEP 562), so that a command imports only what it
runs: `vocabrisk --help` or a gate on a saved profile loads no counting, prior or scanning code.
"""

from __future__ import annotations

import importlib

from vocabrisk._version import __version__ as __version__

_EXPORTS = {
    "Advice": "vocabrisk.advice",
    "advise": "vocabrisk.advice",
    "Ranked": "vocabrisk.compare",
    "diff": "vocabrisk.compare",
    "rank": "vocabrisk.compare",
    "ReadOptions": "vocabrisk.corpus",
    "SpecialTokenPolicy": "vocabrisk.counting",
    "TokenCounts": "vocabrisk.counting",
    "InputError": "vocabrisk.errors",
    "ModelError": "vocabrisk.errors",
    "ProfileError": "vocabrisk.errors",
    "VocabriskError": "vocabrisk.errors",
    "GateResult": "vocabrisk.gate",
    "Thresholds": "vocabrisk.gate",
    "evaluate": "vocabrisk.gate",
    "LoadedModel": "vocabrisk.model.loaded",
    "load_model": "vocabrisk.model.loaded",
    "TrainingPlan": "vocabrisk.plan",
    "Profile": "vocabrisk.profile",
    "scan": "vocabrisk.scanning",
    "Summary": "vocabrisk.summary",
}

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'vocabrisk' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value  # once imported, an ordinary attribute
    return value


def __dir__() -> list[str]:
    return __all__
