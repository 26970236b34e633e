"""What a process pays once: imports a command does not need are not made, and per-vocabulary
work (facts, tokenizer load) is done once however many corpora a process scans (the prior:
tests/prior/test_prior.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from vocabrisk import compare
from vocabrisk.counting import encoder
from vocabrisk.counting.executors import work
from vocabrisk.model import facts, forked, tokenizer
from vocabrisk.profile.scan import scan

SAMPLES = Path(__file__).resolve().parents[2] / "sample_corpora"
HEAVY = [
    "pyarrow",
    "polars",
    "pandas",  # pyarrow imports it on first use of pa.array, read_table or to_numpy: vocabrisk's tables avoid those
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
    loaded = modules_after("import vocabrisk.cli.commands")
    assert not [m for m in HEAVY if m in loaded]


# The stages of a count: what `--help`, `diff` and a gate on a saved profile never run.
COUNTING = {
    "vocabrisk.profile.scan",
    "vocabrisk.prior.choose",
    "vocabrisk.counting.inputs",
    "vocabrisk.model.facts",
    "vocabrisk.model.loaded",
}


def test_the_package_exports_its_api_on_first_use():
    code = (
        "import sys, inspect, vocabrisk; assert 'vocabrisk.profile.scan' not in sys.modules;"
        "print(all(getattr(vocabrisk, name) is not None for name in vocabrisk.__all__),"
        "inspect.isfunction(vocabrisk.scan), 'vocabrisk.profile.scan' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "True", "True"]


def test_help_imports_no_stage_and_no_report():
    loaded = modules_after("from vocabrisk.cli.commands import main; main(['--help'], standalone_mode=False)")
    stages = COUNTING | {"vocabrisk.risk.summary", "vocabrisk.advice", "vocabrisk.compare", "vocabrisk.report.ci"}
    assert "vocabrisk.cli.commands" in loaded and not stages & loaded


def test_reading_a_saved_profile_needs_no_tokenizers(tmp_path):
    saved = scan([str(SAMPLES / "korean-notes.txt")], "demo").save(tmp_path / "profile")
    loaded = modules_after(f"from vocabrisk.profile.profile import Profile; Profile.load({str(saved)!r}).table")
    assert "pyarrow" in loaded and not {"tokenizers", "polars", "pandas"} & loaded


def test_gating_a_saved_profile_loads_no_model_and_no_heavy_library_but_the_table_reader(tmp_path):
    saved = scan([str(SAMPLES / "korean-notes.txt")], "demo").save(tmp_path / "profile")
    gate = f"from vocabrisk.cli import main; main(['gate', {str(saved)!r}, '--max-risk', '1'], standalone_mode=False)"
    loaded = modules_after(f"import io; sys.stdout = io.StringIO(); {gate}; sys.stdout = sys.__stdout__")
    assert "vocabrisk.gate" in loaded and [m for m in HEAVY if m in loaded] == [
        "pyarrow"
    ]  # pyarrow reads tokens.parquet itself
    assert not COUNTING & loaded


def test_rank_does_the_per_vocabulary_work_once(monkeypatch):
    calls = {"facts": 0, "tokenizer": 0}

    def counting(name, function):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return function(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(facts, "_LOADED", {})
    monkeypatch.setattr(facts, "load_vocabulary", counting("facts", facts.load_vocabulary))
    # the tokenizer file itself: a gzip candidate (auto, beside 0.2x) asks for an engine of its own, on the same one
    monkeypatch.setattr(tokenizer, "_TOKENIZERS", {})
    monkeypatch.setattr(tokenizer, "_load", counting("tokenizer", tokenizer._load))
    monkeypatch.setattr(work, "_COUNTERS", {})
    candidates = sorted(str(p) for p in SAMPLES.iterdir() if p.is_file())
    ranked = compare.rank(candidates, "demo")
    assert len(ranked) == len(candidates) >= 4
    assert calls["facts"] <= 1  # none where the cache already holds the demo tokenizer's facts
    assert calls["tokenizer"] == 1  # one tokenizer load for the reference and every candidate


def test_a_cold_scan_loads_its_tokenizer_once_while_a_child_computes_the_facts(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(facts, "_LOADED", {})
    monkeypatch.setattr(facts, "FORK_MIN_BYTES", 0)  # the demo's small vocabulary is computed here otherwise
    monkeypatch.setattr(forked, "can_fork", lambda: True)  # this test process has imported tokenizers
    monkeypatch.setattr(tokenizer, "_TOKENIZERS", {})
    monkeypatch.setattr(work, "_COUNTERS", {})
    loaded = []
    load = tokenizer.load_tokenizer
    for module in (tokenizer, encoder):  # the preload's own call, and the encoders'
        monkeypatch.setattr(module, "load_tokenizer", lambda path: loaded.append(load(path)) or loaded[-1])
    profile = scan([str(SAMPLES / "korean-notes.txt")], "demo")
    assert profile.total_tokens > 0 and list((tmp_path / "vocabrisk" / "vocabulary").glob("*.npz"))
    assert len(loaded) >= 2 and all(t is loaded[0] for t in loaded)  # preloaded, then counted with


def test_the_command_line_computes_cold_facts_in_a_child(tmp_path):
    """In a fresh process (no other thread, tokenizers not yet imported) a cold scan forks, the child
    prints nothing, and the profile is the one a warm scan makes."""
    code = (
        "import sys; from vocabrisk.model import facts, forked; facts.FORK_MIN_BYTES = 0; run = forked.run_beside;"
        "facts.run_beside = lambda *a: print('forked', file=sys.stderr) or run(*a);"
        "from vocabrisk.cli.commands import main;"
        f"main(['scan', {str(SAMPLES / 'korean-notes.txt')!r}, '--format', 'json', '-q'])"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    cold, warm = (subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env) for _ in "cw")
    assert cold.returncode == warm.returncode == 0, cold.stderr + warm.stderr
    assert (cold.stderr.strip(), warm.stderr.strip()) == ("forked", "")  # the second finds the first's entry
    assert cold.stdout == warm.stdout
