"""Bad input: discover() raises InputError with a hint; read_source() reports Skipped, never raises."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from vocabrisk.corpus import Document, ReadOptions, Skipped, Source, discover, read_source
from vocabrisk.errors import InputError

# Fast settings; bz2's smallest block size also lets a cut file still hold whole blocks.
COMPRESSORS = {
    "gzip": (".gz", gzip.compress),
    "bz2": (".bz2", lambda data: bz2.compress(data, 1)),
    "xz": (".xz", lambda data: lzma.compress(data, preset=0)),
    "zstd": (".zst", zstandard.ZstdCompressor().compress),
}


def read(path: Path | str, **options) -> tuple[list[Document], list[Skipped]]:
    """Discover one input and read it whole."""
    read_options = ReadOptions(**options)
    [source], _ = discover([str(path)], read_options)
    items = list(read_source(source, read_options))
    return [i for i in items if isinstance(i, Document)], [i for i in items if isinstance(i, Skipped)]


def only_skip(path: Path | str, **options) -> Skipped:
    documents, skipped = read(path, **options)
    assert documents == []
    [skip] = skipped
    return skip


def jsonl(records: list[object]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


# --- discover ---------------------------------------------------------------------------------


def test_nonexistent_path_is_an_input_error_naming_it(tmp_path):
    missing = str(tmp_path / "nope.jsonl")
    with pytest.raises(InputError) as caught:
        discover([missing])
    assert missing in caught.value.message
    assert caught.value.hint


def test_glob_matching_nothing_is_an_input_error_naming_it(tmp_path):
    pattern = str(tmp_path / "**" / "*.parquet")
    with pytest.raises(InputError) as caught:
        discover([pattern])
    assert pattern in caught.value.message
    assert "**" in caught.value.hint


def test_empty_folder_is_an_input_error(tmp_path):
    with pytest.raises(InputError) as caught:
        discover([str(tmp_path)])
    assert str(tmp_path) in caught.value.message
    assert "hidden" in caught.value.hint


def test_folder_of_unsupported_files_is_an_input_error_saying_why(tmp_path):
    (tmp_path / "photo.png").write_bytes(b"\x89PNG")
    (tmp_path / ".hidden.txt").write_text("ignored")
    with pytest.raises(InputError) as caught:
        discover([str(tmp_path)])
    assert "unsupported file type '.png'" in caught.value.hint


def test_no_inputs_at_all_is_an_input_error():
    with pytest.raises(InputError, match="no readable files"):
        discover([])


def test_named_file_of_unknown_type_asks_for_input_format(tmp_path):
    path = tmp_path / "corpus.dat"
    path.write_text("text")
    with pytest.raises(InputError) as caught:
        discover([str(path)])
    assert "'.dat'" in caught.value.message
    assert "--input-format" in caught.value.hint


def test_named_file_without_extension_asks_for_input_format(tmp_path):
    path = tmp_path / "README"
    path.write_text("text")
    with pytest.raises(InputError) as caught:
        discover([str(path)])
    assert "--input-format" in caught.value.hint


def test_one_missing_input_fails_even_next_to_good_ones(tmp_path):
    good = tmp_path / "a.txt"
    good.write_text("x")
    with pytest.raises(InputError, match=r"input not found: .*b\.txt"):
        discover([str(good), str(tmp_path / "b.txt")])


@pytest.mark.parametrize("fmt", ["parquet", "arrow"])
def test_stdin_cannot_be_a_seekable_format(fmt):
    with pytest.raises(InputError) as caught:
        discover(["-"], ReadOptions(input_format=fmt))
    assert "standard input" in caught.value.message


def test_binary_extension_in_folder_is_skipped_at_discovery(tmp_path):
    (tmp_path / "a.txt").write_text("fine")
    (tmp_path / "model.bin").write_bytes(bytes(range(256)))
    sources, skipped = discover([str(tmp_path)])
    assert [Path(s.path).name for s in sources] == ["a.txt"]
    assert [(Path(s.source).name, s.locator) for s in skipped] == [("model.bin", "file")]


# --- unreadable files -------------------------------------------------------------------------


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads files whatever their mode")
def test_file_without_read_permission_is_skipped(tmp_path):
    path = tmp_path / "secret.txt"
    path.write_text("x")
    path.chmod(0)
    try:
        skip = only_skip(path)
    finally:
        path.chmod(0o644)
    assert skip.locator == "file"
    assert "permission denied" in skip.reason


def test_permission_denied_on_open_is_skipped(tmp_path, monkeypatch):
    path = tmp_path / "secret.jsonl"
    path.write_text('{"text": "x"}\n')

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr("vocabrisk.corpus.compression.open", refuse, raising=False)
    skip = only_skip(path)
    assert (skip.source, skip.locator) == (str(path), "file")
    assert skip.reason.startswith("cannot open: permission denied")
    assert "nothing from this file was counted" in skip.reason


def test_file_removed_after_discovery_is_skipped(tmp_path):
    path = tmp_path / "gone.parquet"
    pq.write_table(pa.table({"text": ["x"]}), path)
    [source], _ = discover([str(path)])
    path.unlink()
    [skip] = list(read_source(source, ReadOptions()))
    assert skip.locator == "file"


def test_folder_passed_as_a_text_source_is_skipped(tmp_path):
    [skip] = list(read_source(Source(str(tmp_path), "text", None, None), ReadOptions()))
    assert skip.locator == "file"
    assert "cannot read" in skip.reason


# --- text -------------------------------------------------------------------------------------


def test_binary_file_with_text_extension_in_a_folder_is_skipped(tmp_path):
    (tmp_path / "a.txt").write_text("fine")
    (tmp_path / "b.txt").write_bytes(b"PK\x03\x04\x00\x00" + bytes(100))
    sources, _ = discover([str(tmp_path)])
    items = [item for source in sources for item in read_source(source, ReadOptions())]
    assert [type(i).__name__ for i in items] == ["Document", "Skipped"]
    assert items[1].source == str(tmp_path / "b.txt")
    assert items[1].reason.startswith("looks like a binary file")


@pytest.mark.parametrize("unit", ["line", "paragraph"])
def test_binary_file_yields_nothing_before_it_is_recognised(tmp_path, unit):
    path = tmp_path / "a.txt"
    path.write_bytes(b"harmless line\n" * 100 + b"\x00\x01\x02\n")
    skip = only_skip(path, text_unit=unit)
    assert skip.reason.startswith("looks like a binary file")


def test_utf16_text_is_recognised_as_binary_with_a_re_encode_hint(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes("hello".encode("utf-16"))
    assert "UTF-16" in only_skip(path).reason


def test_invalid_utf8_skips_the_file_with_offset_and_line(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(b"ok\nstill ok\nbad \xff here\n")
    skip = only_skip(path)
    assert skip.locator == "file"
    assert "invalid UTF-8 at byte 16 (line 3)" in skip.reason
    assert "re-encode the file as UTF-8" in skip.reason


def test_invalid_utf8_in_line_mode_skips_only_that_line(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(b"good\nbad \xe9t\xe9\ngood again\n")
    documents, skipped = read(path, text_unit="line")
    assert [d.text for d in documents] == ["good", "good again"]
    assert [(s.locator, "byte 4 of the line" in s.reason) for s in skipped] == [("line 2", True)]


def test_invalid_utf8_in_paragraph_mode_names_the_line(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(b"p1\n\nfirst\nsec\xc3ond\n\np3\n")
    documents, skipped = read(path, text_unit="paragraph")
    assert [d.text for d in documents] == ["p1", "p3"]
    [skip] = skipped
    assert skip.locator == "line 3"
    assert "line 4 (byte 3 of that line)" in skip.reason


# --- jsonl and json ---------------------------------------------------------------------------


def test_malformed_json_line_is_skipped_and_reading_goes_on(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"text": "a"}\n{"text": "b",\n{"text": "c"}\n')
    documents, skipped = read(path)
    assert [d.text for d in documents] == ["a", "c"]
    [skip] = skipped
    assert (skip.locator, skip.reason.startswith("malformed JSON: ")) == ("line 2", True)


def test_invalid_utf8_jsonl_line_is_skipped(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"text": "caf\xe9"}\n{"text": "ok"}\n')
    documents, skipped = read(path)
    assert [d.text for d in documents] == ["ok"]
    assert skipped[0].locator == "line 1"
    assert "invalid UTF-8" in skipped[0].reason


def test_missing_field_lists_the_fields_present(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(jsonl([{"id": 1, "body": "x"}]))
    skip = only_skip(path)
    assert skip.locator == "line 1"
    assert skip.reason == "no field 'text' (fields: id, body); choose one with --text-field"


def test_missing_nested_field_lists_the_fields_where_it_was_looked_for(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(jsonl([{"meta": {"title": "t", "lang": "en"}}]))
    reason = only_skip(path, text_fields=("meta.body",)).reason
    assert "no field 'meta.body' (fields of 'meta': title, lang)" in reason


def test_one_of_several_fields_missing_skips_the_record(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(jsonl([{"q": "x"}]))
    assert "no field 'a'" in only_skip(path, text_fields=("q", "a")).reason


@pytest.mark.parametrize(
    ("value", "kind"),
    [(3, "a number"), (None, "null"), (["x"], "an array"), ({"x": 1}, "an object"), (True, "a boolean")],
)
def test_non_string_value_is_skipped_with_its_type(tmp_path, value, kind):
    path = tmp_path / "a.jsonl"
    path.write_bytes(jsonl([{"text": value, "id": 1}]))
    skip = only_skip(path)
    assert skip.reason.startswith(f"field 'text' is {kind}, not a string (fields: text, id)")


def test_record_that_is_not_an_object_is_skipped(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'"just a string"\n[1, 2]\n')
    documents, skipped = read(path)
    assert documents == []
    assert [(s.locator, s.reason.split(",")[0]) for s in skipped] == [
        ("line 1", "record is a string"),
        ("line 2", "record is an array"),
    ]


def test_malformed_chat_messages_are_skipped(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(jsonl([{"messages": [{"role": "user", "content": [{"type": "image"}]}]}, {"messages": "hi"}]))
    documents, skipped = read(path)
    assert documents == []
    assert ["message 1" in skipped[0].reason, "'messages' is a string" in skipped[1].reason] == [True, True]


def test_huge_integer_and_deep_nesting_are_malformed_not_crashes(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"text": ' + b"9" * 5000 + b"}\n" + b"[" * 100_000 + b"\n")
    documents, skipped = read(path)
    assert documents == []
    assert [s.locator for s in skipped] == ["line 1", "line 2"]
    assert all(s.reason.startswith("malformed JSON") for s in skipped)


def test_malformed_json_file_is_skipped_with_a_jsonl_hint(tmp_path):
    path = tmp_path / "a.json"
    path.write_bytes(b'{"text": "a"}\n{"text": "b"}\n')
    skip = only_skip(path)
    assert skip.locator == "file"
    assert "line 2, column 1" in skip.reason
    assert "--input-format jsonl" in skip.reason


def test_json_records_missing_the_field_are_skipped_by_record_number(tmp_path):
    path = tmp_path / "a.json"
    path.write_text(json.dumps({"rows": [{"text": "a"}, {"body": "b"}]}))
    documents, skipped = read(path)
    assert [d.text for d in documents] == ["a"]
    assert [s.locator for s in skipped] == ["record 2"]


# --- csv, parquet, arrow ----------------------------------------------------------------------


def test_csv_missing_column_is_one_file_level_skip(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("Q,A,label\nq,a,0\nq2,a2,1\n")
    skip = only_skip(path)
    assert skip.locator == "file"
    assert skip.reason == "no column 'text' (columns: Q, A, label); choose one with --text-field"


def test_csv_row_with_too_few_fields_is_skipped(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("id,text,lang\n1,ok,en\n2,short\n3,fine,de\n")
    documents, skipped = read(path)
    assert [d.text for d in documents] == ["ok", "fine"]
    assert [(s.locator, "has 2 fields but the header has 3" in s.reason) for s in skipped] == [("row 2", True)]


def test_csv_row_with_invalid_utf8_is_skipped_alone(tmp_path):
    path = tmp_path / "a.csv"
    path.write_bytes(b'text\ncaf\xe9\n"multi\nline"\nok\n')
    documents, skipped = read(path)
    assert [d.text for d in documents] == ["multi\nline", "ok"]
    assert [(s.locator, "invalid UTF-8" in s.reason) for s in skipped] == [("row 1", True)]


def test_parquet_missing_column_is_one_file_level_skip(tmp_path):
    path = tmp_path / "a.parquet"
    pq.write_table(pa.table({"a": ["x"] * 3000, "b": [1] * 3000, "c": ["y"] * 3000}), path)
    skip = only_skip(path)
    assert skip.locator == "file"
    assert skip.reason == "no column 'text' (columns: a, b, c); choose one with --text-field"


def test_parquet_non_string_column_is_skipped_with_its_type(tmp_path):
    path = tmp_path / "a.parquet"
    pq.write_table(pa.table({"text": [1, 2]}), path)
    skip = only_skip(path)
    assert skip.locator == "file"
    assert "column 'text' has type int64, not string" in skip.reason


def test_parquet_null_values_are_skipped_by_row(tmp_path):
    path = tmp_path / "a.parquet"
    pq.write_table(pa.table({"text": ["a", None, "c", None]}), path)
    documents, skipped = read(path)
    assert [(d.text, d.locator) for d in documents] == [("a", "row 1"), ("c", "row 3")]
    assert [(s.locator, s.reason) for s in skipped] == [
        ("row 2", "null in column 'text'"),
        ("row 4", "null in column 'text'"),
    ]


def test_file_that_is_not_parquet_is_skipped(tmp_path):
    path = tmp_path / "a.parquet"
    path.write_text("this is not parquet at all")
    skip = only_skip(path)
    assert skip.locator == "file"
    assert skip.reason.startswith("not a readable parquet file")


def test_compressed_parquet_asks_to_decompress(tmp_path):
    path = tmp_path / "a.parquet"
    pq.write_table(pa.table({"text": ["x"]}), path)
    zipped = tmp_path / "a.parquet.gz"
    zipped.write_bytes(gzip.compress(path.read_bytes()))
    path.unlink()
    assert "decompress it first" in only_skip(zipped).reason


def test_arrow_missing_column_is_one_file_level_skip(tmp_path):
    path = tmp_path / "a.arrow"
    table = pa.table({"body": ["x"] * 10})
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=2)
    assert only_skip(path).reason.startswith("no column 'text' (columns: body)")


def test_saved_dataset_missing_a_data_file_is_skipped(tmp_path):
    folder = tmp_path / "ds"
    folder.mkdir()
    table = pa.table({"text": ["a"]})
    with pa.OSFile(str(folder / "data-0.arrow"), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    files = [{"filename": "data-0.arrow"}, {"filename": "data-1.arrow"}]
    (folder / "state.json").write_text(json.dumps({"_data_files": files}))
    documents, skipped = read(folder)
    assert [d.text for d in documents] == ["a"]
    assert [s.locator for s in skipped] == ["file"]
    assert "data-1.arrow" in skipped[0].reason


def test_saved_dataset_missing_column_is_skipped_once(tmp_path):
    folder = tmp_path / "ds"
    folder.mkdir()
    table = pa.table({"body": ["a"]})
    for name in ["d0.arrow", "d1.arrow"]:
        with pa.OSFile(str(folder / name), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
    (folder / "state.json").write_text(
        json.dumps({"_data_files": [{"filename": "d0.arrow"}, {"filename": "d1.arrow"}]})
    )
    assert only_skip(folder).reason.startswith("no column 'text' (columns: body)")


# --- truncated and corrupt compressed files ---------------------------------------------------


@pytest.mark.parametrize("compression", sorted(COMPRESSORS))
def test_truncated_compressed_jsonl_keeps_the_documents_before_the_cut(tmp_path, compression):
    suffix, compress = COMPRESSORS[compression]
    records = [{"text": f"record {i}: {os.urandom(24).hex()}"} for i in range(8000)]
    data = compress(jsonl(records))
    path = tmp_path / f"a.jsonl{suffix}"
    path.write_bytes(data[: len(data) * 3 // 4])
    counted: list[int] = []
    [source], _ = discover([str(path)])
    items = list(read_source(source, ReadOptions(), counted.append))
    *documents, skip = items
    assert [d.text for d in documents] == [r["text"] for r in records[: len(documents)]]
    assert isinstance(skip, Skipped)
    assert skip.reason.startswith(f"truncated {compression} stream: ")
    assert skip.reason.endswith("re-download or re-compress the file")
    assert documents
    assert skip.locator == f"after line {len(documents)}"
    assert f"the {len(documents)} lines before were counted" in skip.reason
    assert sum(counted) == source.size


@pytest.mark.parametrize("compression", sorted(COMPRESSORS))
def test_truncated_compressed_text_file_is_skipped_whole(tmp_path, compression):
    suffix, compress = COMPRESSORS[compression]
    data = compress(os.urandom(50_000).hex().encode())
    path = tmp_path / f"a.txt{suffix}"
    path.write_bytes(data[: len(data) // 2])
    skip = only_skip(path)
    assert skip.locator == "file"
    assert skip.reason.startswith(f"truncated {compression} stream: ")
    assert "nothing from this file was counted" in skip.reason


def test_truncated_gzip_csv_says_how_many_rows_were_read(tmp_path):
    rows = "".join(f"{i},{os.urandom(16).hex()}\n" for i in range(20000))
    data = gzip.compress(f"id,text\n{rows}".encode())
    path = tmp_path / "a.csv.gz"
    path.write_bytes(data[: len(data) // 2])
    documents, [skip] = read(path)
    assert documents
    assert skip.locator == f"after row {len(documents)}"


@pytest.mark.parametrize("compression", sorted(COMPRESSORS))
def test_corrupt_compressed_data_is_skipped(tmp_path, compression):
    suffix, compress = COMPRESSORS[compression]
    data = bytearray(compress(os.urandom(20_000).hex().encode()))
    data[20:60] = b"\x00" * 40
    path = tmp_path / f"a.txt{suffix}"
    path.write_bytes(bytes(data))
    skip = only_skip(path)
    assert skip.locator == "file"
    assert "re-download or re-compress the file" in skip.reason


def test_plain_file_with_a_compression_extension_is_reported(tmp_path):
    path = tmp_path / "a.txt.gz"
    path.write_text("not gzip at all")
    skip = only_skip(path)
    assert skip.reason.startswith("corrupt gzip stream")


@pytest.mark.parametrize("compression", sorted(COMPRESSORS))
def test_a_compressed_file_given_up_half_way_counts_the_text_its_rest_held(tmp_path, compression):
    """What a corrupt compressed file left unread is estimated in text bytes, not compressed ones."""
    suffix, compress = COMPRESSORS[compression]
    rng = random.Random(0)  # a zstd frame without a checksum holds corruption in a raw block unseen: not this one
    records = [{"text": f"record {i}: {rng.randbytes(24).hex()}"} for i in range(40_000)]
    text = jsonl(records)
    data = bytearray(compress(text))
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(64)
    path = tmp_path / f"a.jsonl{suffix}"
    path.write_bytes(bytes(data))
    documents, skipped = read(path)
    skip = skipped[-1]
    assert skip.locator.startswith("after line")
    assert skip.unmeasured  # an estimate: the tally cannot know what the corrupt rest held
    if compression == "gzip":
        return  # deflate decodes the damage as other text: gzip finds it only at the end, by its CRC
    lost = len(text) - sum(len(json.dumps({"text": d.text})) + 1 for d in documents)
    assert lost > 0 and 0.5 * lost <= skip.size <= 1.5 * lost, (skip.size, lost)
