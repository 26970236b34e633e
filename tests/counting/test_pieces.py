"""Long documents are counted in bounded pieces, with exactly the counts of encoding them whole."""

from __future__ import annotations

import base64
import gzip
import itertools
import json
import os
import random
import subprocess
import sys
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vocabrisk.corpus import ReadOptions, Skipped, Source, read_source
from vocabrisk.corpus.pieces import DIGIT, PUNCT, SPACE, cut_point, document_pieces
from vocabrisk.counting import SpecialTokenPolicy, TokenCounter, TokenCounts
from vocabrisk.counting.executors.pipeline import Pieces
from vocabrisk.counting.executors.work import Tally
from vocabrisk.counting.pieces import SENTENCEPIECE_WORDS, SPLIT_BEFORE_SPACE, CannotCount, LongDocument
from vocabrisk.model import load_vocabulary
from vocabrisk.model.loaded import load_model

REPO = Path(__file__).resolve().parents[2]
TOKENIZERS = ("gpt2", "gpt-neox-20b", "llama2", "bert-base-uncased", "pegasus")
EXPECTED_RULES = {
    "gpt2": SPLIT_BEFORE_SPACE,
    "gpt-neox-20b": SPLIT_BEFORE_SPACE,
    "llama2": SENTENCEPIECE_WORDS,
    "bert-base-uncased": SPLIT_BEFORE_SPACE,
    "pegasus": SPLIT_BEFORE_SPACE,
}
POLICIES = (
    SpecialTokenPolicy(),
    SpecialTokenPolicy(split_special_tokens=True, append_eos=True),
)


def counter_for(path, policy: SpecialTokenPolicy) -> TokenCounter:
    vocab = load_vocabulary(path)
    return TokenCounter(path, vocab.size, policy, eos_id=0)


def counted_in_pieces(counter: TokenCounter, text: str, fragment: int = 700, piece_chars: int = 1000) -> TokenCounts:
    """What the scan counts for `text` as one document read in small fragments and pieces."""
    data = text.encode("utf-8")
    fragments = [data[i : i + fragment] for i in range(0, len(data), fragment)]
    documents = list(document_pieces(fragments, "doc", "file", lambda *_: "bad", piece_chars=piece_chars))
    assert "".join(d.text for d in documents) == text
    if len(documents) == 1:
        return counter.count([documents[0].text])
    tally = Tally(counter.vocab_size)
    for start in range(0, len(documents), 3):  # batches of three pieces, as the pipeline hands them over
        batch = documents[start : start + 3]
        texts, cuts = [d.text for d in batch], [d.cut for d in batch]
        tally.pieces(Pieces(texts, batch[0].part, batch[-1].last, "doc", "file", cuts), counter)
    return tally.counts


def corpus_texts(shared_data) -> list[str]:
    corpora = sorted(p for p in (shared_data / "corpora").rglob("*") if p.suffix in (".txt", ".csv"))
    texts = [p.read_text(encoding="utf-8", errors="replace")[:30_000] for p in corpora]
    vectors = [p.read_text(encoding="utf-8") for p in sorted((shared_data / "vectors").glob("*.inp"))]
    texts.append(" ".join(vectors))  # edge cases: runs of spaces, tabs, emoji, CJK, apostrophes
    texts.append(" <unk> a <s> b</s> c <unk>d [CLS] x <|endoftext|> y" * 40)  # added tokens next to cuts
    return texts


@pytest.mark.parametrize("name", TOKENIZERS)
def test_pieces_count_exactly_as_the_whole_document_on_every_shared_tokenizer(shared_data, name):
    path = shared_data / "tokenizers" / name / "tokenizer.json"
    texts = corpus_texts(shared_data)
    for policy in POLICIES:
        counter = counter_for(path, policy)
        assert counter.cut_rule == EXPECTED_RULES[name]
        for text in texts:
            assert counted_in_pieces(counter, text) == counter.count([text]), (name, policy, text[:80])


