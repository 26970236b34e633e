"""What the HTML and Markdown reports show, as plain data, so both layouts say the same thing.

Most of it is `Summary.to_dict()` and the advice. What a summary lacks is where the starved
rows sit along the base model's own usage: usage bands rank the coverable rows by how much
the base model relies on them (its prior) and cut them into equal slices, so one can see
whether the corpus starves rows the model barely uses (harmless) or its everyday ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vocabrisk.advice import advise
from vocabrisk.compare import rank
from vocabrisk.plan import TrainingPlan
from vocabrisk.profile import Profile
from vocabrisk.summary import Summary

USAGE_BANDS = 10


@dataclass(frozen=True)
class ProfileReport:
    name: str
    data: dict  # Summary.to_dict()
    advice: dict  # Advice.to_dict()
    usage: list[dict]  # usage_bands()


@dataclass(frozen=True)
class Report:
    profiles: list[ProfileReport]  # least risky first
    ranking: list[dict]  # compare.Ranked.row() per profile, least risky first

    @property
    def title(self) -> str:
        if len(self.profiles) == 1:
            return f"vocabrisk: {self.profiles[0].name}"
        return f"vocabrisk: {len(self.profiles)} corpora ranked"


def build_report(paths: Sequence[str], plan: TrainingPlan | None = None) -> Report:
    """Load saved profiles and rank them (refusing profiles whose risks are not comparable)."""
    ranked = rank(list(paths), plan=plan, scan_candidate=Profile.load)
    return Report(
        profiles=[
            ProfileReport(r.name, r.summary.to_dict(), advise(r.summary).to_dict(), usage_bands(r.summary))
            for r in ranked
        ],
        ranking=[r.row() for r in ranked],
    )


def usage_bands(summary: Summary, bands: int = USAGE_BANDS) -> list[dict]:
    """Coverable rows ranked by the base model's use, cut into BANDS equal slices, most used first."""
    p, r = summary.profile, summary.risk
    rows = np.flatnonzero(p.coverable)
    order = rows[np.argsort(-r.prior[rows], kind="stable")]
    seen = p.counts.counts > 0
    result = []
    for i, part in enumerate(np.array_split(order, bands)):
        if part.size == 0:
            continue
        start, end = i * 100 // bands, (i + 1) * 100 // bands
        result.append(
            {
                "band": f"top {end}%" if i == 0 else f"{start}–{end}%",
                "upto": end,
                "rows": int(part.size),
                "fed": int((seen[part] & ~r.starved[part]).sum()),
                "seen_starved": int((seen[part] & r.starved[part]).sum()),
                "never_seen": int((~seen[part]).sum()),
                "base_share": float(r.prior[part].sum()),
                "risk": float(r.contribution[part].sum()),
            }
        )
    return result
