"""Per-vocabulary facts: computed for the whole vocabulary at once, cached per tokenizer, never stale.

The grouping and readable forms are checked against the per-token rules they replace
(written out below, one token at a time, as the specification), on every shared tokenizer.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import re
import shutil
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vocabrisk.errors import ModelError
from vocabrisk.model import facts, forked, load_vocabulary
from vocabrisk.model.facts import VocabularyFacts, load_facts
from vocabrisk.model.groups import CODE_CHARS, classify_texts, token_groups
from vocabrisk.model.resolve import DEMO_MODEL_DIR
from vocabrisk.model.vocabulary import _bytes_to_unicode, _fingerprint
from vocabrisk.storage import cache

TOKENIZERS = ["gpt2", "gpt-neox-20b", "llama2", "bert-base-uncased", "pegasus"]


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch) -> Path:
    """An empty cache folder, and nothing remembered in this process."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(facts, "_LOADED", {})
    return tmp_path / "xdg" / "vocabrisk"


def tokenizer_json(shared_data: Path, name: str) -> Path:
    return shared_data / "tokenizers" / name / "tokenizer.json"


# ---- the per-token rules, as they read before vectorising -------------------------------
def script_of(char: str) -> str:
    name = unicodedata.name(char, "")
    for prefix, script in [("LATIN", "Latin"), ("CYRILLIC", "Cyrillic"), ("GREEK", "Greek"), ("HANGUL", "Hangul"),
                           ("CJK", "CJK"), ("HIRAGANA", "Japanese kana"), ("KATAKANA", "Japanese kana"),
                           ("ARABIC", "Arabic"), ("HEBREW", "Hebrew"), ("DEVANAGARI", "Devanagari"),
                           ("BENGALI", "Bengali"), ("TAMIL", "Tamil"), ("THAI", "Thai"), ("GEORGIAN", "Georgian"),
                           ("ARMENIAN", "Armenian"), ("ETHIOPIC", "Ethiopic")]:  # fmt: skip
        if name.startswith(prefix):
            return script
    return "other scripts"


def group_of_text(text: str) -> str:
    stripped = text.strip()
    if not stripped:
        return "whitespace"
    letters = [c for c in stripped if c.isalpha()]
    if letters:
        scripts: dict[str, int] = {}
        for c in letters:
            scripts[script_of(c)] = scripts.get(script_of(c), 0) + 1
        return max(scripts, key=lambda k: (scripts[k], k))
    if all(c.isdigit() for c in stripped):
        return "digits"
    if any(c in CODE_CHARS for c in stripped) and all(ord(c) < 128 for c in stripped):
        return "code symbols"
    categories = {unicodedata.category(c)[0] for c in stripped}
    if categories <= {"P"}:
        return "punctuation"
    if "S" in categories:
        return "emoji & symbols"
    if categories <= {"P", "N"}:
        return "digits" if any(c.isdigit() for c in stripped) else "punctuation"
    return "other"


def surface_of(vocab, token_id: int, table: dict[str, int]) -> bytes | None:
    piece = vocab.pieces[token_id]
    if piece is None or token_id in vocab.special_ids:
        return None
    if token_id in vocab.added_ids:
        return piece.encode()
    if vocab.byte_level:
        try:
            return bytes(table[c] for c in piece)
        except KeyError:
            return piece.encode()
    if match := re.match(r"^<0x([0-9A-Fa-f]{2})>$", piece):
        return bytes([int(match.group(1), 16)])
    if vocab.continuing_prefix and piece.startswith(vocab.continuing_prefix) and piece != vocab.continuing_prefix:
        piece = piece[len(vocab.continuing_prefix) :]
    return (piece.replace(vocab.metaspace, " ") if vocab.metaspace else piece).encode()


def group_of_token(vocab, token_id: int, table: dict[str, int]) -> str:
    piece = vocab.pieces[token_id]
    if piece is None or re.match(r"^\[unused\d+\]$|^<unused\d+>$", piece):
        return "unused ids"
    if re.match(r"^\[[A-Z][A-Z_]*\]+$", piece) and token_id not in vocab.added_ids:  # BERT's [PRON]: no text makes it
        return "unused ids"
    if token_id in vocab.special_ids:
        return "special tokens"
    if token_id in vocab.added_ids:
        return "added tokens"
    if not vocab.byte_level and re.match(r"^<0x([0-9A-Fa-f]{2})>$", piece):
        return "byte pieces"
    raw = surface_of(vocab, token_id, table)
    try:
        text = raw.decode()
    except UnicodeDecodeError:
        return "byte pieces"
    return "byte pieces" if len(raw) == 1 and raw[0] >= 0x80 else group_of_text(text)


