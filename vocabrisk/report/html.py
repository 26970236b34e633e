"""The HTML report: one self-contained page (inline CSS and SVG, no scripts, nothing fetched).

It must open from a CI artifact, an e-mail or an air-gapped machine, so nothing on it
points outside the file. Every section has a stable id (`ranking`, `profile-N`,
`profile-N-coverage`, `-groups`, `-tokens`, `-advice`) that tests and links can rely on.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from vocabrisk._version import __version__
from vocabrisk.advice import Advice, data_advice_text, mixing_text
from vocabrisk.report import content, plots
from vocabrisk.report.content import Named, ProfileReport, Report
from vocabrisk.risk.summary import Summary, TokenAtRisk
from vocabrisk.risk.wording import format_epochs, plan_text

STYLE = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "Noto Sans", sans-serif; color: #1f2933;
       max-width: 1040px; margin: 2rem auto; padding: 0 1.25rem; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; } h2 { margin-top: 2.5rem; border-bottom: 2px solid #e4e7eb; }
h3 { margin: 1.6rem 0 0.4rem; } .muted { color: #616e7c; font-size: 0.9rem; }
svg { max-width: 100%; height: auto; display: block; }
table { border-collapse: collapse; font-size: 0.88rem; margin: 0.6rem 0; }
th, td { padding: 0.25rem 0.7rem; border-bottom: 1px solid #e4e7eb; text-align: right; }
th:first-child, td:first-child, .text { text-align: left; } tr:nth-child(even) { background: #f8f9fa; }
.band { padding: 0.1rem 0.5rem; border-radius: 0.6rem; color: white; font-size: 0.8rem; font-weight: 600; }
.low { background: #2e7d32; } .medium { background: #f0a30a; } .high { background: #c62828; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.15rem 1.2rem; margin: 0.8rem 0; }
dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; } dl.facts dd.note { color: #666; font-size: 0.9em; }
code { background: #f1f3f5; padding: 0 0.25rem; border-radius: 3px; }
nav a { margin-right: 1rem; }
"""


