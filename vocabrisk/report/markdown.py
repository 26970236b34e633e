"""The Markdown report: the HTML report's content as tables, for CI job summaries and PR comments.

Those places show no inline SVG and keep no files beside the text, so where the HTML page
has a plot this has a table with a bar drawn in block characters.
"""

from __future__ import annotations

import re

from vocabrisk.advice import data_advice_text, mixing_text
from vocabrisk.forecast import describe_forecast
from vocabrisk.plan import describe, format_epochs
from vocabrisk.report.content import ProfileReport, Report
from vocabrisk.summary import skipped_text

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
            "## Candidates, least surprising first (unigram KL: the best-validated ranking)",
            "",
            ranking_table(report.ranking),
            "",
        ]
    for p in report.profiles:
        parts += [profile_section(p, level=2), ""]
    return "\n".join(parts)


def ranking_table(rows: list[dict]) -> str:
    top = max((r["risk"] for r in rows), default=0.0) or 1.0
    return table(
        ["#", "candidate", "tokens", "forecast (nats)", "epochs", "rows used", "starved", "starved usage", "band", ""],
        [
            [str(i), escape(r["candidate"]), f"{r['tokens']:,}", f"+{r['forecast']['total_nats']:.3f}",
             format_epochs(r["implied_epochs"]),
             f"{r['used_share']:.1%}", f"{r['starved_rows']:,}", f"{r['risk']:.3f}", r["band"], bar(r["risk"] / top)]
            for i, r in enumerate(rows, 1)
        ],
        align="rlrrrrrrll",
    )  # fmt: skip


def profile_section(report: ProfileReport, level: int = 2) -> str:
    d, h = report.data, "#" * level
    parts = [
        f"{h} {escape(report.name)}: forecast +{d['forecast']['total_nats']:.3f} nats, "
        f"starved usage {d['risk']['score']:.3f} ({d['risk']['band']})",
        "",
        facts(d),
        "",
        f"{h}# Coverage by how much the base model uses each row",
        "",
        usage_table(report.usage),
        "",
        f"{h}# Risk by token group",
        "",
        groups_table(d["groups"]),
        "",
        f"{h}# Starved tokens the base model uses most",
        "",
        tokens_table(d["top_at_risk"]),
        "",
        f"{h}# What to do",
        "",
        advice_list(report.advice),
    ]
    return "\n".join(parts)


def facts(d: dict) -> str:
    return "\n".join(
        [
            f"- **model** {escape(d['model'])} ({d['tokenizer']['model_type']}, {d['vocab_size']:,} ids)",
            f"- **corpus** {d['documents']:,} documents, {d['tokens']:,} tokens, {len(d['sources'])} files",
            f"- **coverage** {d['used_rows']:,} of {d['coverable_rows']:,} rows used ({d['used_share']:.1%}), "
            f"{d['absent_rows']:,} never seen, {d['starved_rows']:,} starved",
            f"- **forecast** {escape(describe_forecast(d['forecast']))}",
            f"- **how well** {escape(d['forecast']['how_well'])}",
            f"- **starved usage** {d['risk']['score']:.3f} ({d['risk']['band']}); prior: {escape(d['risk']['prior'])}",
            f"- **plan** {escape(describe(d['risk']))}",
            *(f"- **warning** {escape(warning)}" for warning in d["warnings"]),
            f"- **skipped** {escape(skipped_text(d['skips']))}",
        ]
    )


def usage_table(usage: list[dict]) -> str:
    return table(
        ["rows by base use", "rows", "fed", "seen, starved", "never seen", "base use", "at risk", ""],
        [
            [u["band"], f"{u['rows']:,}", f"{u['fed']:,}", f"{u['seen_starved']:,}", f"{u['never_seen']:,}",
             f"{u['base_share']:.1%}", f"{u['risk']:.1%}", bar(u["fed"] / u["rows"])]
            for u in usage
        ],
        align="lrrrrrrl",
    )  # fmt: skip


def groups_table(groups: list[dict], limit: int = 12) -> str:
    top = max((g["risk"] for g in groups), default=0.0) or 1.0
    return table(
        ["group", "rows", "used", "starved", "corpus share", "base share", "risk", ""],
        [
            [escape(g["group"]), f"{g['rows']:,}", f"{g['used']:,}", f"{g['starved']:,}", f"{g['corpus_share']:.2%}",
             f"{g['base_share']:.2%}", f"{g['risk']:.4f}", bar(g["risk"] / top)]
            for g in groups[:limit]
        ],
        align="lrrrrrrl",
    )  # fmt: skip


def tokens_table(tokens: list[dict]) -> str:
    if not tokens:
        return "No starved token the base model uses."
    return table(
        ["id", "token", "group", "count", "base share", "exposure"],
        [
            [str(t["token_id"]), code(t["token"]), escape(t["group"]), f"{t['count']:,}",
             f"{t['base_share']:.3%}", f"{t['exposure']:.2f}"]
            for t in tokens
        ],
        align="rllrrr",
    )  # fmt: skip


def advice_list(advice: dict) -> str:
    head = advice["train_head"]
    lines = [f"- **Head:** {escape(head['recommendation'])} ({escape(head['why'])})"]
    if advice["head_eps"]:
        lines.append(f"- **Head-only Adam eps:** `{advice['head_eps']['value']:g}`")
    for row in advice["add_data"]:
        label, text = data_advice_text(row)
        lines.append(f"- **{label.capitalize()}:** {escape(text)}")
    if advice["mixing"]:
        note = advice.get("mixing_note") or advice["mixing"][0]["replay"]
        lines.append(f"- **Mixing in replay:** {mixing_text(advice['mixing'])} ({escape(note)})")
    return "\n".join(lines)
