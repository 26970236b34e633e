"""`vocabrisk calibrate` on the demo model: probe runs on CPU, constants saved and used by later scans."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("torch")
pytest.importorskip("transformers")

import vocabrisk
from vocabrisk import scan
from vocabrisk.cli.commands import main
from vocabrisk.risk.summary import Summary

SAMPLES = Path(__file__).resolve().parents[2] / "sample_corpora"


def test_calibrate_fits_the_demo_model_and_later_scans_use_it(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    probes = [str(SAMPLES / "english-prose"), str(SAMPLES / "python-code.jsonl")]
    args = ["calibrate", "--model", "demo", "--steps", "12", "--tokens-per-step", "512", "--seq-len", "64"]
    args += ["--warmup-steps", "2", "--eval-windows", "8", "--format", "json"]
    for probe in probes:
        args += ["--probe", probe]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert len(data["runs"]) == 4  # each probe whole and as its first quarter
    assert all(math.isfinite(run["total"]) and math.isfinite(run["head"]) for run in data["runs"])
    assert all(math.isfinite(run["early_total"]) for run in data["runs"])  # measured at step 5 of 12: term 7
    assert data["calibration"]["adaptation"] >= 0.0
    assert [run["epochs"] for run in data["runs"]][1] > 3 * data["runs"][0]["epochs"]  # the quarter repeats more
    calibration = data["calibration"]
    assert calibration["source"] == "calibrated on 4 probe runs"
    assert calibration["kappa"] > 0 and calibration["band"] >= 1.5
    assert 0 < calibration["old_loss"] < 20  # the demo model's loss on its old text, which weighs the body's pathways
    assert Path(data["saved"]).is_relative_to(tmp_path)
    forecast = Summary.of(scan([str(SAMPLES / "korean-notes.txt")], "demo")).to_dict()["forecast"]
    assert forecast["calibration"] == "calibrated on 4 probe runs"
    assert forecast["constants"]["kappa"] == calibration["kappa"]
    assert forecast["constants"]["old_loss"] == calibration["old_loss"]


def test_calibrate_without_torch_style_errors_are_actionable():
    result = CliRunner().invoke(main, ["calibrate", "--model", "demo", "--probe", "/nonexistent"])
    assert result.exit_code == 2
    assert "does not exist" in result.output


def test_calibrate_with_no_probe_trains_the_shipped_set_and_checks_each_source_left_out(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    args = ["calibrate", "--model", "demo", "--steps", "6", "--tokens-per-step", "256", "--seq-len", "64"]
    result = CliRunner().invoke(main, [*args, "--warmup-steps", "1", "--eval-windows", "4", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    probes = {run["probe"].split(" (")[0] for run in data["runs"]}
    shipped = json.loads((Path(vocabrisk.__file__).parent / "verify" / "probe_set" / "sources.json").read_text())
    assert probes == {f"{name}.jsonl.gz" for name in shipped} and len(shipped) == 8
    left_out = data["calibration"]["left_out"]
    assert left_out["sources"] == 8 and left_out["runs"] == 16  # each source's two runs forecast by the others' fit
    assert 0.0 <= left_out["within_x2"] <= 1.0
