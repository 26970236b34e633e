"""vocabrisk: which output-head rows a corpus will starve, and how much forgetting that risks.

The names below are imported on first use (PEP 562), so that a command imports only what it
runs: `vocabrisk --help` or a gate on a saved profile loads no counting, prior or scanning code.
Type checkers read them from the `TYPE_CHECKING` imports, which say the same (the package is typed:
`py.typed`; `tests/test_typing.py` checks the two lists agree and the public API with mypy).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from vocabrisk._version import __version__ as __version__

if TYPE_CHECKING:  # what type checkers and editors see of the names `__getattr__` imports on first use
    from vocabrisk.advice import Advice as Advice
    from vocabrisk.advice import advise as advise
    from vocabrisk.compare import Ranked as Ranked
    from vocabrisk.compare import diff as diff
    from vocabrisk.compare import rank as rank
    from vocabrisk.corpus import ReadOptions as ReadOptions
    from vocabrisk.counting import SpecialTokenPolicy as SpecialTokenPolicy
    from vocabrisk.counting import TokenCounts as TokenCounts
    from vocabrisk.errors import InputError as InputError
    from vocabrisk.errors import ModelError as ModelError
    from vocabrisk.errors import ProfileError as ProfileError
    from vocabrisk.errors import VocabriskError as VocabriskError
    from vocabrisk.gate import GateResult as GateResult
    from vocabrisk.gate import Thresholds as Thresholds
    from vocabrisk.gate import evaluate as evaluate
    from vocabrisk.model.loaded import LoadedModel as LoadedModel
    from vocabrisk.model.loaded import load_model as load_model
    from vocabrisk.profile.profile import Profile as Profile
    from vocabrisk.profile.scan import scan as scan
    from vocabrisk.risk.plan import TrainingPlan as TrainingPlan
    from vocabrisk.risk.summary import Summary as Summary

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
    "TrainingPlan": "vocabrisk.risk.plan",
    "Profile": "vocabrisk.profile.profile",
    "scan": "vocabrisk.profile.scan",
    "Summary": "vocabrisk.risk.summary",
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
