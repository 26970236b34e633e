"""What the reports say in words: counts in the singular and the plural."""

from __future__ import annotations

import pytest

from vocabrisk import TrainingPlan
from vocabrisk.compare import Ranked
from vocabrisk.report.content import build_report
from vocabrisk.report.markdown import render_markdown
from vocabrisk.risk.summary import Summary

COLUMNS = ["token_id", "token", "group", "special", "count", "prior", "reference_count"]
PLAN = TrainingPlan(tokens_per_step=8192, steps=300)


def test_reports_count_one_file_and_one_document_in_the_singular(korean):
    from vocabrisk.report.html import render_html

    assert (korean.documents, len(korean.sources)) == (1, 1)
    report = build_report([Ranked("korean", Summary.of(korean, PLAN))])
    assert "**corpus** 1 document, 110.9 kB, 17,716 tokens, 1 file\n" in render_markdown(report)
    pytest.importorskip("matplotlib")
    assert "<dd>1 document · 110.9 kB · 17,716 tokens · 1 file</dd>" in render_html(report)


def test_the_calibration_report_shows_the_adaptation_and_each_probes_early_point():
    from rich.console import Console

    from vocabrisk.report.terminal import render_calibration
    from vocabrisk.risk.calibration import Calibration

    probe = {"name": "prose (whole)", "head": 0.01, "total": 0.05, "forecast_head": 0.01, "forecast_total": 0.04}
    fitted = Calibration(kappa=10.0, adaptation=0.031, band=1.8, old_loss=3.2, probes=[probe | {"early_total": -0.02}])
    console = Console(record=True, width=160)
    render_calibration({"calibration": fitted.to_dict(), "saved": "x.json"}, console)
    text = console.export_text()
    assert "step 5" in text and "-0.020" in text and "adaptation 0.031 nats" in text
    unmeasured = Calibration(kappa=10.0, band=1.8, old_loss=3.2, probes=[probe])  # saved before v10: no early point
    console = Console(record=True, width=160)
    render_calibration({"calibration": unmeasured.to_dict(), "saved": "x.json"}, console)
    assert "step 5" not in console.export_text()
