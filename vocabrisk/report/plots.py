"""The report's plots, drawn with matplotlib and returned as inline SVG.

SVG keeps the page self-contained and sharp at any zoom, and with text kept as text
(`svg.fonttype: none`) the browser draws token labels in Hangul, Cyrillic or any script
with its own fonts, where matplotlib's bundled DejaVu has no glyphs. Figures are built
with the object API (no pyplot, no GUI backend, no global figure registry).
"""

from __future__ import annotations

import io
import re
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

from vocabrisk.errors import require

if TYPE_CHECKING:
    from vocabrisk.report.content import Named
    from vocabrisk.risk.summary import GroupRisk, TokenAtRisk, UsageBand

BAND_COLORS = {"low": "#2e7d32", "medium": "#f0a30a", "high": "#c62828"}
FED, SEEN_STARVED, NEVER_SEEN = "#43a047", "#f0a30a", "#d32f2f"
BASE, RISK, CORPUS = "#b0bec5", "#c62828", "#1e88e5"
WIDTH = 9.0  # inches; the page scales the SVG to its column
MAX_LABEL = 42


def coverage_by_usage(usage: list[UsageBand], salt: str) -> str:
    """Left: what share of each usage band the corpus feeds; right: the usage and risk each band holds."""
    fig = _figure(3.6)
    left, right = fig.subplots(1, 2, width_ratios=(3, 2))
    labels = [f"{u.upto}%" for u in usage]
    x = range(len(usage))
    bottom = [0.0] * len(usage)
    for key, color, name in (
        ("fed", FED, "fed"),
        ("seen_starved", SEEN_STARVED, "seen, still starved"),
        ("never_seen", NEVER_SEEN, "never seen"),
    ):
        share = [getattr(u, key) / u.rows for u in usage]
        left.bar(x, share, bottom=bottom, color=color, label=name, width=0.8)
        bottom = [b + s for b, s in zip(bottom, share, strict=True)]
    left.set_xticks(list(x), labels)
    left.set_ylim(0, 1)
    left.yaxis.set_major_formatter(_percent())
    left.set_ylabel("rows in the slice")
    left.set_xlabel("rows ranked by the base model's use: slice up to …% (most used first)")
    _legend_above(left, ncols=3)
    left.set_title("Which rows the corpus feeds", loc="left", fontsize=10, pad=24)

    right.bar(x, [u.base_share for u in usage], color=BASE, label="base model's use", width=0.8)
    right.bar(x, [u.risk for u in usage], color=RISK, label="of it at risk", width=0.5)
    right.set_xticks(list(x), labels, fontsize=8)
    right.yaxis.set_major_formatter(_percent())
    right.set_xlabel("slice")
    _legend_above(right, ncols=2)
    right.set_title("Where the risk sits", loc="left", fontsize=10, pad=24)
    return _svg(fig, salt)


def risk_by_group(groups: list[GroupRisk], salt: str, limit: int = 12) -> str:
    """Left: each group's share of the corpus against the base model's use; right: risk carried."""
    shown = [g for g in groups if g.risk > 0 or g.base_share > 0][:limit]
    fig = _figure(0.9 + 0.32 * max(len(shown), 3))
    left, right = fig.subplots(1, 2, sharey=True)
    y = list(range(len(shown)))
    left.barh([i - 0.2 for i in y], [g.base_share for g in shown], height=0.4, color=BASE, label="base model")
    left.barh([i + 0.2 for i in y], [g.corpus_share for g in shown], height=0.4, color=CORPUS, label="corpus")
    left.set_yticks(y, [g.group for g in shown])
    left.invert_yaxis()
    left.xaxis.set_major_formatter(_percent())
    _legend_above(left, ncols=2)
    left.set_title("Share of tokens", loc="left", fontsize=10, pad=24)

    bars = right.barh(y, [g.risk for g in shown], height=0.6, color=RISK)
    right.bar_label(bars, [f"{g.starved:,}/{g.rows:,} starved" for g in shown], padding=3, fontsize=7)
    right.set_xlim(0, max([g.risk for g in shown] + [1e-9]) * 1.6)
    right.set_title("Risk carried", loc="left", fontsize=10, pad=24)
    return _svg(fig, salt)


