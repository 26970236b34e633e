"""What the HTML and Markdown reports show, so both layouts say the same thing.

A report is made of summaries already computed and ranked (`vocabrisk.compare.rank`), each
with its advice; the layouts read their typed attributes (`Summary.coverage`, `.groups`,
`.top_at_risk`, `.usage_bands`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from vocabrisk.advice import Advice, advise
from vocabrisk.risk.summary import Summary


class Named(Protocol):
    """A summary under the name a reader knows it by (a `compare.Ranked` is one)."""

    name: str
    summary: Summary


@dataclass(frozen=True)
class ProfileReport:
    """One corpus's part of a report: what its profile says, and what to do about it."""

    name: str
    summary: Summary
    advice: Advice


@dataclass(frozen=True)
class Report:
    """What the HTML and Markdown reports show, whatever the format."""

    profiles: list[ProfileReport]  # in the order ranked, least forecast forgetting first

    @property
    def title(self) -> str:
        if len(self.profiles) == 1:
            return f"vocabrisk: {self.profiles[0].name}"
        return f"vocabrisk: {len(self.profiles)} corpora ranked"


def build_report(ranked: Sequence[Named]) -> Report:
    """The report of summaries in the order given (`compare.rank`'s), with the advice for each."""
    return Report([ProfileReport(r.name, r.summary, advise(r.summary)) for r in ranked])
