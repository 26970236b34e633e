"""What a process pays once: imports a command does not need are not made, and per-vocabulary
work (facts, tokenizer load) is done once however many corpora a process scans (the prior:
tests/test_prior.py)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

from vocabrisk import compare, facts
from vocabrisk.counting import counter
from vocabrisk.engines import work

scanning = importlib.import_module("vocabrisk.scan")  # the module; `vocabrisk.scan` is the function

SAMPLES = Path(__file__).resolve().parents[1] / "sample_corpora"
HEAVY = [
    "pyarrow",
    "polars",
    "tokenizers",
    "matplotlib",
    "torch",
    "datasets",
    "ray",
    "multiprocessing",
    "rich.progress",
]


def modules_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print(' '.join(sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


def test_the_command_line_imports_no_heavy_library_before_a_command_needs_it():
    loaded = modules_after("import vocabrisk.cli")
    assert not [m for m in HEAVY if m in loaded]


def test_reading_a_saved_profile_needs_no_tokenizers(tmp_path):
    saved = scanning.scan([str(SAMPLES / "korean-notes.txt")], "demo").save(tmp_path / "profile")
    loaded = modules_after(f"from vocabrisk.profile import Profile; Profile.load({str(saved)!r}).table")
    assert "polars" in loaded and "tokenizers" not in loaded


def test_gating_a_saved_profile_loads_no_model_and_no_heavy_library_but_the_table_reader(tmp_path):
    saved = scanning.scan([str(SAMPLES / "korean-notes.txt")], "demo").save(tmp_path / "profile")
    gate = f"from vocabrisk.cli import main; main(['gate', {str(saved)!r}, '--max-risk', '1'], standalone_mode=False)"
    loaded = modules_after(f"import io; sys.stdout = io.StringIO(); {gate}; sys.stdout = sys.__stdout__")
    assert "vocabrisk.gate" in loaded and [m for m in HEAVY if m in loaded] == [
        "polars"
    ]  # polars reads tokens.parquet itself


def test_rank_does_the_per_vocabulary_work_once(monkeypatch):
    calls = {"facts": 0, "tokenizer": 0}

    def counting(name, function):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return function(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(facts, "_LOADED", {})
    monkeypatch.setattr(facts, "load_vocabulary", counting("facts", facts.load_vocabulary))
    monkeypatch.setattr(counter, "load_encoder", counting("tokenizer", counter.load_encoder))
    monkeypatch.setattr(work, "_COUNTERS", {})
    candidates = sorted(str(p) for p in SAMPLES.iterdir() if p.is_file())
    ranked = compare.rank(candidates, "demo")
    assert len(ranked) == len(candidates) >= 4
    assert calls["facts"] <= 1  # none where the cache already holds the demo tokenizer's facts
    assert calls["tokenizer"] == 1  # one tokenizer load for the reference and every candidate