@pytest.fixture(scope="module")
def demo_counter():
    loaded = load_model("demo")
    return TokenCounter(loaded.files.tokenizer_json, loaded.vocab.size, SpecialTokenPolicy(), loaded.eos_id)


WORDS = st.sampled_from(["the", "cat", "안녕", "😀", "x1", "'s", "<unk>", "</s>", "é", "naïve", "42", "(", ")"])
SPACES = st.sampled_from([" ", " ", " ", "  ", "\n", "\t", " \n ", "\r\n", ""])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(WORDS, SPACES), min_size=1, max_size=300), st.integers(1, 64), st.integers(2, 40))
def test_any_text_in_any_fragments_counts_as_the_whole(demo_counter, parts, fragment, piece_chars):
    text = "".join(word + space for word, space in parts)
    assert counted_in_pieces(demo_counter, text, fragment, piece_chars) == demo_counter.count([text])


def test_pieces_end_near_the_piece_size_however_much_one_read_brings():
    # the piece, not the read, bounds what an encoder holds at once (0.2x: ~200 bytes a character)
    text = "the cat sat on the mat. " * 5000  # 120,000 characters, read in fragments of 60 kB
    data = text.encode()
    fragments = [data[i : i + 60_000] for i in range(0, len(data), 60_000)]
    pieces = list(document_pieces(fragments, "doc", "file", lambda *_: "bad", piece_chars=10_000))
    assert "".join(p.text for p in pieces) == text
    assert all(9_970 <= len(p.text) <= 10_000 for p in pieces[:-1]) and len(pieces[-1].text) < 20_000
    assert {p.cut for p in pieces[1:]} == {SPACE}


@given(st.text(alphabet=" ab\n", max_size=60))
def test_a_cut_is_a_single_space_between_two_non_spaces(text):
    cut = cut_point(text)
    if cut is not None:
        assert text[cut] == " " and not text[cut - 1].isspace() and not text[cut + 1].isspace()
    else:
        assert not any(
            text[i] == " " and not text[i - 1].isspace() and not text[i + 1].isspace() for i in range(1, len(text) - 1)
        )


def test_invalid_utf8_half_way_drops_the_whole_document(tmp_path):
    path = tmp_path / "big.txt"
    path.write_bytes(b"word " * 300_000 + b"\xff tail")
    items = list(read_source(Source(str(path), "text", None, path.stat().st_size), ReadOptions()))
    assert [type(i).__name__ for i in items][-1] == "Skipped"
    assert "invalid UTF-8 at byte 1500000 (line 1)" in items[-1].reason
    loaded = load_model("demo")
    counter = TokenCounter(loaded.files.tokenizer_json, loaded.vocab.size, SpecialTokenPolicy(), None)
    tally = Tally(counter.vocab_size)
    tally.pieces(Pieces([items[0].text], 0, False, str(path), "file", [""]), counter)
    tally.skip(items[-1])
    assert tally.counts.tokens == 0 and tally.pending is None


def test_text_with_no_place_to_cut_is_skipped_with_the_size_limit(tmp_path, monkeypatch):
    monkeypatch.setattr("vocabrisk.corpus.pieces.MAX_UNCUT_CHARS", 100_000)
    path = tmp_path / "run.txt.gz"
    path.write_bytes(gzip.compress(b"a" * 600_000))
    items = list(read_source(Source(str(path), "text", "gzip", path.stat().st_size), ReadOptions()))
    (skip,) = items
    assert "over 100,000 characters of text" in skip.reason and "with no place to cut it at" in skip.reason


def test_a_tokenizer_with_no_rule_joins_pieces_up_to_the_limit(demo_counter):
    demo_counter_rule, demo_counter_cuts = demo_counter.cut_rule, demo_counter.exact_cuts
    try:
        demo_counter.cut_rule, demo_counter.exact_cuts = None, frozenset()
        document = LongDocument(demo_counter, limit=50)
        assert document.add(["one two", " three"], 0, ["", "space"]).tokens == 0  # held until the end
        assert np.array_equal(document.finish().counts, demo_counter.count(["one two three"]).counts)
        with pytest.raises(CannotCount, match="cannot be cut"):
            LongDocument(demo_counter, limit=5).add(["one two", " three"], 0, ["", "space"])
    finally:
        demo_counter.cut_rule, demo_counter.exact_cuts = demo_counter_rule, demo_counter_cuts


