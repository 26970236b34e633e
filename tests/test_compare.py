"""`vocabrisk rank` and `vocabrisk diff` as a user sees them: the order, the numbers and the tokens shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from vocabrisk import scan
from vocabrisk.cli.commands import main

SAMPLES = Path(__file__).resolve().parents[1] / "sample_corpora"
CORPORA = ("english-prose", "korean-notes.txt", "python-code.jsonl", "numbers-tables.csv")


pytestmark = pytest.mark.usefixtures("no_config_above")


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("profiles")
    corpora = {"english-prose": "english-prose", "korean": "korean-notes.txt"}
    return {name: str(scan([str(SAMPLES / corpus)], "demo").save(root / name)) for name, corpus in corpora.items()}


def cli(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_rank_orders_candidates_by_unigram_kl_and_prints_each_ones_numbers(saved):
    # english-prose goes in as its saved profile: loaded, not rescanned, and ranked like the corpora
    candidates = [str(SAMPLES / name) for name in CORPORA]
    candidates[0] = saved["english-prose"]
    data = json.loads(cli("rank", *candidates, "--format", "json"))
    rows = data["candidates"]
    assert data["model"] == "demo"
    assert [Path(row["candidate"]).name for row in rows] == [
        "python-code.jsonl",
        "english-prose",
        "korean-notes.txt",
        "numbers-tables.csv",  # v7: the tables spread over the fewest tokens (H1 4.9 nats), so their pushes add up
    ]
    forecasts = [row["forecast"]["total_nats"] for row in rows]
    assert forecasts == sorted(forecasts) and len(set(forecasts)) == len(forecasts)
    prose = json.loads(cli("scan", str(SAMPLES / "english-prose"), "--format", "json"))
    assert (rows[1]["tokens"], rows[1]["risk"]) == (prose["tokens"], prose["risk"]["score"])
    assert rows[1]["forecast"]["total_nats"] == prose["forecast"]["total_nats"]
    assert rows[2]["top_groups"][0] == "Latin", "Korean notes starve the rows English text uses"

    text = cli("rank", *candidates)
    assert text.startswith("Candidates, least forecast forgetting first")
    for rank, row in enumerate(rows, 1):
        (line,) = [line for line in text.splitlines() if line.startswith(f"│ {rank} │")]
        shown = (f"{row['tokens']:,}", f"{row['forecast']['total_nats']:+.3f}", f"{row['baselines']['unigram_kl']:.2f}",
                 f"{row['risk']:.3f}", row["band"])  # fmt: skip
        assert all(f" {value} " in line for value in shown), (shown, line)
    warned = [line.split(": ")[1] for line in text.splitlines() if line.startswith("warning: ")]
    assert warned == [row["candidate"] for row in rows], "the notes name the candidates in the ranked order"


def test_rank_refuses_candidates_under_different_priors(saved):
    result = CliRunner().invoke(main, ["rank", saved["english-prose"], str(SAMPLES / "korean-notes.txt"),
                                       "--prior", "tokenizer"])  # fmt: skip
    assert result.exit_code == 2
    assert "risks are only comparable under one prior" in " ".join(result.stderr.split())


def test_diff_says_how_risk_starved_rows_groups_and_tokens_changed(saved):
    prose, korean = saved["english-prose"], saved["korean"]
    forward = json.loads(cli("diff", prose, korean, "--format", "json"))
    backward = json.loads(cli("diff", korean, prose, "--format", "json"))
    risks = {name: json.loads(cli("scan", path, "--format", "json"))["risk"]["score"] for name, path in saved.items()}
    assert (forward["risk_before"], forward["risk_after"]) == (risks["english-prose"], risks["korean"])
    assert (backward["risk_before"], backward["risk_after"]) == (risks["korean"], risks["english-prose"])
    f = forward
    assert f["starved_after"] - f["starved_before"] == f["newly_starved"] - f["no_longer_starved"]
    assert (forward["newly_starved"], forward["no_longer_starved"]) == (
        backward["no_longer_starved"],
        backward["newly_starved"],
    )
    assert forward["newly_starved_tokens"] == backward["no_longer_starved_tokens"]
    # Korean notes instead of English prose starve the English words the base model uses most
    assert [t["token"] for t in forward["newly_starved_tokens"][:3]] == ["␣the", "␣a", "␣to"]
    assert {t["group"] for t in forward["newly_starved_tokens"][:10]} == {"Latin"}
    change = [abs(g["risk_after"] - g["risk_before"]) for g in forward["groups"]]
    assert change == sorted(change, reverse=True) and forward["groups"][0]["group"] == "Latin"

    text = cli("diff", prose, korean)
    assert f"risk {f['risk_before']:.3f} ({f['band_before']}) → {f['risk_after']:.3f} ({f['band_after']})" in text
    assert (
        f"starved rows {f['starved_before']:,} → {f['starved_after']:,}: {f['newly_starved']:,} newly starved, "
        f"{f['no_longer_starved']:,} no longer starved"
    ) in text
    latin = f["groups"][0]
    (row,) = [line for line in text.splitlines() if line.startswith("│ Latin ")]
    assert f"{latin['starved_before']:,} → {latin['starved_after']:,}" in row
    assert f"{latin['risk_before']:.4f} → {latin['risk_after']:.4f}" in row
    tokens = " ".join(t["token"] for t in f["newly_starved_tokens"])
    assert f"newly starved, most used first: {tokens}" in " ".join(text.split())


def test_diff_of_a_profile_with_itself_changes_nothing(saved):
    same = json.loads(cli("diff", saved["korean"], saved["korean"], "--format", "json"))
    assert same["risk_before"] == same["risk_after"] and same["forecast_before"] == same["forecast_after"]
    assert (same["newly_starved"], same["no_longer_starved"], same["groups"]) == (0, 0, [])
    assert "Groups that changed" not in cli("diff", saved["korean"], saved["korean"])


@pytest.fixture(scope="module")
def ranked_samples():
    from vocabrisk import rank

    return rank([str(path) for path in sorted(SAMPLES.iterdir())], "demo")  # long absolute names, as users give


@pytest.mark.parametrize("width", [80, 100, 160])
def test_the_rank_table_keeps_the_name_and_the_sort_key_and_never_cuts_a_number(ranked_samples, width):
    import io

    from rich.console import Console

    from vocabrisk.report.terminal import rank_columns, render_rank

    buffer = io.StringIO()
    render_rank(ranked_samples, Console(file=buffer, width=width, color_system=None))
    text = buffer.getvalue()
    assert max(map(len, text.splitlines())) <= width and "…" not in text
    header = " ".join(line for line in text.splitlines() if line.startswith("┃"))
    assert all(name in header for name in ("#", "candidate", "unigram"))
    rows = [line for line in text.splitlines() if line.startswith("│")]
    for candidate in ranked_samples:  # every figure shown is shown whole, on one line
        s = candidate.summary
        assert any(f" {s.baselines['unigram_kl']:.2f} " in row for row in rows)
        for figure in (f"{s.profile.total_tokens:,}", f"{s.forecast.total:+.3f}", f"{s.coverage.starved_share:.1%}"):
            assert any(f" {figure} " in row for row in rows) or figure not in text.replace("\n", "")
    columns = rank_columns(ranked_samples)
    shown = [name for name in columns if name.split()[0] in header]
    dropped = [line for line in text.splitlines() if line.startswith("not shown at")]
    if len(shown) < len(columns):
        assert dropped and f"not shown at {width} columns:" in dropped[0]
    else:
        assert not dropped
    if width == 80:
        assert "forecast" in header and dropped  # the forecast stays before the less important columns


def test_rank_piped_takes_columns_from_the_environment(saved):
    args = ["rank", saved["english-prose"], saved["korean"]]
    narrow = CliRunner(env={"COLUMNS": "80"}).invoke(main, args).stdout
    assert max(map(len, narrow.splitlines())) <= 80 and "unigram" in narrow and "not shown at 80 columns" in narrow
    wide = CliRunner(env={"COLUMNS": ""}).invoke(main, args).stdout  # a pipe with no COLUMNS: 160
    assert max(map(len, wide.splitlines())) <= 160 and "not shown" not in wide and "risk sits in" in wide


def test_the_html_and_markdown_rankings_show_the_column_their_heading_sorts_by(saved, tmp_path):
    from vocabrisk import Profile
    from vocabrisk.compare import rank
    from vocabrisk.report.content import build_report
    from vocabrisk.report.markdown import render_markdown

    ranked = rank([saved["english-prose"], saved["korean"]], scan_candidate=Profile.load)
    markdown = render_markdown(build_report(ranked))
    (header,) = [line for line in markdown.splitlines() if line.startswith("| #")]
    assert "forecast (nats)" in header
    for r in ranked:
        assert f"| {r.summary.forecast.headline} |" in markdown
    pytest.importorskip("matplotlib")
    from vocabrisk.report.html import render_html

    page = render_html(build_report(ranked))
    section = page[page.index('<section id="ranking">') :]
    assert "forecast" in section[: section.index("</h2>")] and "<th>forecast (nats)</th>" in section