def readable_of(vocab, token_id: int, table: dict[str, int]) -> str:
    piece = vocab.pieces[token_id]
    if piece is None:
        return f"<unused {token_id}>"
    raw = surface_of(vocab, token_id, table)
    if raw is None:
        return piece
    try:
        text = raw.decode()
    except UnicodeDecodeError:
        return "<bytes " + raw.hex(" ") + ">"
    visible = {" ": "␣", "\n": "\\n", "\t": "\\t", "\r": "\\r"}
    return "".join(visible.get(c) or (c if c.isprintable() else f"\\x{ord(c):02x}") for c in text)


def fingerprint_of(spec: dict) -> str:
    canonical = {k: v for k, v in spec.items() if k not in ("truncation", "padding")}
    blob = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(blob.encode("utf-8")).hexdigest()


def merge_ranks_of(vocab, spec: dict) -> dict[int, int]:
    piece_to_id = {p: i for i, p in enumerate(vocab.pieces) if p is not None}
    ranks: dict[int, int] = {}
    for rank, merge in enumerate(spec["model"].get("merges") or []):
        left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
        token_id = piece_to_id.get(left + right)
        if token_id is not None and token_id not in ranks:
            ranks[token_id] = rank
    return ranks


# ---- the vectorised facts against those rules -------------------------------------------
@pytest.mark.parametrize("name", TOKENIZERS)
def test_fingerprint_and_merge_ranks_of_real_vocabularies_follow_the_plain_rules(shared_data, name):
    path = tokenizer_json(shared_data, name)
    spec = json.loads(path.read_bytes())
    vocab = load_vocabulary(path)
    assert vocab.fingerprint == fingerprint_of(spec)  # saved profiles and baselines compare by it
    if vocab.merge_ranks is not None:
        assert vocab.merge_ranks == merge_ranks_of(vocab, spec)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(st.text(max_size=6), st.integers(0, 10**6) | st.booleans(), max_size=12),
    st.dictionaries(st.text(max_size=6), st.text(max_size=4) | st.integers(), max_size=4),
)
def test_fingerprint_is_the_hash_of_the_sorted_json_for_any_vocabulary(pieces, other):
    spec = {**other, "model": {**other, "vocab": pieces}, "truncation": {"max_length": 5}}
    assert _fingerprint(spec) == fingerprint_of(spec)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=8))
def test_grouping_many_texts_at_once_follows_the_per_text_rules(texts):
    assert list(classify_texts(texts)) == [group_of_text(t) for t in texts]


@pytest.mark.parametrize("name", TOKENIZERS)
def test_groups_and_readable_forms_of_real_vocabularies_follow_the_per_token_rules(shared_data, name):
    vocab = load_vocabulary(tokenizer_json(shared_data, name))
    table = _bytes_to_unicode()  # the table itself; what is checked is the vectorised lookup
    assert list(token_groups(vocab)) == [group_of_token(vocab, i, table) for i in range(vocab.size)]
    assert list(vocab.readables) == [readable_of(vocab, i, table) for i in range(vocab.size)]


@pytest.mark.parametrize("name", TOKENIZERS)
def test_cached_facts_equal_freshly_computed_ones(shared_data, fresh_cache, name):
    path = tokenizer_json(shared_data, name)
    computed = load_facts(path)
    assert len(list(fresh_cache.glob("vocabulary/*.npz"))) == 1
    facts._LOADED.clear()
    cached = load_facts(path)
    assert cached is not computed
    fresh = VocabularyFacts.of(load_vocabulary(path))
    assert cached.same_as(fresh) and computed.same_as(fresh)
    assert cached.id_of("the") == load_vocabulary(path).pieces.index("the")


def test_facts_are_cached_under_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.setattr(facts, "_LOADED", {})
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    load_facts(DEMO_MODEL_DIR / "tokenizer.json")
    assert list((tmp_path / "xdg" / "vocabrisk" / "vocabulary").glob("*.npz"))
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_folder() == tmp_path / "home" / ".cache" / "vocabrisk"


def test_an_entry_from_another_version_is_recomputed_and_replaced(fresh_cache, monkeypatch):
    path = DEMO_MODEL_DIR / "tokenizer.json"
    expected = load_facts(path)
    (entry,) = fresh_cache.glob("vocabulary/*.npz")
    stale = expected.to_arrays()
    stale["meta"] = facts._json_bytes({**json.loads(stale["meta"].tobytes()), "fingerprint": "sha256:stale"})
    current = cache.__version__
    monkeypatch.setattr(cache, "__version__", "0.0.1-older")
    cache.store_arrays(facts.CACHE_KIND, entry.stem, stale)
    monkeypatch.setattr(cache, "__version__", current)
    facts._LOADED.clear()
    assert cache.load_arrays(facts.CACHE_KIND, entry.stem) is None
    assert load_facts(path).fingerprint == expected.fingerprint
    assert cache.load_arrays(facts.CACHE_KIND, entry.stem) is not None  # rewritten by this version


