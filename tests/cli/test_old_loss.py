"""`--old-loss NATS`: the base model's loss on the old text weighs the forecast's two body pathways (v9, v10)."""

from __future__ import annotations

import json

from helpers import KOREAN, SAMPLES, run_cli

from vocabrisk.risk.forecast import DRIFT_FLOOR

PLAN = ("--model", "demo", "--steps", "100", "--tokens-per-step", "1024", "--lr", "1e-4")


def forecast_of(*args: str) -> dict:
    return json.loads(run_cli("scan", KOREAN, *PLAN, *args, "--format", "json").stdout)["forecast"]


def test_scan_rank_and_gate_take_the_old_loss_and_say_what_it_did():
    unknown, drift = forecast_of(), forecast_of("--old-loss", "4.0")
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
