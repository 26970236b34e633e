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
