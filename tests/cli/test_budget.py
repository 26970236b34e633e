"""`--budget NATS`: the forecast's curve over the plan says at which step the allowed forgetting is crossed."""

from __future__ import annotations

import json

from helpers import KOREAN, SAMPLES, run_cli

PLAN = ("--model", "demo", "--steps", "400", "--tokens-per-step", "4096", "--lr", "1e-4")


def test_scan_names_the_step_a_budget_is_crossed_in_every_output():
    curve = json.loads(run_cli("scan", KOREAN, *PLAN, "--format", "json").stdout)["forecast"]["curve"]
    assert [p["step"] for p in curve] == [5, 10, 20, 40, 80, 160, 320, 400]
    between = (curve[2]["total_nats"] + curve[3]["total_nats"]) / 2  # crossed after step 20, by step 40
    forecast = json.loads(run_cli("scan", KOREAN, *PLAN, "--budget", f"{between}", "--format", "json").stdout)[
        "forecast"
    ]
    assert forecast["budget"] == {"nats": between, "crossed_at_step": 40}
    text = run_cli("scan", KOREAN, *PLAN, "--budget", f"{between}").stdout
    assert f"crosses the budget of {between:g} nats by step 40" in " ".join(text.replace("│", " ").split())
    roomy = json.loads(run_cli("scan", KOREAN, *PLAN, "--budget", "100", "--format", "json").stdout)["forecast"]
    assert roomy["budget"] == {"nats": 100.0, "crossed_at_step": None}


def test_rank_shows_where_each_candidate_crosses_the_budget_only_when_one_is_given():
    candidates = (KOREAN, str(SAMPLES / "python-code.jsonl"))
    plain = run_cli("rank", *candidates, *PLAN).stdout
    assert "budget" not in plain
    rows = json.loads(run_cli("rank", *candidates, *PLAN, "--budget", "0", "--format", "json").stdout)["candidates"]
    assert all(row["forecast"]["budget"]["crossed_at_step"] == 5 for row in rows)  # any forgetting crosses 0 nats
    shown = run_cli("rank", *candidates, *PLAN, "--budget", "0").stdout
    assert "budget" in shown and shown.count("step 5") == 2


def test_a_negative_budget_is_a_usage_error():
    result = run_cli("scan", KOREAN, "--model", "demo", "--budget", "-1")
    assert result.exit_code == 2 and "--budget" in result.output
