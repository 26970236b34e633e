"""The rich terminal report of a scan."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from vocabrisk.advice import Advice, data_advice_text, mixing_text
from vocabrisk.report import content
from vocabrisk.report.content import Named
from vocabrisk.risk.forecast import EARLY_STEP
from vocabrisk.risk.summary import Summary
from vocabrisk.risk.wording import HOW_WELL, format_epochs, plan_text, skipped_text

BAND_STYLE = {"low": "green", "medium": "yellow", "high": "bold red"}


def _table(title: str, columns: list[tuple[str, str]]) -> Table:
    table = Table(title=title, title_justify="left")
    for name, justify in columns:
        table.add_column(name, justify=justify)
    return table


FACT_STYLE = {"forecast": "bold", "warning": "yellow", "skipped": "yellow"}


def _fact_text(fact: content.Fact, summary: Summary) -> Text:
    if fact.kind == "risk":  # the score bold and its band in the band's colour, then what it is read against
        r, context = summary.risk, f"{fact.parts[1]}  ·  share of the base's usage on rows the corpus starves"
        if summary.encoder:
            return Text.assemble(("not applicable", "bold"), f" ({r.score:.3f} if it were causal)   {context}")
        return Text.assemble((f"{r.score:.3f} ", "bold"), (r.band.upper(), BAND_STYLE[r.band]), f"   {context}")
    return Text("  ·  ".join(fact.parts), style=FACT_STYLE.get(fact.kind, ""))


def render_scan(summary: Summary, advice: Advice, console: Console) -> None:
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="bold")
    facts.add_column()
    for fact in content.facts(summary):
        facts.add_row(fact.label, _fact_text(fact, summary))
        if fact.note:
            facts.add_row("", Text(fact.note, style="dim"))

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
    for g in summary.groups[:12]:
        groups.add_row(
            g.group,
            f"{g.rows:,}",
            f"{g.used:,}",
            f"{g.starved:,}",
            f"{g.corpus_share:.2%}",
            f"{g.base_share:.2%}",
            f"{g.risk:.4f}",
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
    if summary.top_at_risk_ties:
        top.caption = (
            f"{summary.top_at_risk_ties:,} more tokens tie with the last row; "
            "ties are listed by fewest in the corpus, longest first"
        )
    for t in summary.top_at_risk:
        top.add_row(
            str(t.token_id),
            t.token,
            t.group,
            f"{t.count:,}",
            f"{t.base_share:.3%}",
            f"{t.exposure:.2f}",
        )

    border = BAND_STYLE[summary.risk.band] if not summary.encoder else "dim"
    console.print(Panel(facts, title="vocabrisk scan", title_align="left", border_style=border))
    console.print(Group(groups, top))
    console.print(_advice_panel(advice))


def _advice_panel(advice: Advice) -> Panel:
    lines = [
        Text.assemble(
            ("head: ", "bold"), advice.train_head["recommendation"], (f" — {advice.train_head['why']}", "dim")
        )
    ]
    eps = advice.head_eps
    if eps:
        lines.append(
            Text.assemble(
                ("head-only Adam eps: ", "bold"),
                f"{eps['value']:g}",
                (
                    f" (keeps {eps['keeps_step']:.0%} of the step of rows with share ≥ {eps['covered_share']:.1e}; "
                    f"hidden scale {eps['hidden_scale']:.2f} from {eps['hidden_scale_from']})",
                    "dim",
                ),
            )
        )
    for row in advice.add_data:
        label, text = data_advice_text(row)
        lines.append(Text.assemble((f"{label}: ", "bold"), text, (f"; e.g. {' '.join(row['examples'][:6])}", "dim")))
    if advice.mixing:
        lines.append(Text.assemble(("mixing replay: ", "bold"), mixing_text(advice.mixing),
                                   (f"  ({advice.mixing_note})", "dim")))  # fmt: skip
    return Panel(Group(*lines), title="what to do", title_align="left")


# The rank table's columns in the order shown: (header, justify, what it shows). RANK_PRIORITY is the order
# they go in when the console is too narrow for all of them, kept last first: the rank, the name and the
# sort key stay, and no number is ever cut.
RANK_COLUMNS = {
    "#": ("right", lambda i, c: str(i)),
    "candidate": ("left", lambda i, c: c.name),
    "tokens": ("right", lambda i, c: f"{c.summary.profile.total_tokens:,}"),
    "skipped": ("right", lambda i, c: Text(f"{p.skipped_share:.1%}", style="yellow") if (p := c.summary.profile).skipped
                else "none"),
    "forecast (nats), band": ("right", lambda i, c: (f := c.summary.forecast).headline
                              + (f" ({f.low:.2f}–{f.high:.2f})" if f.possible else "")),
    "starved": ("right", lambda i, c: f"{c.summary.coverage.starved_share:.1%}"),
    "never seen": ("right", lambda i, c: f"{c.summary.baselines['never_seen_share']:.1%}"),
    "unigram KL": ("right", lambda i, c: f"{c.summary.baselines['unigram_kl']:.2f}"),
    "starved usage": ("right", lambda i, c: Text.assemble(f"{(r := c.summary.risk).score:.3f} ",
                                                          (r.band, BAND_STYLE[r.band]))),
    "epochs": ("right", lambda i, c: format_epochs(c.summary.implied_epochs)),
    "budget crossed": ("right", lambda i, c: f"step {p.step:,}" if (p := (f := c.summary.forecast).crossing(f.budget))
                       else "not in plan"),
    "risk sits in": ("left", lambda i, c: ", ".join(c.summary.top_groups)),
}  # fmt: skip
RANK_PRIORITY = ("#", "candidate", "forecast (nats), band", "budget crossed", "unigram KL", "skipped", "tokens",
                 "epochs", "starved", "starved usage", "risk sits in", "never seen")  # fmt: skip
_WRAPS = {"candidate": 24, "risk sits in": 20}  # text columns that fold, down to this width; numbers never do


def rank_columns(ranked: Sequence[Named]) -> dict:
    """The RANK_COLUMNS that apply to these candidates: "budget crossed" only where a budget was given."""
    budgeted = ranked[0].summary.forecast.budget is not None
    return {name: column for name, column in RANK_COLUMNS.items() if budgeted or name != "budget crossed"}


def render_rank(ranked: Sequence[Named], console: Console) -> None:
    cells = {name: [cell(i, c) for i, c in enumerate(ranked, 1)] for name, (_, cell) in rank_columns(ranked).items()}
    widths, dropped = _fitting({name: [Text(str(cell)).plain for cell in column] for name, column in cells.items()},
                               console.width)  # fmt: skip
    table = Table(title="Candidates, least forecast forgetting first", title_justify="left")
    for name, width in widths.items():
        table.add_column(name, justify=RANK_COLUMNS[name][0], width=width, overflow="fold")
    for row in zip(*(cells[name] for name in widths), strict=True):
        table.add_row(*row)
    console.print(table)
    if dropped:
        console.print(f"[dim]not shown at {console.width} columns: {', '.join(dropped)} "
                      "(a wider terminal, COLUMNS=200 when piped, or --format json shows them)[/]")  # fmt: skip
    for candidate in ranked:
        p = candidate.summary.profile
        if p.skipped:
            console.print(Text(f"{candidate.name}: skipped {skipped_text(p.skip_report(), example=False)}",
                               style="yellow"))  # fmt: skip
    risk = ranked[0].summary.risk
    console.print(f"[dim]plan: {plan_text({'plan': risk.plan.to_dict()})} · prior: {risk.prior_source}[/]")
    console.print(
        f"[dim]order: the forecast, the rise of loss on the base model's own text, in nats; {HOW_WELL} · "
        "unigram KL: how far the corpus's token usage is from the base model's · epochs: how many times the plan "
        "goes over each candidate · starved and never seen are shares of the head's coverable rows[/]"
    )
    for candidate in ranked:
        for warning in candidate.summary.warnings:
            console.print(Text(f"warning: {candidate.name}: {warning}", style="yellow"))


def _fitting(cells: dict[str, list[str]], width: int) -> tuple[dict[str, int], list[str]]:
    """The rank columns that fit in WIDTH with their widths, in display order, and those left out.

    Each column needs the longest word of its header and cells (numbers never wrap, and are never cut;
    a name folds to _WRAPS), plus three for its border and padding. Columns join in RANK_PRIORITY while
    they fit; the room left widens them up to their cells' full width, the numbers first, then the text.
    """

    def least(name: str) -> int:
        header = max(map(len, name.split()))
        if name in _WRAPS:
            return max(header, min(_WRAPS[name], max(map(len, cells[name]), default=1)))
        return max(header, *(len(word) for text in cells[name] for word in text.split()))

    room, widths, shown = width - 1, {}, [name for name in RANK_PRIORITY if name in cells]
    for name in shown:
        if least(name) + 3 > room:
            break
        widths[name] = least(name)
        room -= widths[name] + 3
    for name in sorted(widths, key=lambda name: name in _WRAPS):  # numbers whole on one line first, then names
        grown = min(max(len(text) for text in [name, *cells[name]]), widths[name] + room)
        room -= grown - widths[name]
        widths[name] = grown
    return {n: widths[n] for n in RANK_COLUMNS if n in widths}, [n for n in shown if n not in widths]


def render_diff(old: str, new: str, result: dict, console: Console) -> None:
    arrow = (
        f"{result['risk_before']:.3f} ({result['band_before']}) → {result['risk_after']:.3f} ({result['band_after']})"
    )
    console.print(Text.assemble(("risk ", "bold"), arrow))
    console.print(
        f"starved rows {result['starved_before']:,} → {result['starved_after']:,}: "
        f"{result['newly_starved']:,} newly starved, {result['no_longer_starved']:,} no longer starved"
    )
    console.print(
        f"[dim]plan: {plan_text({'plan': result['plan']})}; epochs over the corpus "
        f"{format_epochs(result['implied_epochs_before'])} → {format_epochs(result['implied_epochs_after'])}[/]"
    )
    for warning in result["warnings"]:
        console.print(Text(f"warning: {warning}", style="yellow"))
    if result["groups"]:
        table = _table("Groups that changed", [("group", "left"), ("starved", "right"), ("risk", "right")])
        for g in result["groups"][:12]:
            table.add_row(
                g["group"],
                f"{g['starved_before']:,} → {g['starved_after']:,}",
                f"{g['risk_before']:.4f} → {g['risk_after']:.4f}",
            )
        console.print(table)
    if result["newly_starved_tokens"]:
        tokens = " ".join(t["token"] for t in result["newly_starved_tokens"])
        console.print(Text.assemble(("newly starved, most used first: ", "bold"), tokens))


def render_calibration(data: dict, console: Console) -> None:
    """What `vocabrisk calibrate` measured and fitted."""
    cal = data["calibration"]
    table = Table(title="Probe runs: measured and fitted forgetting (nats)", title_justify="left")
    early = all("early_total" in p for p in cal["probes"])  # measured early in each run: the adaptation's source
    for name, justify in (("probe", "left"), ("head", "right"), ("forecast", "right"), ("total", "right"),
                          ("forecast", "right"), *(((f"step {EARLY_STEP}", "right"),) if early else ())):  # fmt: skip
        table.add_column(name, justify=justify)
    for p in cal["probes"]:
        table.add_row(p["name"], f"{p['head']:+.3f}", f"{p['forecast_head']:.3f}", f"{p['total']:+.3f}",
                      f"{p['forecast_total']:.3f}", *((f"{p['early_total']:+.3f}",) if early else ()))  # fmt: skip
    console.print(table)
    console.print(
        f"kappa {cal['kappa']:.3g} · body_gain {cal['body_gain']:.3g} · "
        f"adaptation {cal['adaptation']:.3f} nats · band ×/÷ {cal['band']:.2f} · "
        f"base loss on the old text {cal['old_loss']:.3f} nats\n"
        f"saved to {data['saved']}; scans of this model now use it"
    )
    left = cal.get("left_out")
    if left:
        order = "n/a" if left["spearman"] is None else f"{left['spearman']:+.2f}"
        console.print(
            f"each probe source forecast by a fit on the others ({left['runs']} runs of {left['sources']} sources): "
            f"Spearman {order} with the measured total, within ×2 for {left['within_x2']:.0%}"
        )
    else:
        console.print("[dim]fewer than 3 probe sources: no leave-one-source-out check of the fit[/]")
