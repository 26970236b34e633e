"""Comparing corpora: `rank` candidates by forecast forgetting, `diff` two profiles of the same model."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from vocabrisk.errors import InputError, ProfileError
from vocabrisk.profile.inputs import profile_or_corpus
from vocabrisk.profile.profile import Profile
from vocabrisk.risk.plan import TrainingPlan
from vocabrisk.risk.summary import Summary

if TYPE_CHECKING:
    from vocabrisk.model.loaded import LoadedModel

DIFF_TOKENS = 15


@dataclass(frozen=True)
class Ranked:
    """One candidate of `rank`: its name and summary; `to_dict()` is its row in the JSON output."""

    name: str
    summary: Summary

    @property
    def unigram_kl(self) -> float:
        return self.summary.baselines["unigram_kl"]

    @property
    def order(self) -> float:
        """What `rank` sorts by: the forecast's nats, a forecast beyond what is possible last."""
        forecast = self.summary.forecast
        return forecast.total if forecast.possible else math.inf

    def to_dict(self) -> dict:
        s = self.summary
        p, r = s.profile, s.risk
        return {
            "candidate": self.name,
            "documents": p.documents,
            "tokens": p.total_tokens,
            "forecast": s.forecast.to_dict(),
            "used_share": s.coverage.used_share,
            "starved_rows": s.coverage.starved_rows,
            "starved_share": s.coverage.starved_share,
            "risk": r.score,
            "band": r.band,
            "plan": r.plan.to_dict(),
            "implied_epochs": s.implied_epochs,
            "warnings": s.warnings,
            "baselines": s.baselines,
            "top_groups": s.top_groups,
            "skipped": {key: value for key, value in p.skip_report().items() if key != "examples"},
        }


def check_comparable(first: Profile, other: Profile, first_name: str, other_name: str) -> None:
    """Risks compare only under one tokenizer, counting policy and prior."""
    first.check_compatible(other)
    if not np.allclose(first.prior, other.prior):
        raise ProfileError(
            f"{other_name}: its prior ({other.prior_source}) differs from {first_name}'s "
            f"({first.prior_source}); risks are only comparable under one prior",
            hint="scan every corpus with the same --model and --reference",
        )


def rank(
    candidates: Sequence[str | Profile],
    model: str | LoadedModel = "demo",
    plan: TrainingPlan | None = None,
    *,
    scan_candidate: Callable[[str], Profile] | None = None,
    budget: float | None = None,
    old_loss: float | Callable[[Profile], float | None] | None = None,
) -> list[Ranked]:
    """Order candidate corpora by forecast forgetting, least first. Saved profiles are loaded, not rescanned.

    Each candidate is one corpus (a file, folder or glob) or a `Profile`. `scan_candidate`
    replaces the default `scan([candidate], model)`, e.g. to pass read options or a reference.
    With `budget` (nats), each forecast says at which step of the plan it crosses it; `old_loss` is the base
    model's mean loss on the old text, or what measures it from a profile (`Summary.of`).

    >>> ranked = rank(["sample_corpora/korean-notes.txt", "sample_corpora/"], "demo")
    >>> [(r.name, round(r.summary.forecast.total, 2)) for r in ranked]
    [('sample_corpora/', 0.03), ('sample_corpora/korean-notes.txt', 0.47)]
    """
    candidates = _candidates(candidates)
    plan = plan or TrainingPlan()
    if scan_candidate is None:
        from vocabrisk.profile.scan import loaded_model, scan  # a count's stages: not for `diff` or the gate

        loaded = loaded_model(model, counted_here=True)

        def scan_candidate(path: str) -> Profile:
            return scan([path], loaded)

    ranked = []
    for candidate in candidates:
        if isinstance(candidate, Profile):
            name, profile = ", ".join(s["path"] for s in candidate.sources[:2]), candidate
        else:
            name, profile = candidate, profile_or_corpus(candidate, scan_candidate)
        ranked.append(Ranked(name, Summary.of(profile, plan, budget=budget, old_loss=old_loss)))
    for r in ranked[1:]:
        check_comparable(ranked[0].summary.profile, r.summary.profile, ranked[0].name, r.name)
    return sorted(ranked, key=lambda r: r.order)  # how well this order holds: docs/VALIDITY.md ("v3")


def _candidates(candidates: object) -> list[str | Profile]:
    """CANDIDATES as a list of paths and profiles; InputError for anything else."""
    hint = "pass a list with one entry per candidate: paths, folders or globs as str, or Profile objects"
    if isinstance(candidates, (str, bytes, os.PathLike)) or not isinstance(candidates, Iterable):
        raise InputError(f"rank takes a list of candidates, not {type(candidates).__name__}", hint=hint)
    listed = []
    for candidate in candidates:
        if not isinstance(candidate, (str, os.PathLike, Profile)):
            raise InputError(f"a rank candidate is a path or a Profile, not {type(candidate).__name__}", hint=hint)
        listed.append(candidate if isinstance(candidate, Profile) else os.fspath(candidate))
    return listed


def diff(
    old: Profile, new: Profile, plan: TrainingPlan | None = None,
    old_loss: float | Callable[[Profile], float | None] | None = None,
) -> dict:  # fmt: skip
    """What changed from OLD to NEW: risk, rows newly starved or fed, and per-group changes. `old_loss` is as
    `rank` takes it.

    Both profiles have the same tokenizer, so their rows line up by token id; the most used
    tokens of each change are listed first (ties by token id).
    """
    check_comparable(old, new, "OLD", "NEW")
    plan = plan or TrainingPlan()
    before, after = Summary.of(old, plan, old_loss=old_loss), Summary.of(new, plan, old_loss=old_loss)
    newly = after.risk.starved & ~before.risk.starved
    fed = before.risk.starved & ~after.risk.starved

    def tokens(change: np.ndarray) -> list[dict]:
        rows = np.flatnonzero(change)
        most_used = rows[np.lexsort((rows, -after.risk.prior[rows]))[:DIFF_TOKENS]]
        return [{"token_id": int(i), "token": new.tokens[i], "group": str(new.groups[i])} for i in most_used]

    old_groups = {g.group: g for g in before.groups}
    groups: list[dict[str, Any]] = []
    for g in after.groups:
        o = old_groups.get(g.group)
        starved_before, risk_before = (o.starved, o.risk) if o else (0, 0.0)
        if g.starved != starved_before or abs(g.risk - risk_before) > 1e-9:
            groups.append(
                {
                    "group": g.group,
                    "starved_before": starved_before,
                    "starved_after": g.starved,
                    "risk_before": risk_before,
                    "risk_after": g.risk,
                }
            )
    groups.sort(key=lambda g: -abs(g["risk_after"] - g["risk_before"]))
    return {
        "forecast_before": before.forecast.to_dict(),
        "forecast_after": after.forecast.to_dict(),
        "risk_before": before.risk.score,
        "risk_after": after.risk.score,
        "band_before": before.risk.band,
        "band_after": after.risk.band,
        "starved_before": before.coverage.starved_rows,
        "starved_after": after.coverage.starved_rows,
        "newly_starved": int(newly.sum()),
        "no_longer_starved": int(fed.sum()),
        "newly_starved_tokens": tokens(newly),
        "no_longer_starved_tokens": tokens(fed),
        "groups": groups,
        "plan": after.risk.plan.to_dict(),
        "implied_epochs_before": before.implied_epochs,
        "implied_epochs_after": after.implied_epochs,
        "warnings": after.warnings,
    }