def render_html(report: Report) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        '<head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(report.title)}</title><style>{STYLE}</style></head>",
        "<body>",
        f"<header><h1>{escape(report.title)}</h1>",
        f'<p class="muted">vocabrisk {escape(__version__)} · {_plan_line(report.profiles[0].summary)}</p></header>',
        _nav(report),
    ]
    if len(report.profiles) > 1:
        parts.append(_ranking(report.profiles))
    parts += [_profile(i, p) for i, p in enumerate(report.profiles, 1)]
    parts += [
        '<footer class="muted"><p><b>Risk</b> is the share of the base model\'s own token use whose output-head rows',
        "are expected to drift: rows the corpus leaves starved get tiny one-sided gradients that Adam scales up to",
        "full-size updates. Bands: low &lt; 0.05 ≤ medium &lt; 0.20 ≤ high. A row is <b>starved</b> when it is",
        "expected to spend more than half the planned run without its token in Adam's memory.</p></footer>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _nav(report: Report) -> str:
    links = ['<a href="#ranking">ranking</a>'] if len(report.profiles) > 1 else []
    links += [f'<a href="#profile-{i}">{escape(p.name)}</a>' for i, p in enumerate(report.profiles, 1)]
    return f"<nav>{''.join(links)}</nav>"


def _ranking(ranked: Sequence[Named]) -> str:
    body = "".join(
        f'<tr><td class="text">{escape(r.name)}</td><td>{s.forecast.headline}</td>'
        f"<td>{s.baselines['unigram_kl']:.2f}</td><td>{s.profile.total_tokens:,}</td>"
        f"<td>{format_epochs(s.implied_epochs)}</td><td>{s.coverage.used_share:.1%}</td>"
        f"<td>{s.coverage.starved_rows:,}</td><td>{s.risk.score:.3f}</td><td class='text'>{_badge(s.risk.band)}</td>"
        f'<td class="text">{escape(", ".join(s.top_groups))}</td></tr>'
        for r in ranked
        for s in [r.summary]
    )
    return (
        '<section id="ranking"><h2>Candidates, least forecast forgetting first</h2>'
        + plots.ranking(ranked, salt="ranking")
        + "<table><tr><th>candidate</th><th>forecast (nats)</th><th>unigram KL</th><th>tokens</th><th>epochs</th>"
        + "<th>rows used</th>"
        + "<th>starved</th><th>starved usage</th>"
        + f'<th class="text">band</th><th class="text">risk sits in</th></tr>{body}</table></section>'
    )


def _profile(index: int, report: ProfileReport) -> str:
    s, key = report.summary, f"profile-{index}"
    return "\n".join(
        [
            f'<section id="{key}" class="profile">',
            f"<h2>{escape(report.name)} {_badge(s.risk.band)}</h2>",
            _facts(s),
            f'<section id="{key}-coverage"><h3>Coverage by how much the base model uses each row</h3>',
            plots.coverage_by_usage(s.usage_bands, salt=f"{key}-coverage"),
            '<p class="muted">Coverable rows ranked by the base model\'s use (its prior) and cut into ten equal',
            "slices. Starved rows among the most used slices cost most.</p></section>",
            f'<section id="{key}-groups"><h3>Risk by token group</h3>',
            plots.risk_by_group(s.groups, salt=f"{key}-groups"),
            "</section>",
            f'<section id="{key}-tokens"><h3>Starved tokens the base model uses most</h3>',
            plots.top_tokens(s.top_at_risk, salt=f"{key}-tokens"),
            _tokens_table(s.top_at_risk),
            "</section>",
            _advice(key, report.advice),
            "</section>",
        ]
    )


def _facts(s: Summary) -> str:
    items = []
    for fact in content.facts(s):
        items.append(f"<dt>{fact.label}</dt><dd>{escape(' · '.join(fact.parts))}</dd>")
        if fact.note:
            items.append(f'<dt></dt><dd class="note">{escape(fact.note)}</dd>')
    return f'<dl class="facts">{"".join(items)}</dl>'


def _tokens_table(tokens: list[TokenAtRisk]) -> str:
    if not tokens:
        return ""
    body = "".join(
        f"<tr><td>{t.token_id}</td><td class='text'><code>{escape(t.token)}</code></td>"
        f"<td class='text'>{escape(t.group)}</td><td>{t.count:,}</td><td>{t.base_share:.3%}</td>"
        f"<td>{t.exposure:.2f}</td></tr>"
        for t in tokens
    )
    return (
        "<table><tr><th>id</th><th class='text'>token</th><th class='text'>group</th><th>count</th><th>base share</th>"
        "<th>exposure</th></tr>"
        f"{body}</table>"
    )


def _advice(key: str, advice: Advice) -> str:
    head = advice.train_head
    items = [f"<li><b>Head:</b> {escape(head['recommendation'])} <span class='muted'>— {escape(head['why'])}</span>"]
    eps = advice.head_eps
    if eps:
        items.append(
            f"<li><b>Head-only Adam eps:</b> <code>{eps['value']:g}</code> "
            f"<span class='muted'>({escape(eps['derivation'])})</span>"
        )
    for row in advice.add_data:
        examples = " ".join(f"<code>{escape(e)}</code>" for e in row["examples"][:6])
        label, text = data_advice_text(row)
        items.append(f"<li><b>{label.capitalize()}:</b> {escape(text)}; e.g. {examples}")
    if advice.mixing:
        note = escape(advice.mixing_note or advice.mixing[0]["replay"])
        items.append(f"<li><b>Mixing in replay:</b> {mixing_text(advice.mixing)} <span class='muted'>({note})</span>")
    return f'<section id="{key}-advice"><h3>What to do</h3><ul>{"".join(items)}</ul></section>'


def _badge(band: str) -> str:
    return f'<span class="band {escape(band)}">{escape(band)}</span>'


def _plan_line(s: Summary) -> str:
    return escape(f"plan: {plan_text({'plan': s.risk.plan.to_dict()})}")
