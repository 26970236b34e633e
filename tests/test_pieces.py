"""Long documents are counted in bounded pieces, with exactly the counts of encoding them whole."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vocabrisk.corpus import ReadOptions, Skipped, Source, read_source
from vocabrisk.corpus.pieces import cut_point, document_pieces
from vocabrisk.counting import SpecialTokenPolicy, TokenCounter, TokenCounts
from vocabrisk.counting.pieces import SENTENCEPIECE_WORDS, SPLIT_BEFORE_SPACE, CannotCount, LongDocument
from vocabrisk.engines.pipeline import Pieces
from vocabrisk.engines.work import _Tally
from vocabrisk.model import load_vocabulary
from vocabrisk.model.loaded import load_model

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
    tally = _Tally(counter.vocab_size)
    for start in range(0, len(documents), 3):  # batches of three pieces, as the pipeline hands them over
        batch = documents[start : start + 3]
        tally.pieces(Pieces([d.text for d in batch], batch[0].part, batch[-1].last, "doc", "file"), counter)
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
    tally = _Tally(counter.vocab_size)
    tally.pieces(Pieces([items[0].text], 0, False, str(path), "file"), counter)
    tally.skip(items[-1])
    assert tally.counts.tokens == 0 and tally.pending is None


def test_text_with_no_place_to_cut_is_skipped_with_the_size_limit(tmp_path, monkeypatch):
    monkeypatch.setattr("vocabrisk.corpus.pieces.MAX_UNCUT_BYTES", 100_000)
    path = tmp_path / "run.txt.gz"
    path.write_bytes(gzip.compress(b"a" * 600_000))
    items = list(read_source(Source(str(path), "text", "gzip", path.stat().st_size), ReadOptions()))
    (skip,) = items
    assert "no single space between words to cut it at" in skip.reason


def test_a_tokenizer_with_no_rule_joins_pieces_up_to_the_limit(demo_counter):
    demo_counter_rule = demo_counter.cut_rule
    try:
        demo_counter.cut_rule = None
        document = LongDocument(demo_counter, limit=50)
        assert document.add(["one two", " three"], 0).tokens == 0  # held until the end
        assert np.array_equal(document.finish().counts, demo_counter.count(["one two three"]).counts)
        with pytest.raises(CannotCount, match="cannot be cut"):
            LongDocument(demo_counter, limit=5).add(["one two", " three"], 0)
    finally:
        demo_counter.cut_rule = demo_counter_rule


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
