"""`vocabrisk report`: a complete, self-contained HTML page (and its Markdown twin) from saved profiles."""

from __future__ import annotations

import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from vocabrisk import Profile, SpecialTokenPolicy, Summary, rank, scan
from vocabrisk.cli.commands import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_corpora"
CORPORA = ("english-prose", "korean-notes.txt", "python-code.jsonl")
PLOT_SECTIONS = ("coverage", "groups", "tokens")
EXTERNAL = ("http:", "https:", "//", "ftp:", "file:")


pytestmark = pytest.mark.usefixtures("no_config_above")


@pytest.fixture(scope="module")
def profiles(tmp_path_factory) -> list[str]:
    root = tmp_path_factory.mktemp("profiles")
    return [str(scan([str(SAMPLES / name)], "demo").save(root / name)) for name in CORPORA]


@pytest.fixture(scope="module")
def page_of_three(profiles, tmp_path_factory) -> Path:
    pytest.importorskip("matplotlib")
    out = tmp_path_factory.mktemp("html") / "report.html"
    result = report(*profiles, "--html", str(out))
    assert result.exit_code == 0, result.output
    return out


def report(*args: str):
    return CliRunner().invoke(main, ["report", *args], catch_exceptions=False)


class Page(HTMLParser):
    """Every element's id, the sections each <svg> sits in, and every URL the page would load or link."""

    def __init__(self):
        super().__init__()
        self.ids: list[str] = []
        self.open_sections: list[str] = []
        self.svg_sections: list[str] = []
        self.urls: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.add(tag)
        if "id" in attrs:
            self.ids.append(attrs["id"])
        if tag == "section":
            self.open_sections.append(attrs.get("id", ""))
        if tag == "svg":
            self.svg_sections.append(self.open_sections[-1] if self.open_sections else "")
        self.urls += [v for k, v in attrs.items() if k in ("src", "href", "xlink:href", "action", "data") and v]

    def handle_endtag(self, tag):
        if tag == "section":
            self.open_sections.pop()


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


def test_html_report_has_every_section_and_plot_and_loads_nothing_from_outside(page_of_three):
    page = parse(page_of_three)
    plots = ["ranking"] + [f"profile-{i}-{part}" for i in (1, 2, 3) for part in PLOT_SECTIONS]
    assert {"profile-1", "profile-2", "profile-3", "profile-1-advice", "profile-3-advice", *plots} <= set(page.ids)
    assert sorted(page.svg_sections) == sorted(plots), "each plot section holds exactly one plot"
    assert len(page.ids) == len(set(page.ids)), "element ids (SVG clip paths included) collide across plots"
    assert [u for u in page.urls if u.lower().startswith(EXTERNAL)] == []
    assert all(u.startswith("#") for u in page.urls)
    assert not page.tags & {"script", "link", "iframe", "img"}


def test_sections_follow_the_ranking_least_risky_first(profiles, page_of_three):
    text = page_of_three.read_text(encoding="utf-8")
    positions = [text.index(f'<section id="profile-{i}"') for i in (1, 2, 3)]
    ranked = rank(profiles, scan_candidate=Profile.load)  # rank orders by the forecast since the forecast merge
    headings = [text.index(f"<h2>{r.name} ") for r in ranked]
    assert headings == sorted(headings) and headings[0] > positions[0]


def test_one_profile_gives_no_ranking(profiles, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "one.html"
    assert report(profiles[1], "--html", str(out)).exit_code == 0
    page = parse(out)
    assert "ranking" not in page.ids and "profile-1-tokens" in page.ids


def test_markdown_report_carries_the_same_content_as_tables(profiles, tmp_path):
    out = tmp_path / "report.md"
    assert report(*profiles, "--markdown", str(out)).exit_code == 0
    text = out.read_text(encoding="utf-8")
    assert text.count("## ") >= 4 and "## Candidates, least forecast forgetting first" in text
    for heading in ("Coverage by how much the base model uses each row", "Risk by token group", "What to do"):
        assert text.count(f"### {heading}") == 3
    assert report(profiles[0], "--markdown", "-").stdout.startswith("# vocabrisk: ")


def test_the_report_judges_under_the_plan_the_gate_is_configured_with(profiles, tmp_path):
    (tmp_path / "vocabrisk.toml").write_text("[plan]\ntokens-per-step = 4096\nsteps = 500\n")
    assert "**plan** 500 steps × 4,096 tokens" in report(profiles[0], "--markdown", "-").stdout
    assert "**plan** 800 steps × 4,096 tokens" in report(profiles[0], "--steps", "800", "--markdown", "-").stdout


def test_rewriting_a_report_replaces_it_whole(profiles, tmp_path):
    out = tmp_path / "report.md"
    out.write_text("stale")
    assert report(profiles[0], "--markdown", str(out)).exit_code == 0
    assert out.read_text().startswith("# vocabrisk")
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]


def test_usage_bands_split_the_coverable_rows_and_hold_all_the_risk(profiles):
    from vocabrisk.profile.profile import Profile

    summary = Summary.of(Profile.load(profiles[1]))
    bands = summary.usage_bands
    assert sum(b.rows for b in bands) == int(summary.profile.coverable.sum())
    assert all(b.fed + b.seen_starved + b.never_seen == b.rows for b in bands)
    assert np.isclose(sum(b.base_share for b in bands), 1.0)
    assert np.isclose(sum(b.risk for b in bands), summary.risk.score)
    mean_use = [b.base_share / b.rows for b in bands]
    assert mean_use == sorted(mean_use, reverse=True)


def test_profiles_that_cannot_be_ranked_together_are_refused(profiles, tmp_path):
    other = scan([str(SAMPLES / "english-prose")], "demo", policy=SpecialTokenPolicy(append_eos=True))
    result = report(profiles[0], str(other.save(tmp_path / "eos")), "--markdown", str(tmp_path / "r.md"))
    assert result.exit_code == 2 and "special-token policies" in result.stderr
    assert report(str(SAMPLES / "english-prose"), "--html", str(tmp_path / "r.html")).exit_code == 2
    assert not list(tmp_path.glob("r.*"))


def test_report_with_no_output_named_prints_the_markdown(profiles):
    printed = report(profiles[0])
    assert printed.exit_code == 0 and printed.stdout.startswith("# vocabrisk")


def test_without_matplotlib_the_html_report_says_what_to_install(profiles, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    result = report(profiles[0], "--html", str(tmp_path / "r.html"))
    assert result.exit_code == 2
    assert "vocabrisk[report]" in result.stderr


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_headless_chromium_renders_the_plots(page_of_three, tmp_path):
    image = pytest.importorskip("matplotlib.image")
    shot = tmp_path / "shot.png"
    subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic", "--hide-scrollbars",
         f"--user-data-dir={tmp_path / 'chrome'}", "--window-size=1200,1600", f"--screenshot={shot}",
         page_of_three.as_uri()],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    pixels = image.imread(shot)[..., :3]
    assert pixels.shape[:2] == (1600, 1200)
    high_band_red = np.all(np.abs(pixels - np.array([0xC6, 0x28, 0x28]) / 255) < 0.04, axis=-1)
    assert high_band_red.mean() > 0.002, "the ranking and risk bars (drawn in the high band's red) are missing"
