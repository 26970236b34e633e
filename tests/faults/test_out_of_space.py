"""Out of space at every write a command makes: the profile, the checkpoint, each --report format (issue 32).

As SQLite's test suite fails each write in turn, each case runs one command on a real tmpfs left with 0, 1,
2, ... pages free, until the command has room to finish: every write it makes meets the full disk at one
level or another. After each run the command must have finished whole (exit 0 or the gate's 1) or said
which path it could not write and why (exit 2), with the earlier outputs whole, no staging left behind, and
nothing that reads as a result it did not reach. Mounting needs root with CAP_SYS_ADMIN; elsewhere they skip.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import KOREAN, SAMPLES, Disk, digest, run_cli

PAGE = 4096  # tmpfs allocates in pages: one more page free is the next write point reached
ENGLISH = str(SAMPLES / "english-prose")
FULL = "No space left on device"


def levels(disk: Disk, command: Callable[[], object]) -> Iterator[tuple[int, object]]:
    """Run COMMAND with 0, 1, 2, ... pages free, yielding each level and its result, up to the first that
    does not fail for want of space; at least one level must fail, or the disk never filled."""
    for pages in range(shutil.disk_usage(disk.root).free // PAGE + 1):
        disk.fill(leave=pages * PAGE)
        try:
            result = command()
        finally:
            disk.empty()
        yield pages, result
        if result.exit_code != 2:
            assert pages > 0, "the command never met the full disk"
            return
    pytest.fail("the command failed with the whole disk free")


def said(result) -> str:
    return " ".join(result.output.split())


def failed_for_space(result, path: Path) -> bool:
    text = said(result)
    assert "Traceback" not in text and "report it if the input is valid" not in text, text
    return result.exit_code == 2 and str(path) in text and FULL in text


def test_a_profile_replaced_on_a_full_disk_is_the_old_or_the_new_one_whole(small_disk, tmp_path):
    out = small_disk.root / "profile"
    assert run_cli("scan", ENGLISH, "--out", str(out), "-q").exit_code == 0
    old = digest(out)
    assert run_cli("scan", KOREAN, "--out", str(tmp_path / "new"), "-q").exit_code == 0
    new = digest(tmp_path / "new")
    for pages, result in levels(small_disk, lambda: run_cli("scan", KOREAN, "--out", str(out), "--force", "-q")):
        assert small_disk.litter() == [], pages
        if result.exit_code == 2:
            assert failed_for_space(result, out), said(result)
            assert digest(out) == old, pages
        else:
            assert result.exit_code == 0 and digest(out) == new


def test_a_checkpoint_on_a_full_disk_resumes_into_the_undisturbed_profile(small_disk, tmp_path):
    inputs = [KOREAN, ENGLISH]  # eight files: the checkpoint is written shard after shard
    assert run_cli("scan", *inputs, "--out", str(tmp_path / "undisturbed"), "-q").exit_code == 0
    expected = digest(tmp_path / "undisturbed")
    checkpoint = small_disk.root / "checkpoint"
    failures = 0
    for pages, result in levels(small_disk, lambda: run_cli("scan", *inputs, "--checkpoint", str(checkpoint), "-q")):
        assert small_disk.litter() == [], pages
        if result.exit_code == 0:
            break
        failures += 1
        assert failed_for_space(result, checkpoint), said(result)
        resume = ["--resume"] if checkpoint.exists() else []
        out = tmp_path / f"resumed-{pages}"
        resumed = run_cli("scan", *inputs, "--checkpoint", str(checkpoint), *resume, "--out", str(out), "-q")
        assert resumed.exit_code == 0, said(resumed)
        assert digest(out) == expected, pages
        shutil.rmtree(checkpoint)
    assert failures > 1  # the disk filled at more than one shard


REPORTS = ("text", "json", "junit", "sarif", "markdown", "github")  # every --report format


def test_a_gate_that_cannot_write_its_reports_leaves_none_of_an_earlier_pass(small_disk, tmp_path):
    def gate(folder: Path, limit: str):
        reports = [f"--report={name}={folder / name}" for name in REPORTS]
        return run_cli("gate", KOREAN, "--max-risk", limit, *reports, "-q")

    assert gate(small_disk.root, "1").exit_code == 0  # an earlier run's passing reports
    passed = digest(small_disk.root)
    assert gate(tmp_path, "0.5").exit_code == 1  # what this run's breach reads, written on a free disk
    breach = digest(tmp_path)
    for pages, result in levels(small_disk, lambda: gate(small_disk.root, "0.5")):
        now = digest(small_disk.root)
        assert small_disk.litter() == [], pages
        if result.exit_code == 1:
            assert now == breach
            continue
        assert failed_for_space(result, small_disk.root), said(result)
        for name in REPORTS:  # the error, or no report at all (removing one needs no space): never the pass
            assert now.get(name) != passed[name], (pages, name)
            if name in now:
                assert "cannot write the report" in (small_disk.root / name).read_text(), (pages, name)


def test_reports_written_together_are_all_replaced_or_none(small_disk, tmp_path):
    for name, corpus in (("old", ENGLISH), ("new", KOREAN)):
        assert run_cli("scan", corpus, "--out", str(tmp_path / name), "-q").exit_code == 0
    html, markdown = small_disk.root / "report.html", small_disk.root / "report.md"

    def report(profile: str, *html_flag: str):
        return run_cli("report", str(tmp_path / profile), *html_flag, "--markdown", str(markdown))

    assert report("old").exit_code == 0  # an earlier markdown report, and no HTML one
    old = digest(small_disk.root)
    assert list(old) == ["report.md"]
    for pages, result in levels(small_disk, lambda: report("new", "--html", str(html))):
        assert small_disk.litter() == [], pages
        if result.exit_code == 2:
            assert failed_for_space(result, small_disk.root), said(result)
            assert digest(small_disk.root) == old, pages
        else:
            assert result.exit_code == 0 and list(digest(small_disk.root)) == ["report.html", "report.md"]
            assert digest(small_disk.root)["report.md"] != old["report.md"]
