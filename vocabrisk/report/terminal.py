"""The rich terminal report of a scan."""

from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from vocabrisk.summary import Summary

BAND_STYLE = {"low": "green", "medium": "yellow", "high": "bold red"}


def _size(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")


def render_scan(summary: Summary, console: Console) -> None:
    data = summary.to_dict()
    risk = data["risk"]
    head = data["head"]
    head_line = (
        f"head {head['tensor']} {head['rows']}×{head['hidden']} {head['dtype']}"
        + (" (tied to input embedding)" if head["tied"] else "")
        if head
        else f"no head: {data['head_note']}"
    )
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="bold")
    facts.add_column()
    facts.add_row(
        "model", f"{data['model']}  ·  {data['tokenizer']['model_type']}, {data['vocab_size']:,} ids  ·  {head_line}"
    )
    facts.add_row(
        "corpus",
        f"{data['documents']:,} documents  ·  {_size(data['text_bytes'])}  ·  {data['tokens']:,} tokens"
        f"  ·  {len(data['sources'])} files",
    )
    facts.add_row(
        "coverage",
        f"{data['used_rows']:,} of {data['coverable_rows']:,} rows used ({data['used_share']:.1%})  ·  "
        f"{data['absent_rows']:,} never seen  ·  {data['starved_rows']:,} starved",
    )
    plan = risk["plan"]
    risk_text = Text.assemble(
        (f"{risk['score']:.3f} ", "bold"),
        (risk["band"].upper(), BAND_STYLE[risk["band"]]),
        f"   prior: {risk['prior']}  ·  plan: {plan['steps']:,} steps × "
        f"{plan['tokens_per_step']:,} tokens, β2={plan['beta2']}",
    )
    facts.add_row("risk", risk_text)
    if data["skipped"]:
        example = data["skipped_examples"][0]
        facts.add_row(
            "skipped",
            Text(
                f"{data['skipped']:,} records or files, e.g. "
                f"{example['source']}, {example['locator']}: {example['reason']}",
                style="yellow",
            ),
        )

    groups = Table(title="Token groups by risk carried", title_justify="left", expand=False)
    for name, justify in (
        ("group", "left"),
        ("rows", "right"),
        ("used", "right"),
        ("starved", "right"),
        ("corpus share", "right"),
        ("base share", "right"),
        ("risk", "right"),
    ):
        groups.add_column(name, justify=justify)
    for g in data["groups"][:12]:
        groups.add_row(
            g["group"],
            f"{g['rows']:,}",
            f"{g['used']:,}",
            f"{g['starved']:,}",
            f"{g['corpus_share']:.2%}",
            f"{g['base_share']:.2%}",
            f"{g['risk']:.4f}",
        )

    top = Table(title="Starved tokens the base model uses most", title_justify="left")
    for name, justify in (
        ("id", "right"),
        ("token", "left"),
        ("group", "left"),
        ("count", "right"),
        ("base share", "right"),
        ("exposure", "right"),
    ):
        top.add_column(name, justify=justify)
    for t in data["top_at_risk"]:
        top.add_row(
            str(t["token_id"]),
            t["token"],
            t["group"],
            f"{t['count']:,}",
            f"{t['base_share']:.3%}",
            f"{t['exposure']:.2f}",
        )

    console.print(Panel(facts, title="vocabrisk scan", title_align="left", border_style=BAND_STYLE[risk["band"]]))
    console.print(Group(groups, top))