def test_a_long_line_is_pieced_and_an_invalid_one_is_dropped_whole(tmp_path):
    path = tmp_path / "lines.txt"
    long_line = "word " * 600_000  # 3 MB: longer than a read (1 MiB)
    path.write_bytes(b"short one\n" + long_line.encode() + b"\n" + b"bad " * 900_000 + b"\xff\nlast line\n")
    items = list(read_source(Source(str(path), "text", None, path.stat().st_size), ReadOptions(text_unit="line")))
    pieces = [i for i in items if getattr(i, "locator", "") == "line 2"]
    assert len(pieces) > 1 and "".join(p.text for p in pieces) == long_line and pieces[-1].last
    (skip,) = [i for i in items if isinstance(i, Skipped)]  # after line 3's first pieces, which the counter drops
    assert "invalid UTF-8 at byte 3600000 of the line" in skip.reason and skip.size > 3_000_000
    assert [i.text for i in items if i.locator in ("line 1", "line 4")] == ["short one", "last line"]


def test_a_json_lines_record_over_the_limit_is_skipped_and_the_next_one_read(tmp_path, monkeypatch):
    monkeypatch.setattr("vocabrisk.corpus.json_records.MAX_UNCUT_BYTES", 1000)
    path = tmp_path / "records.jsonl"
    path.write_text('{"text": "' + "x" * 5000 + '"}\n{"text": "fine"}\n', encoding="utf-8")
    items = list(read_source(Source(str(path), "jsonl", None, path.stat().st_size), ReadOptions()))
    assert items[0].locator == "line 1" and "split the record" in items[0].reason and items[0].size == 5013
    assert items[1].text == "fine"


# --- text without spaces (issue 21, item 5): cut where the pre-tokenizer splits anyway, or joined ---

EXPECTED_CUTS = {
    "gpt2": {SPACE, PUNCT, DIGIT},
    "gpt-neox-20b": {SPACE, PUNCT, DIGIT},
    "llama2": {SPACE},
    "bert-base-uncased": {SPACE, PUNCT},
    "pegasus": {SPACE},
}


def spaceless_texts() -> list[str]:
    """Whitespace-free text as corpora hold it, with added tokens and apostrophes next to places to cut."""
    rng = random.Random(0)
    b64 = base64.b64encode(rng.randbytes(9000)).decode()
    hexes = rng.randbytes(6000).hex()
    minified = json.dumps([{"id": i, "k": f"v{i}'s", "u": f"https://x.io/a{i}?q=b{i}"} for i in range(300)])
    minified = minified.replace(" ", "")
    cjk = "漢字かな交じり文、句読点。「引用」（括弧）！ハングル한국어텍스트，全角？" * 150
    marks = ["<|endoftext|>", "[CLS]", "[cls]", "</s>", "<unk>", "<s>", "'s", "x"]
    tokens = "".join(rng.choice(marks) + b64[i : i + 40] for i in range(0, 8000, 40))
    return [b64, hexes, minified, cjk, tokens, "a" * 5000 + "1" * 5000]


@pytest.mark.parametrize("name", TOKENIZERS)
def test_text_without_spaces_counts_exactly_on_every_shared_tokenizer(shared_data, name):
    path = shared_data / "tokenizers" / name / "tokenizer.json"
    for policy in POLICIES:
        counter = counter_for(path, policy)
        assert counter.exact_cuts == EXPECTED_CUTS[name]
        for text in spaceless_texts():
            whole = counter.count([text])
            assert counted_in_pieces(counter, text, fragment=700, piece_chars=300) == whole, (name, policy, text[:60])