def test_a_changed_tokenizer_file_is_a_new_entry(fresh_cache, tmp_path):
    spec = json.loads((DEMO_MODEL_DIR / "tokenizer.json").read_text())
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(spec))
    before = load_facts(path)
    spec["added_tokens"].append({"id": before.size, "content": "<|new|>", "special": True})
    path.write_text(json.dumps(spec))
    after = load_facts(path)
    assert after.size == before.size + 1 and after.groups[-1] == "special tokens"
    assert after.fingerprint != before.fingerprint
    assert len(list(fresh_cache.glob("vocabulary/*.npz"))) == 2


def test_a_damaged_entry_is_recomputed(fresh_cache):
    path = DEMO_MODEL_DIR / "tokenizer.json"
    expected = load_facts(path)
    (entry,) = fresh_cache.glob("vocabulary/*.npz")
    entry.write_bytes(entry.read_bytes()[:1000])  # as a full disk would leave it
    facts._LOADED.clear()
    assert load_facts(path).same_as(expected)


def test_an_unwritable_cache_folder_costs_time_not_the_command(tmp_path, monkeypatch):
    monkeypatch.setattr(facts, "_LOADED", {})
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert load_facts(DEMO_MODEL_DIR / "tokenizer.json").size > 0


def _write_and_read(folder: str, arrays: dict, rounds: int, results) -> None:
    os.environ["XDG_CACHE_HOME"] = folder
    seen = []
    for _ in range(rounds):
        cache.store_arrays("race", "entry", arrays)
        stored = cache.load_arrays("race", "entry")
        seen.append(stored is not None and all(np.array_equal(stored[k], v) for k, v in arrays.items()))
    results.put(seen)


def test_processes_writing_one_entry_at_once_never_leave_or_read_half_a_file(tmp_path):
    arrays = {"big": np.arange(2_000_000, dtype=np.int64), "text": np.frombuffer(b"x" * 100_000, np.uint8)}
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    workers = [context.Process(target=_write_and_read, args=(str(tmp_path), arrays, 15, results)) for _ in range(4)]
    for worker in workers:
        worker.start()
    seen = [ok for _ in workers for ok in results.get(timeout=120)]
    for worker in workers:
        worker.join()
    assert seen and all(seen)
    assert [p.name for p in (tmp_path / "vocabrisk" / "race").iterdir()] == ["entry.npz"]  # no staging files


def test_facts_are_computed_once_per_process(fresh_cache, shared_data, monkeypatch):
    path = fresh_cache.parent.parent / "tokenizer.json"
    shutil.copy(tokenizer_json(shared_data, "gpt2"), path)
    first = load_facts(path)
    monkeypatch.setattr(facts, "load_vocabulary", None)  # neither parsed nor read from disk again
    monkeypatch.setattr(cache, "load_arrays", None)
    assert load_facts(path) is first


# ---- computed in a forked child while the parent loads its tokenizer --------------------
@pytest.fixture
def forking(monkeypatch):
    """The child used for any file, although the test process has imported tokenizers."""
    if not hasattr(os, "fork"):
        pytest.skip("the platform cannot fork")
    monkeypatch.setattr(facts, "FORK_MIN_BYTES", 0)
    monkeypatch.setattr(forked, "can_fork", lambda: True)


def test_facts_computed_in_a_child_equal_those_computed_here_and_are_cached(shared_data, fresh_cache, forking):
    path = tokenizer_json(shared_data, "llama2")
    meanwhile = []
    from_child = load_facts(path, lambda: meanwhile.append(os.getpid()))
    assert meanwhile == [os.getpid()]
    assert from_child.same_as(VocabularyFacts.of(load_vocabulary(path)))
    assert len(list(fresh_cache.glob("vocabulary/*.npz"))) == 1  # stored by the child


def test_facts_from_a_child_come_back_where_the_cache_is_unwritable(tmp_path, monkeypatch, forking):
    monkeypatch.setattr(facts, "_LOADED", {})
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    not_here = lambda: monkeypatch.setattr(facts, "load_vocabulary", None)  # noqa: E731 (in the parent, once forked)
    assert load_facts(DEMO_MODEL_DIR / "tokenizer.json", not_here).size > 0


def test_a_broken_file_raises_the_same_error_through_the_child(tmp_path, fresh_cache, forking):
    path = tmp_path / "tokenizer.json"
    path.write_text('{"model": {"vocab": {"a": 0}}')  # cut short
    with pytest.raises(ModelError) as here:
        load_facts(path)
    facts._LOADED.clear()
    with pytest.raises(ModelError) as through_child:
        load_facts(path, lambda: None)
    assert str(through_child.value) == str(here.value) and "not a valid tokenizer file" in str(here.value)
    assert not list(fresh_cache.glob("vocabulary/*.npz"))


def test_no_child_on_a_warm_cache_or_without_work_to_do_meanwhile(fresh_cache, forking, monkeypatch):
    path = DEMO_MODEL_DIR / "tokenizer.json"
    load_facts(path)  # no meanwhile: computed here
    facts._LOADED.clear()
    monkeypatch.setattr(forked, "run_beside", None)
    monkeypatch.setattr(facts, "run_beside", None)
    assert load_facts(path, lambda: None).size > 0  # from the cache
