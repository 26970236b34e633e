"""`--old-loss`: the base model's loss on the old text weighs the forecast's two body pathways (v9, v10).

These run with or without torch: where `auto` would measure, a test makes measuring too costly or keeps a loss
first (tests/verify/test_measured_old_loss.py measures).
"""

from __future__ import annotations

import json
import shutil

import pytest
from helpers import KOREAN, SAMPLES, run_cli

from vocabrisk.model.resolve import DEMO_MODEL_DIR
from vocabrisk.profile.profile import Profile
from vocabrisk.risk.calibration import Calibration, save_calibration
from vocabrisk.risk.forecast import DRIFT_FLOOR
from vocabrisk.storage.outputs import write_atomic
from vocabrisk.verify import old_loss

PLAN = ("--model", "demo", "--steps", "100", "--tokens-per-step", "1024", "--lr", "1e-4")


def forecast_of(*args: str) -> dict:
    return json.loads(run_cli("scan", KOREAN, *PLAN, *args, "--format", "json").stdout)["forecast"]


def test_scan_rank_and_gate_take_the_old_loss_and_say_what_it_did():
    unknown, drift = forecast_of("--old-loss", "none"), forecast_of("--old-loss", "4.0")
    assert unknown["constants"]["old_loss"] is None and unknown["terms"]["transfer_weight"] == 1.0 - DRIFT_FLOOR
    assert drift["constants"]["old_loss"] == 4.0 and drift["terms"]["transfer_weight"] == 0.0
    assert drift["head_nats"] == unknown["head_nats"] and drift["body_nats"] != unknown["body_nats"]
    text = " ".join(run_cli("scan", KOREAN, *PLAN, "--old-loss", "4.0").stdout.replace("│", " ").split())
    assert "base loss on old text 4.00 nats: body 0% transfer" in text
    rows = json.loads(
        run_cli(
            "rank", KOREAN, str(SAMPLES / "python-code.jsonl"), *PLAN, "--old-loss", "4.0", "--format", "json"
        ).stdout
    )["candidates"]
    assert all(row["forecast"]["constants"]["old_loss"] == 4.0 for row in rows)
    gate = run_cli("gate", KOREAN, *PLAN, "--old-loss", "4.0", "--max-forgetting", "100", "--format", "json")
    assert gate.exit_code == 0, gate.output


def test_a_negative_old_loss_is_a_usage_error():
    result = run_cli("scan", KOREAN, "--model", "demo", "--old-loss", "-1")
    assert result.exit_code == 2 and "--old-loss" in result.output


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def saved_demo_profile(folder) -> Profile:
    assert run_cli("scan", KOREAN, "--model", "demo", "--out", str(folder), "--old-loss", "none", "-q").exit_code == 0
    return Profile.load(folder)


def test_auto_leaves_the_loss_unknown_where_measuring_would_cost_much_or_cannot_run(own_cache, monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr(old_loss, "AUTO_MAX_PARAMETERS", 1000)  # the demo model has 1.5M weights
        assert forecast_of()["constants"]["old_loss"] is None
    with monkeypatch.context() as patch:
        patch.setattr(old_loss.importlib.util, "find_spec", lambda name: None)  # as without torch
        assert forecast_of()["constants"]["old_loss"] is None


def test_auto_takes_a_kept_loss_and_a_report_of_the_saved_profile_finds_it_too(own_cache, tmp_path):
    profile = saved_demo_profile(tmp_path / "korean")
    path = old_loss.kept_path(profile.calibration_key, profile.weights_key, profile.old_text)
    write_atomic(path, json.dumps({"old_loss": 4.0}) + "\n", "old-loss cache")
    assert forecast_of()["constants"]["old_loss"] == 4.0
    assert forecast_of("--old-loss", "none")["constants"]["old_loss"] is None
    report = run_cli("report", str(tmp_path / "korean"))
    assert "base loss on old text 4.00 nats: body 0% transfer" in " ".join(report.stdout.replace("|", " ").split())


def test_auto_leaves_a_calibrations_loss_in_place(own_cache, tmp_path):
    profile = saved_demo_profile(tmp_path / "korean")
    calibration = Calibration(old_loss=2.5, source="calibrated on 2 probe runs", fingerprint=profile.calibration_key)
    save_calibration(calibration)
    assert forecast_of()["constants"]["old_loss"] == 2.5
    assert forecast_of("--old-loss", "3.0")["constants"]["old_loss"] == 3.0


def test_measure_refuses_a_saved_profile_of_a_model_the_command_did_not_load(own_cache, tmp_path):
    model = shutil.copytree(DEMO_MODEL_DIR, tmp_path / "model")
    assert run_cli("scan", KOREAN, "--model", str(model), "--out", str(tmp_path / "saved"), "-q").exit_code == 0
    result = run_cli("rank", str(tmp_path / "saved"), "--old-loss", "measure")
    said = " ".join(result.output.split())  # rich wraps long paths
    assert result.exit_code == 2 and f"counted against {str(model)!r}" in said and f"--model {model}" in said, said


def test_the_help_states_the_size_auto_measures_up_to():
    said = " ".join(run_cli("scan", "--help").output.split())
    assert f"at most {old_loss.AUTO_MAX_PARAMETERS // 1_000_000}M weights" in said


def test_auto_runs_nothing_for_a_tokenizer_without_weights(own_cache, shared_data, monkeypatch):
    monkeypatch.setattr(old_loss, "measure_old_loss", lambda *_: pytest.fail("measured a model with no weights"))
    gpt2 = str(shared_data / "tokenizers" / "gpt2")
    result = run_cli("scan", KOREAN, "--model", gpt2, "--reference", str(SAMPLES / "english-prose"), "--format", "json")
    assert json.loads(result.stdout)["forecast"]["constants"]["old_loss"] is None