def test_text_without_spaces_is_cut_by_kind_and_only_where_allowed():
    b64, hexes, minified, cjk, *_ = spaceless_texts()
    for text, kinds in ((b64, {PUNCT}), (hexes, {DIGIT}), (minified, {PUNCT}), (cjk, {PUNCT})):
        fragments = [text.encode()[i : i + 700] for i in range(0, len(text.encode()), 700)]
        pieces = list(document_pieces(fragments, "doc", "file", lambda *_: "bad", piece_chars=300))
        assert len(pieces) > 3 and {p.cut for p in pieces[1:]} == kinds
        for before, after in itertools.pairwise(pieces):
            pair = before.text[-1] + after.text[0]
            assert not any(c.isspace() or c == "_" for c in pair) and before.text[-1] != "'"
            assert all(unicodedata.category(c)[0] in "LNPS" for c in pair)


def test_a_long_record_without_spaces_is_counted_in_pieces(tmp_path):
    b64 = base64.b64encode(random.Random(1).randbytes(1_500_000)).decode()  # 2 MB: over two pieces
    path = tmp_path / "blob.jsonl"
    path.write_text(json.dumps({"text": b64}) + "\n", encoding="utf-8")
    items = list(read_source(Source(str(path), "jsonl", None, path.stat().st_size), ReadOptions()))
    assert len(items) > 2 and items[-1].last and "".join(i.text for i in items) == b64
    assert {i.locator for i in items} == {"line 1"} and {i.cut for i in items[1:]} == {PUNCT}


MEMORY_SCRIPT = """
import base64, random, resource, sys
from vocabrisk import scan
kind, size, path, model, engine = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[6]
rng = random.Random(0)
with open(path, "w") as file:
    if kind == "base64":
        file.write(base64.b64encode(rng.randbytes(size * 3 // 4)).decode())
    else:  # one unbroken word
        file.write("".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=size)))
    del rng
profile = scan([path, sys.argv[5]], model, prior="tokenizer", engine=engine)
try:  # VmHWM is this program's own peak: Linux keeps ru_maxrss across exec, so it can be the forking parent's
    status = open("/proc/self/status").read()
    peak = int(status.split("VmHWM:")[1].split()[0]) * 1024
except OSError:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)
print(peak, profile.documents, profile.skipped, profile.skips.bytes)
for skip in profile.skipped_examples:
    print(skip["source"], skip["reason"])
"""


def scan_in_subprocess(tmp_path, kind: str, size: int, model: Path, engine="tokenizers") -> tuple[int, list[str]]:
    """Peak RSS (bytes) of a scan of one generated file beside a short one, and what it printed. The bounds
    below are the reference engine's; fastokens' (which keeps a bounded cache of its own): test_engines_exact.py."""
    short = tmp_path / "short.txt"
    short.write_text("a short document", encoding="utf-8")
    args = [kind, str(size), str(tmp_path / f"{kind}-{size}.txt"), str(model), str(short), engine]
    run = subprocess.run(
        [sys.executable, "-c", MEMORY_SCRIPT, *args],
        capture_output=True, text=True, timeout=240, check=True, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    lines = run.stdout.splitlines()
    return int(lines[0].split()[0]), lines


def test_memory_stays_bounded_on_text_without_spaces(shared_data, tmp_path):
    """Peak RSS does not grow with a file of base64 (counted), and an unbroken word is a skip, in bounded memory."""
    gpt2 = shared_data / "tokenizers" / "gpt2"
    small, _ = scan_in_subprocess(tmp_path, "base64", 5_000_000, gpt2)
    large, lines = scan_in_subprocess(tmp_path, "base64", 20_000_000, gpt2)
    assert lines[0].split()[1:] == ["2", "0", "0"]  # both documents counted, nothing skipped
    assert large < 400e6 and large - small < 60e6, (small, large)
    word, lines = scan_in_subprocess(tmp_path, "word", 3_000_000, gpt2)
    assert word < 400e6 and lines[0].split()[1:] == ["1", "1", "3000000"]
    assert "over 2,097,152 characters of text" in lines[1] and "no place to cut it at" in lines[1]