def top_tokens(tokens: list[TokenAtRisk], salt: str) -> str:
    """The starved tokens whose rows cost most: base-model use times exposure."""
    fig = _figure(0.9 + 0.28 * max(len(tokens), 3))
    axes = fig.subplots()
    y = list(range(len(tokens)))
    axes.barh(y, [t.base_share for t in tokens], height=0.7, color=BASE, label="base model's use")
    axes.barh(y, [t.base_share * t.exposure for t in tokens], height=0.4, color=RISK, label="at risk")
    axes.set_yticks(y, [_short(f"{t.token}  ({t.group})") for t in tokens])
    axes.invert_yaxis()
    axes.xaxis.set_major_formatter(_percent(decimals=2))
    axes.set_xlabel("share of the base model's token use")
    _legend_above(axes, ncols=2)
    if not tokens:
        axes.text(0.5, 0.5, "no starved token the base model uses", ha="center", transform=axes.transAxes)
    return _svg(fig, salt)


def ranking(ranked: Sequence[Named], salt: str) -> str:
    """Candidate corpora in the order ranked, by forecast forgetting with its band, coloured by the risk band."""
    forecasts = [r.summary.forecast for r in ranked]
    shown = [min(f.total, f.ceiling) for f in forecasts]  # past the ceiling only the ceiling is a true number
    fig = _figure(0.9 + 0.36 * max(len(ranked), 2))
    axes = fig.subplots()
    y = list(range(len(ranked)))
    spread = [[v - f.low if f.possible else 0.0 for v, f in zip(shown, forecasts, strict=True)],
              [f.high - v if f.possible else 0.0 for v, f in zip(shown, forecasts, strict=True)]]  # fmt: skip
    colors = [BAND_COLORS[r.summary.risk.band] for r in ranked]
    bars = axes.barh(y, shown, height=0.6, color=colors, xerr=spread, error_kw={"elinewidth": 0.8, "capsize": 2})
    axes.bar_label(bars, [f"{f.headline} nats" for f in forecasts], padding=3, fontsize=8)
    axes.set_yticks(y, [_short(r.name) for r in ranked])
    axes.invert_yaxis()
    axes.set_xlim(0, max([f.high if f.possible else v for v, f in zip(shown, forecasts, strict=True)] + [0.01]) * 1.3)
    axes.set_xlabel("forecast forgetting (nats), with its band; colour: starved-usage band")
    return _svg(fig, salt)


def _figure(height: float):
    fig = require("matplotlib.figure", "report", "the report's plots").Figure(
        figsize=(WIDTH, height), layout="constrained"
    )
    fig.set_facecolor("white")
    return fig


def _legend_above(axes, ncols: int) -> None:
    """A one-row legend between the title and the plot, where it cannot hide a bar."""
    axes.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncols=ncols, fontsize=8, frameon=False, borderaxespad=0.2)


def _percent(decimals: int = 0):
    from matplotlib.ticker import PercentFormatter

    return PercentFormatter(xmax=1.0, decimals=decimals)


def _short(label: str) -> str:
    return label if len(label) <= MAX_LABEL else "…" + label[-(MAX_LABEL - 1) :]


def _svg(fig, salt: str) -> str:
    """The figure as an <svg> element to inline: no XML prolog, no dates, ids unique per SALT."""
    import matplotlib

    buffer = io.StringIO()
    # a fixed hashsalt makes the hashed ids (clip paths, markers) the same from run to run
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from", category=UserWarning)
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    svg = buffer.getvalue()
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg[svg.index("<svg") :], flags=re.DOTALL)
    # matplotlib numbers its element ids per figure (figure_1, patch_1...): prefix them so a page of
    # several plots has unique ids, and every internal reference (#id, url(#id)) follows.
    ids = set(re.findall(r'\sid="([^"]+)"', svg))
    svg = re.sub(r'(\sid=")([^"]+)"', rf'\1{salt}-\2"', svg)
    return re.sub(r"(href=\"#|url\(#)([^\")]+)", lambda m: m[1] + (f"{salt}-{m[2]}" if m[2] in ids else m[2]), svg)
