"""read_source(): every format and compression gives back exactly the texts stored."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from vocabrisk.corpus import Document, ReadOptions, Skipped, Source, discover, read_source

COMPRESSORS = {
    "gzip": (".gz", gzip.compress),
    "bz2": (".bz2", bz2.compress),
    "xz": (".xz", lzma.compress),
    "zstd": (".zst", zstandard.ZstdCompressor().compress),
}


def write(path: Path, data: bytes, compression: str | None = None) -> Path:
    if compression:
        suffix, compress = COMPRESSORS[compression]
        path, data = path.with_name(path.name + suffix), compress(data)
    path.write_bytes(data)
    return path


def read(path: Path | str, **options) -> tuple[list[Document], list[Skipped]]:
    """Discover one input and read it whole."""
    read_options = ReadOptions(**options)
    [source], _ = discover([str(path)], read_options)
    items = list(read_source(source, read_options))
    return [i for i in items if isinstance(i, Document)], [i for i in items if isinstance(i, Skipped)]


def texts(path: Path | str, **options) -> list[str]:
    documents, skipped = read(path, **options)
    assert skipped == []
    return [d.text for d in documents]


def jsonl(records: list[object]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def write_hf_dataset(folder: Path, shards: dict[str, list[str]]) -> None:
    """A `datasets.save_to_disk` folder: IPC stream shards listed in state.json, in dict order."""
    folder.mkdir(parents=True)
    for name, shard in shards.items():
        table = pa.table({"text": shard, "id": list(range(len(shard)))})
        with pa.OSFile(str(folder / name), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table, max_chunksize=2)
    state = {"_data_files": [{"filename": n} for n in shards], "_fingerprint": "0", "_split": None}
    (folder / "state.json").write_text(json.dumps(state))


# --- text -------------------------------------------------------------------------------------


def test_text_file_is_one_document_kept_exactly(tmp_path):
    data = "\ufeffFirst line \r\n\tsecond\r\n\n\n  trailing spaces  \n\n".encode()
    path = write(tmp_path / "a.txt", data)
    documents, skipped = read(path)
    assert documents == [Document(data.decode(), str(path), "file")]
    assert skipped == []


def test_text_lines_are_documents_without_their_line_ending(tmp_path):
    path = write(tmp_path / "a.txt", b"one\r\n\ntwo  \nthree")
    documents, _ = read(path, text_unit="line")
    assert [(d.text, d.locator) for d in documents] == [("one", "line 1"), ("two  ", "line 3"), ("three", "line 4")]


def test_text_paragraphs_are_split_at_blank_lines(tmp_path):
    path = write(tmp_path / "a.txt", b"\nA1\r\nA2\r\n \r\n\n\nB1\nB2\n\nC\n")
    documents, _ = read(path, text_unit="paragraph")
    assert [(d.text, d.locator) for d in documents] == [("A1\r\nA2", "line 2"), ("B1\nB2", "line 7"), ("C", "line 10")]


def test_empty_text_file_gives_no_document_and_no_skip(tmp_path):
    assert read(write(tmp_path / "a.txt", b"")) == ([], [])


@pytest.mark.parametrize("compression", sorted(COMPRESSORS))
def test_compressed_text_file_is_decompressed(tmp_path, compression):
    data = "Grüße\r\n".encode() * 1000
    assert texts(write(tmp_path / "a.txt", data, compression)) == [data.decode()]


@pytest.mark.parametrize("compression", sorted(COMPRESSORS))
def test_compression_is_detected_from_magic_bytes_whatever_the_name(tmp_path, compression):
    _, compress = COMPRESSORS[compression]
    path = write(tmp_path / "plain-looking.txt", compress(b"hidden text"))
    assert texts(path) == ["hidden text"]


def test_concatenated_zstd_frames_are_all_read(tmp_path):
    compressor = zstandard.ZstdCompressor()
    path = write(
        tmp_path / "a.jsonl.zst",
        compressor.compress(jsonl([{"text": "a"}])) + compressor.compress(jsonl([{"text": "b"}])),
    )
    assert texts(path) == ["a", "b"]


def test_concatenated_gzip_members_are_all_read(tmp_path):
    path = write(tmp_path / "a.jsonl.gz", gzip.compress(jsonl([{"text": "a"}])) + gzip.compress(jsonl([{"text": "b"}])))
    assert texts(path) == ["a", "b"]


# --- jsonl and json ---------------------------------------------------------------------------


@pytest.mark.parametrize("compression", [None, *sorted(COMPRESSORS)])
def test_jsonl_gives_one_document_per_record(tmp_path, compression):
    path = write(tmp_path / "a.jsonl", jsonl([{"text": "alpha"}, {"text": "β\nγ", "id": 2}]), compression)
    documents, skipped = read(path)
    assert [(d.text, d.source, d.locator) for d in documents] == [
        ("alpha", str(path), "line 1"),
        ("β\nγ", str(path), "line 2"),
    ]
    assert skipped == []


def test_jsonl_blank_lines_are_ignored_and_numbering_stays_physical(tmp_path):
    path = write(tmp_path / "a.jsonl", b'\n{"text": "a"}\r\n   \n{"text": "b"}\n\n')
    assert [d.locator for d in read(path)[0]] == ["line 2", "line 4"]


def test_jsonl_with_byte_order_mark_is_read(tmp_path):
    path = write(tmp_path / "a.jsonl", b"\xef\xbb\xbf" + jsonl([{"text": "a"}]))
    assert texts(path) == ["a"]


def test_jsonl_empty_text_is_not_a_document(tmp_path):
    assert read(write(tmp_path / "a.jsonl", jsonl([{"text": ""}, {"text": "x"}]))) == (
        [Document("x", str(tmp_path / "a.jsonl"), "line 2")],
        [],
    )


def test_dotted_path_walks_nested_objects(tmp_path):
    path = write(tmp_path / "a.jsonl", jsonl([{"meta": {"body": {"en": "deep"}}}]))
    assert texts(path, text_fields=("meta.body.en",)) == ["deep"]


def test_key_containing_a_dot_wins_over_the_nested_path(tmp_path):
    path = write(tmp_path / "a.jsonl", jsonl([{"meta.body": "literal", "meta": {"body": "nested"}}]))
    assert texts(path, text_fields=("meta.body",)) == ["literal"]


def test_several_fields_are_joined_with_newlines(tmp_path):
    path = write(tmp_path / "a.jsonl", jsonl([{"title": "T", "body": "B", "x": 1}]))
    assert texts(path, text_fields=("title", "body")) == ["T\nB"]


def test_chat_messages_are_joined_when_no_text_field_exists(tmp_path):
    record = {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": None, "tool_calls": []},
            {"role": "assistant", "content": "Hello!"},
        ]
    }
    path = write(tmp_path / "a.jsonl", jsonl([record]))
    assert texts(path) == ["Be brief.\nHi\nHello!"]


def test_text_field_wins_over_chat_messages(tmp_path):
    path = write(tmp_path / "a.jsonl", jsonl([{"text": "plain", "messages": [{"role": "user", "content": "chat"}]}]))
    assert texts(path) == ["plain"]


def test_json_list_of_records(tmp_path):
    path = write(tmp_path / "a.json", json.dumps([{"text": "a"}, {"text": "b"}], indent=2).encode())
    documents, _ = read(path)
    assert [(d.text, d.locator) for d in documents] == [("a", "record 1"), ("b", "record 2")]


def test_json_object_holding_one_list_of_records(tmp_path):
    path = write(tmp_path / "a.json", json.dumps({"version": "1.0", "data": [{"text": "a"}, {"text": "b"}]}).encode())
    assert texts(path) == ["a", "b"]


def test_json_single_record(tmp_path):
    path = write(tmp_path / "a.json", json.dumps({"text": "only", "tags": ["x", "y"]}).encode())
    documents, _ = read(path)
    assert [(d.text, d.locator) for d in documents] == [("only", "record 1")]


def test_json_single_chat_record(tmp_path):
    path = write(tmp_path / "a.json", json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode())
    assert texts(path) == ["hi"]


@pytest.mark.parametrize("compression", sorted(COMPRESSORS))
def test_compressed_json_is_read(tmp_path, compression):
    path = write(tmp_path / "a.json", json.dumps([{"text": "a"}]).encode(), compression)
    assert texts(path) == ["a"]


# --- csv and tsv ------------------------------------------------------------------------------


def test_csv_rows_with_quoted_multiline_fields(tmp_path):
    data = 'id,text\r\n1,"line one\r\nline two"\r\n2,"say ""hi"", ok"\r\n\r\n3,plain\r\n'
    path = write(tmp_path / "a.csv", data.encode())
    documents, skipped = read(path)
    assert [(d.text, d.locator) for d in documents] == [
        ("line one\r\nline two", "row 1"),
        ('say "hi", ok', "row 2"),
        ("plain", "row 3"),
    ]
    assert skipped == []


def test_csv_several_columns_are_joined_in_the_order_given(tmp_path):
    path = write(tmp_path / "a.csv", b"Q,A,label\nwhy?,because,0\n")
    assert texts(path, text_fields=("A", "Q")) == ["because\nwhy?"]


def test_csv_header_byte_order_mark_is_not_part_of_the_first_column(tmp_path):
    path = write(tmp_path / "a.csv", b"\xef\xbb\xbftext,n\nhello,1\n")
    assert texts(path) == ["hello"]


def test_csv_field_larger_than_the_csv_module_default_limit(tmp_path):
    big = "x" * 300_000
    path = write(tmp_path / "a.csv", f'text\n"{big}"\n'.encode())
    assert texts(path) == [big]


@pytest.mark.parametrize("compression", [None, "gzip", "zstd"])
def test_tsv_rows(tmp_path, compression):
    path = write(tmp_path / "a.tsv", "text\tlang\nhallo welt\tde\n안녕\tko\n".encode(), compression)
    assert texts(path) == ["hallo welt", "안녕"]


# --- parquet, arrow, saved datasets -----------------------------------------------------------


def test_parquet_rows_are_numbered_across_batches(tmp_path):
    values = [f"doc {i}" for i in range(2500)]
    path = tmp_path / "a.parquet"
    pq.write_table(pa.table({"id": range(2500), "text": values}), path, row_group_size=700)
    documents, skipped = read(path)
    assert [d.text for d in documents] == values
    assert documents[-1].locator == "row 2500"
    assert skipped == []


def test_parquet_large_string_and_dictionary_columns_are_text(tmp_path):
    table = pa.table(
        {
            "a": pa.array(["x", "y"], pa.large_string()),
            "b": pa.array(["p", "q"]).dictionary_encode(),
        }
    )
    path = tmp_path / "a.parquet"
    pq.write_table(table, path)
    assert texts(path, text_fields=("a", "b")) == ["x\np", "y\nq"]


def test_arrow_ipc_file_format(tmp_path):
    path = tmp_path / "a.arrow"
    table = pa.table({"text": ["a", "b", "c"]})
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=2)
    documents, _ = read(path)
    assert [(d.text, d.locator) for d in documents] == [("a", "row 1"), ("b", "row 2"), ("c", "row 3")]


def test_arrow_ipc_stream_format(tmp_path):
    path = tmp_path / "a.arrow"
    table = pa.table({"text": ["a", "b", "c"]})
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=1)
    assert texts(path) == ["a", "b", "c"]


def test_arrow_string_view_column_is_text(tmp_path):
    path = tmp_path / "a.arrow"
    table = pa.table({"text": pa.array(["v1", "v2"], pa.string_view())})
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    assert texts(path) == ["v1", "v2"]


def test_feather_file(tmp_path):
    path = tmp_path / "a.feather"
    feather.write_feather(pa.table({"text": ["f1", "f2"]}), str(path))
    assert texts(path) == ["f1", "f2"]


def test_saved_dataset_reads_its_shards_in_state_json_order(tmp_path):
    folder = tmp_path / "ds"
    write_hf_dataset(folder, {"data-00001-of-00002.arrow": ["c", "d", "e"], "data-00000-of-00002.arrow": ["a", "b"]})
    documents, skipped = read(folder)
    assert [(d.text, d.source, d.locator) for d in documents] == [
        ("c", str(folder), "row 1"),
        ("d", str(folder), "row 2"),
        ("e", str(folder), "row 3"),
        ("a", str(folder), "row 4"),
        ("b", str(folder), "row 5"),
    ]
    assert skipped == []


# --- standard input ---------------------------------------------------------------------------


def fake_stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", SimpleNamespace(buffer=io.BytesIO(data)))


def test_stdin_is_read_as_one_text_document(monkeypatch):
    fake_stdin(monkeypatch, b"from a pipe\r\n")
    counted = []
    [source], _ = discover(["-"])
    assert list(read_source(source, ReadOptions(), counted.append)) == [Document("from a pipe\r\n", "-", "file")]
    assert sum(counted) == len(b"from a pipe\r\n")


def test_stdin_compressed_jsonl_with_forced_format(monkeypatch):
    data = gzip.compress(jsonl([{"text": "a"}, {"text": "b"}]))
    fake_stdin(monkeypatch, data)
    options = ReadOptions(input_format="jsonl")
    [source], _ = discover(["-"], options)
    counted = []
    assert [d.text for d in read_source(source, options, counted.append)] == ["a", "b"]
    assert sum(counted) == len(data)


def test_stdin_by_line(monkeypatch):
    fake_stdin(monkeypatch, b"x\ny\n")
    options = ReadOptions(text_unit="line")
    assert [d.locator for d in read_source(Source("-", "text", None, None), options)] == ["line 1", "line 2"]


# --- byte progress ----------------------------------------------------------------------------


def make_every_format(tmp_path: Path) -> list[Path]:
    """One file of each format (big enough for several reads), compressed ones included."""
    records = [{"text": f"document {i} " * 20} for i in range(3000)]
    paths = [write(tmp_path / "a.txt", b"plain text\n" * 20000)]
    paths += [write(tmp_path / "c.jsonl", jsonl(records), c) for c in [None, *COMPRESSORS]]
    paths.append(write(tmp_path / "d.json", json.dumps(records).encode()))
    paths.append(write(tmp_path / "e.csv", b"text\n" + b"".join(f'"row {i}"\n'.encode() for i in range(5000))))
    table = pa.table({"text": [r["text"] for r in records]})
    pq.write_table(table, tmp_path / "f.parquet", row_group_size=500)
    feather.write_feather(table, str(tmp_path / "g.arrow"), chunksize=500)
    write_hf_dataset(tmp_path / "h", {"x.arrow": ["a"] * 10, "y.arrow": ["b"] * 10})
    return [*paths, tmp_path / "f.parquet", tmp_path / "g.arrow", tmp_path / "h"]


def test_on_bytes_adds_up_to_the_size_on_disk_after_a_complete_read(tmp_path):
    sources, _ = discover([str(p) for p in make_every_format(tmp_path)])
    assert len(sources) == 11
    for source in sources:
        counted: list[int] = []
        items = list(read_source(source, ReadOptions(), counted.append))
        assert all(isinstance(i, Document) for i in items), source
        assert sum(counted) == source.size, source
        assert len(counted) > 1 or source.size < 70_000, f"{source}: progress should come in steps"


# --- shared reference corpora -----------------------------------------------------------------


def test_shakespeare_comes_back_byte_identical(shared_data):
    path = shared_data / "corpora" / "en-shakespeare" / "input.txt"
    pieces, skipped = read(path)  # 1.1 MB: one document, handed on in pieces
    assert skipped == [] and len(pieces) > 1
    assert [(p.part, p.last) for p in pieces] == [(i, i == len(pieces) - 1) for i in range(len(pieces))]
    assert "".join(p.text for p in pieces).encode("utf-8") == path.read_bytes()


def test_korean_chatbot_csv_by_question_and_answer_columns(shared_data):
    path = shared_data / "corpora" / "ko-chatbot" / "ChatbotData.csv"
    documents, skipped = read(path, text_fields=("Q", "A"))
    assert skipped == []
    assert len(documents) == 11823
    assert documents[0] == Document("12시 땡!\n하루가 또 가네요.", str(path), "row 1")
    assert all("\n" in d.text for d in documents)


# --- properties -------------------------------------------------------------------------------

no_surrogates = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1)


@settings(max_examples=60, deadline=None)
@given(values=st.lists(no_surrogates, max_size=20), compressed=st.booleans(), ascii_only=st.booleans())
def test_jsonl_round_trips_any_unicode(values, compressed, ascii_only):
    data = b"".join(json.dumps({"text": v}, ensure_ascii=ascii_only).encode() + b"\n" for v in values)
    with tempfile.TemporaryDirectory() as folder:
        path = write(Path(folder) / "a.jsonl", data, "gzip" if compressed else None)
        assert texts(path) == values


@settings(max_examples=60, deadline=None)
@given(value=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1))
def test_text_file_round_trips_any_unicode(value):
    with tempfile.TemporaryDirectory() as folder:
        path = write(Path(folder) / "a.txt", value.encode())
        assert texts(path) == [value]
