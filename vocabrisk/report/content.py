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
from vocabrisk.corpus.skips import human_bytes, plural
from vocabrisk.risk.summary import Summary
from vocabrisk.risk.wording import HOW_WELL, RISK_BANDS, RISK_MEANING, skipped_text


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


@dataclass(frozen=True)
class Fact:
    """One line of a report's facts block: a label, its parts (each layout joins them its own way), and a
    note under it. `kind` lets a layout style a line: "forecast", "risk", "warning", "skipped"."""

    label: str
    parts: tuple[str, ...]
    note: str = ""
    kind: str = ""


def facts(s: Summary) -> list[Fact]:
    """What every layout says about one profile, in order: the terminal, HTML and Markdown reports all read it."""
    p, c, head, r = s.profile, s.coverage, s.profile.head, s.risk
    if head:
        head_text = f"head {head.tensor} {head.rows}×{head.hidden} {head.dtype}" + (
            " (tied to input embedding)" if head.tied else ""
        )
    else:
        head_text = f"no head: {p.model.get('head_note')}"
    corpus = (plural(p.documents, "document"), human_bytes(p.text_bytes), plural(p.total_tokens, "token"))
    coverage = f"{c.used_rows:,} of {c.coverable_rows:,} rows used ({c.used_share:.1%})"
    usage = "not applicable" if s.encoder else f"{r.score:.3f} {r.band.upper()}"
    return [
        Fact("model", (p.model["name"], f"{p.tokenizer['model_type']}, {p.vocab_size:,} ids", head_text)),
        Fact("corpus", (*corpus, plural(len(p.sources), "file"))),
        Fact("coverage", (coverage, f"{c.absent_rows:,} never seen", f"{c.starved_rows:,} starved")),
        Fact("forecast", (s.forecast.text,), HOW_WELL, "forecast"),
        Fact("along the plan", (s.forecast.along,)),
        Fact(
            "starved usage",
            (usage + ("" if not s.encoder else f" ({r.score:.3f} if it were causal)"), f"prior: {r.prior_source}"),
            f"{RISK_MEANING}; bands {RISK_BANDS}; {s.trust}",
            "risk",
        ),
        Fact("plan", (s.plan_text,)),
        *(Fact("warning", (warning,), kind="warning") for warning in s.warnings),
        Fact("skipped", (skipped_text(p.skip_report()),), kind="skipped" if p.skipped else ""),
    ]


def build_report(ranked: Sequence[Named]) -> Report:
    """The report of summaries in the order given (`compare.rank`'s), with the advice for each."""
    return Report([ProfileReport(r.name, r.summary, advise(r.summary)) for r in ranked])
