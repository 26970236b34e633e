"""`--old-loss measure`: the base model's loss on the old text, from one forward pass, kept for later runs."""

from __future__ import annotations

import json
import math
import shutil
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


def test_weights_trained_again_in_place_are_measured_again(tmp_path, monkeypatch):
    """The calibration key names the model, not its weights: the kept loss is found by both."""
    from safetensors.torch import load_file, save_file

    from vocabrisk.model.resolve import DEMO_MODEL_DIR

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = shutil.copytree(DEMO_MODEL_DIR, tmp_path / "model")
    loaded = load_model(str(folder))
    old = scan([KOREAN], loaded).old_text
    before = measure_old_loss(loaded, old)
    weights = folder / "model.safetensors"
    tensors = load_file(weights)
    save_file({name: t * 0.5 if t.dim() == 2 else t for name, t in tensors.items()}, weights, {"format": "pt"})
    retrained = load_model(str(folder))
    assert retrained.calibration_key == loaded.calibration_key  # the same model as far as calibration can tell
    after = measure_old_loss(retrained, old)
    assert not math.isclose(after, before, rel_tol=1e-3)
    assert len(list((tmp_path / "cache" / "vocabrisk" / "old-loss").glob("*.json"))) == 2


def test_auto_measures_a_small_model_once_says_so_and_a_report_of_the_saved_profile_finds_it(tmp_path, monkeypatch):
    """`--old-loss auto`, the default: the demo model (1.5M weights) is measured at the first scan, and kept."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = CliRunner().invoke(main, ["scan", KOREAN, *PLAN, "--out", str(tmp_path / "saved"), "--format", "json"])
    assert first.exit_code == 0, first.output
    assert "measuring demo's loss on the old text" in first.stderr
    loss = json.loads(first.stdout)["forecast"]["constants"]["old_loss"]
    assert f"--old-loss {loss:.3f} gives the same" in " ".join(first.stderr.split())  # for a machine without torch
    loaded = load_model("demo")
    assert loss == measure_old_loss(loaded, scan([KOREAN], loaded).old_text)  # the same pass, kept
    monkeypatch.setattr("vocabrisk.verify.run.load_causal_lm", lambda *_: pytest.fail("measured twice"))
    again = CliRunner().invoke(main, ["rank", KOREAN, *PLAN, "--format", "json"])
    assert again.exit_code == 0 and "measuring" not in again.stderr
    assert json.loads(again.stdout)["candidates"][0]["forecast"]["constants"]["old_loss"] == loss
    report = CliRunner().invoke(main, ["report", str(tmp_path / "saved")])
    assert f"base loss on old text {loss:.2f} nats" in " ".join(report.stdout.replace("|", " ").split())
    quiet = CliRunner().invoke(main, ["scan", KOREAN, *PLAN, "--old-loss", "none", "--format", "json"])
    assert json.loads(quiet.stdout)["forecast"]["constants"]["old_loss"] is None


@pytest.mark.parametrize("budget", [1 << 25, 1000, 1])  # one product, several, one position at a time
def test_position_losses_are_the_cross_entropy_of_the_logits_however_they_are_split(budget, monkeypatch):
    """The logits are computed a budget at once, so that a 150k vocabulary measures in bounded memory."""
    from vocabrisk.verify import measure

    generator = torch.Generator().manual_seed(0)
    hidden, matrix = torch.randn(3, 17, 8, generator=generator), torch.randn(50, 8, generator=generator)
    windows = torch.randint(0, 50, (3, 17), generator=generator)
    monkeypatch.setattr(measure, "LOGITS_BUDGET", budget)
    losses = measure.position_losses(hidden, matrix, windows, "cpu")
    logits = hidden[:, :-1] @ matrix.T
    expected = -torch.log_softmax(logits, dim=-1).gather(-1, windows[:, 1:, None])[..., 0]
    assert losses.shape == (3, 16)
    torch.testing.assert_close(losses, expected, rtol=1e-5, atol=1e-5)
