"""The Markdown report: the HTML report's content as tables, for CI job summaries and PR comments.

Those places show no inline SVG and keep no files beside the text, so where the HTML page
has a plot this has a table with a bar drawn in block characters.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from vocabrisk.advice import Advice, data_advice_text, mixing_text
from vocabrisk.report import content
from vocabrisk.report.content import Named, ProfileReport, Report
from vocabrisk.risk.summary import GroupRisk, Summary, TokenAtRisk, UsageBand
from vocabrisk.risk.wording import format_epochs

_SPECIAL = re.compile(r"([\\`*_{}\[\]<>|#])")
BAR_WIDTH = 12


def escape(text: str) -> str:
    """Text that Markdown shows as is, even inside a table cell."""
    return _SPECIAL.sub(r"\\\1", str(text)).replace("\n", " ")


def code(text: str) -> str:
    """A code span that survives a table cell (GFM splits cells on `|` even inside code)."""
    return escape(text) if "`" in text else "`" + text.replace("|", "\\|").replace("\n", " ") + "`"


def table(header: list[str], rows: list[list[str]], align: str = "") -> str:
    """A pipe table; ALIGN has one letter per column, `l` or `r` (default: first left, rest right)."""
    align = align or "l" + "r" * (len(header) - 1)
    rule = ["---:" if a == "r" else ":---" for a in align]
    lines = [header, rule, *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


def bar(fraction: float, width: int = BAR_WIDTH) -> str:
    filled = round(max(0.0, min(1.0, fraction)) * width)
    return "█" * filled + "░" * (width - filled)


def render_markdown(report: Report) -> str:
    parts = [f"# {escape(report.title)}", ""]
    if len(report.profiles) > 1:
        parts += [
            "## Candidates, least forecast forgetting first",
            "",
            ranking_table(report.profiles),
            "",
        ]
    for p in report.profiles:
        parts += [profile_section(p, level=2), ""]
    return "\n".join(parts)


def ranking_table(ranked: Sequence[Named]) -> str:
    top = max((r.summary.risk.score for r in ranked), default=0.0) or 1.0
    rows = []
    for i, r in enumerate(ranked, 1):
        s = r.summary
        risk = s.risk.score
        rows.append(
            [str(i), escape(r.name), s.forecast.headline, f"{s.baselines['unigram_kl']:.2f}",
             f"{s.profile.total_tokens:,}",
             format_epochs(s.implied_epochs), f"{s.coverage.used_share:.1%}", f"{s.coverage.starved_rows:,}",
             f"{risk:.3f}", s.risk.band, bar(risk / top)]
        )  # fmt: skip
    return table(
        [
            "#",
            "candidate",
            "forecast (nats)",
            "unigram KL",
            "tokens",
            "epochs",
            "rows used",
            "starved",
            "starved usage",
            "band",
            "",
        ],
        rows,
        align="rlrrrrrrrll",
    )


def profile_section(report: ProfileReport, level: int = 2) -> str:
    s, h = report.summary, "#" * level
    parts = [
        f"{h} {escape(report.name)}: forecast {s.forecast.headline} nats, "
        f"starved usage {s.risk.score:.3f} ({s.risk.band})",
        "",
        facts(s),
        "",
        f"{h}# Coverage by how much the base model uses each row",
        "",
        usage_table(s.usage_bands),
        "",
        f"{h}# Risk by token group",
        "",
        groups_table(s.groups),
        "",
        f"{h}# Starved tokens the base model uses most",
        "",
        tokens_table(s.top_at_risk),
        "",
        f"{h}# What to do",
        "",
        advice_list(report.advice),
    ]
    return "\n".join(parts)


def facts(s: Summary) -> str:
    lines = []
    for fact in content.facts(s):
        lines.append(f"- **{fact.label}** {escape(', '.join(fact.parts))}")
        if fact.note:
            lines.append(f"  - {escape(fact.note)}")
    return "\n".join(lines)


def usage_table(usage: list[UsageBand]) -> str:
    return table(
        ["rows by base use", "rows", "fed", "seen, starved", "never seen", "base use", "at risk", ""],
        [
            [u.band, f"{u.rows:,}", f"{u.fed:,}", f"{u.seen_starved:,}", f"{u.never_seen:,}",
             f"{u.base_share:.1%}", f"{u.risk:.1%}", bar(u.fed / u.rows)]
            for u in usage
        ],
        align="lrrrrrrl",
    )  # fmt: skip


def groups_table(groups: list[GroupRisk], limit: int = 12) -> str:
    top = max((g.risk for g in groups), default=0.0) or 1.0
    return table(
        ["group", "rows", "used", "starved", "corpus share", "base share", "risk", ""],
        [
            [escape(g.group), f"{g.rows:,}", f"{g.used:,}", f"{g.starved:,}", f"{g.corpus_share:.2%}",
             f"{g.base_share:.2%}", f"{g.risk:.4f}", bar(g.risk / top)]
            for g in groups[:limit]
        ],
        align="lrrrrrrl",
    )  # fmt: skip


def tokens_table(tokens: list[TokenAtRisk]) -> str:
    if not tokens:
        return "No starved token the base model uses."
    return table(
        ["id", "token", "group", "count", "base share", "exposure"],
        [
            [str(t.token_id), code(t.token), escape(t.group), f"{t.count:,}", f"{t.base_share:.3%}",
             f"{t.exposure:.2f}"]
            for t in tokens
        ],
        align="rllrrr",
    )  # fmt: skip


def advice_list(advice: Advice) -> str:
    head = advice.train_head
    lines = [f"- **Head:** {escape(head['recommendation'])} ({escape(head['why'])})"]
    if advice.head_eps:
        lines.append(f"- **Head-only Adam eps:** `{advice.head_eps['value']:g}`")
    for row in advice.add_data:
        label, text = data_advice_text(row)
        lines.append(f"- **{label.capitalize()}:** {escape(text)}")
    if advice.mixing:
        note = advice.mixing_note or advice.mixing[0]["replay"]
        lines.append(f"- **Mixing in replay:** {mixing_text(advice.mixing)} ({escape(note)})")
    return "\n".join(lines)
