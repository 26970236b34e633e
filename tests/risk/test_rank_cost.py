"""`rank` pays once for what its candidates share: the tokenizer, the prior and its reference count, the
old text, and the forecast's reading of the old text; twenty single scans pay the prior twenty times.

Work is counted, not timed: each shared step wrapped to count its calls.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from vocabrisk import compare
from vocabrisk.counting import counter
from vocabrisk.counting.executors import work
from vocabrisk.prior import choose
from vocabrisk.profile.profile import Profile
from vocabrisk.profile.scan import scan
from vocabrisk.risk import forecast
from vocabrisk.risk.summary import Summary

SAMPLES = Path(__file__).resolve().parents[2] / "sample_corpora"


@pytest.fixture
def calls(monkeypatch):
    """Calls of each step candidates could share, counted from here on."""
    counted: Counter[str] = Counter()

    def wrap(owner, name: str, label: str) -> None:
        function = getattr(owner, name)

        def wrapper(*args, **kwargs):
            counted[label] += 1
            return function(*args, **kwargs)

        monkeypatch.setattr(owner, name, wrapper)

    monkeypatch.setattr(work, "_COUNTERS", {})
    monkeypatch.setattr(forecast, "_CONTEXTS", {})
    wrap(counter, "load_encoder", "tokenizer")
    wrap(choose, "_make", "prior")
    wrap(choose, "read_old_text", "old text")
    wrap(choose, "count_inputs", "reference count")
    wrap(forecast.OldContexts, "__init__", "old contexts")  # made only where the process has none for the text
    return counted


def candidates(tmp_path: Path, count: int = 20) -> list[str]:
    text = (SAMPLES / "korean-notes.txt").read_text(encoding="utf-8").split("\n\n")
    paths = []
    for number in range(count):
        path = tmp_path / f"candidate-{number:02d}.txt"
        path.write_text("\n\n".join(text[number::count]), encoding="utf-8")
        paths.append(str(path))
    return paths


def test_rank_of_twenty_corpora_does_the_shared_work_once_where_twenty_scans_do_it_twenty_times(tmp_path, calls):
    paths = candidates(tmp_path)
    ranked = compare.rank(paths, "demo")
    assert len(ranked) == 20 and all(r.summary.forecast.old_text for r in ranked)
    assert calls == {"tokenizer": 1, "prior": 1, "reference count": 1, "old text": 1, "old contexts": 1}
    calls.clear()
    for path in paths:
        assert Summary.of(scan([path], "demo")).forecast.old_text
    assert calls["prior"] == calls["reference count"] == calls["old text"] == 20
    assert calls["tokenizer"] == 0 and calls["old contexts"] == 0  # the process keeps them, by content


def test_rank_of_saved_profiles_reads_their_common_old_text_once(tmp_path, calls):
    saved = scan([str(SAMPLES / "korean-notes.txt")], "demo")
    folders = [str(saved.save(tmp_path / f"profile-{n}")) for n in range(20)]
    forecast._CONTEXTS.clear()
    calls.clear()
    profiles = [Profile.load(folder) for folder in folders]
    assert len({id(p.old_text) for p in profiles}) == 20  # each loaded with its own copy
    ranked = compare.rank(profiles, "demo")
    assert len(ranked) == 20 and calls["old contexts"] == 1 and calls["tokenizer"] == calls["prior"] == 0
