"""The gate command's inputs and messages: what it refuses, how it names options and counts, where it counts."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from helpers import KOREAN, SAMPLES
from helpers import run_cli as run

from vocabrisk import scan
from vocabrisk.cli.commands import main

pytestmark = pytest.mark.usefixtures("no_config_above")


def test_missing_reference_or_mix_names_the_option(tmp_path):
    for option in ("--reference", "--mix"):
        result = CliRunner().invoke(main, ["scan", KOREAN, option, str(tmp_path / "nope.txt"), "-q"])
        output = " ".join(result.output.split())  # unwrapped
        assert result.exit_code == 2 and f"{option} {tmp_path / 'nope.txt'}: not found" in output
        assert "standard input" not in result.output


def test_group_limits_match_group_names_whatever_their_case():
    result = run("gate", KOREAN, "--max-group-risk", "hangul=1", "--max-group-risk", "LATIN=1", "-q")
    assert result.exit_code == 0, result.output
    assert "Hangul risk" in result.stdout or "token groups within max-group-risk" in result.stdout


def test_counts_in_messages_agree_in_number():
    result = run("scan", KOREAN, "-q")
    assert "1 document " in result.stdout and "1 file " in result.stdout
    assert "1 documents" not in result.stdout and "1 files" not in result.stdout


def test_gate_counts_in_worker_processes_like_scan(tmp_path):
    args = ["gate", str(SAMPLES), "--max-risk", "1", "--format", "json", "-q"]
    one, two = (json.loads(run(*args, *extra).stdout) for extra in ([], ["--workers", "2"]))
    assert one["summary"]["risk"] == two["summary"]["risk"] and one["summary"]["tokens"] == two["summary"]["tokens"]


def test_gate_refuses_a_saved_profile_given_beside_a_corpus(tmp_path):
    """Issue 21, item 10: `gate PROFILE CORPUS` counted the profile's own files as corpus."""
    scan([KOREAN], "demo").save(tmp_path / "profile")
    result = CliRunner().invoke(main, ["gate", str(tmp_path / "profile"), KOREAN, "--max-risk", "0.99", "-q"])
    assert result.exit_code == 2
    output = " ".join(result.output.split())  # the console wraps lines
    assert f"{tmp_path / 'profile'} is a saved vocabrisk profile, not a corpus to count" in output
    assert "--baseline" in output and "Traceback" not in output
