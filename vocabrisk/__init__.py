"""vocabrisk: which output-head rows a corpus will starve, and how much forgetting that risks."""

from vocabrisk._version import __version__
from vocabrisk.advice import Advice, advise
from vocabrisk.compare import Ranked, diff, rank
from vocabrisk.corpus import ReadOptions
from vocabrisk.counting import SpecialTokenPolicy, TokenCounts
from vocabrisk.errors import InputError, ModelError, ProfileError, VocabriskError
from vocabrisk.gate import GateResult, Thresholds, evaluate
from vocabrisk.model.loaded import LoadedModel, load_model
from vocabrisk.plan import TrainingPlan
from vocabrisk.profile import Profile
from vocabrisk.scan import scan
from vocabrisk.summary import Summary

__all__ = [
    "Advice",
    "GateResult",
    "InputError",
    "LoadedModel",
    "ModelError",
    "Profile",
    "ProfileError",
    "Ranked",
    "ReadOptions",
    "SpecialTokenPolicy",
    "Summary",
    "Thresholds",
    "TokenCounts",
    "TrainingPlan",
    "VocabriskError",
    "__version__",
    "advise",
    "diff",
    "evaluate",
    "load_model",
    "rank",
    "scan",
]
