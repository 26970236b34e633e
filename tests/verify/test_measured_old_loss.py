"""`--old-loss measure`: the base model's loss on the old text, from one forward pass, kept for later runs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from click.testing import CliRunner  # noqa: E402

from vocabrisk import scan  # noqa: E402
from vocabrisk.cli.commands import main  # noqa: E402
from vocabrisk.model.loaded import load_model  # noqa: E402
from vocabrisk.risk.forecast import transfer_weight  # noqa: E402
from vocabrisk.verify.old_loss import OLD_LOSS_WINDOW, loss_on, measure_old_loss  # noqa: E402
from vocabrisk.verify.run import load_causal_lm  # noqa: E402

KOREAN = str(Path(__file__).resolve().parents[2] / "sample_corpora" / "korean-notes.txt")
PLAN = ["--model", "demo", "--steps", "50", "--tokens-per-step", "1024", "--lr", "1e-4"]


def test_the_measured_loss_is_the_models_on_its_old_text_and_is_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    loaded = load_model("demo")
    old = scan([KOREAN], loaded).old_text
    value = measure_old_loss(loaded, old)
    ids = torch.from_numpy(old.ids.astype("int64"))
    assert math.isclose(value, loss_on(load_causal_lm(loaded, "cpu"), ids, "cpu"), rel_tol=1e-6)
    assert 0 < value < math.log(loaded.vocab.size) + 1  # a trained model predicts better than a uniform guess
    (kept,) = (tmp_path / "vocabrisk" / "old-loss").glob("*.json")
    assert json.loads(kept.read_text())["window"] == OLD_LOSS_WINDOW
    monkeypatch.setattr("vocabrisk.verify.run.load_causal_lm", lambda *_: pytest.fail("measured twice"))
    assert measure_old_loss(loaded, old) == value


def test_scan_measures_the_old_loss_when_asked_and_the_forecast_weighs_its_pathways_by_it(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    result = CliRunner().invoke(main, ["scan", KOREAN, *PLAN, "--old-loss", "measure", "--format", "json"])
    assert result.exit_code == 0, result.output
    forecast = json.loads(result.stdout)["forecast"]
    loss = forecast["constants"]["old_loss"]
    assert loss > 0 and forecast["terms"]["transfer_weight"] == transfer_weight(loss)
    report = CliRunner().invoke(main, ["report", str(tmp_path), "--old-loss", "measure"])
    assert report.exit_code == 2 and "--old-loss measure" in report.output
