"""discover(): which inputs become sources, in what order, with what format and compression."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pytest

from vocabrisk.corpus import ReadOptions, Skipped, Source, discover
from vocabrisk.errors import InputError


def touch(path: Path, data: bytes = b"x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def write_hf_dataset(folder: Path, shards: list[list[str]]) -> list[Path]:
    """A folder shaped like `datasets.save_to_disk` output: IPC stream shards + state.json."""
    folder.mkdir(parents=True)
    names = [f"data-{i:05d}-of-{len(shards):05d}.arrow" for i in range(len(shards))]
    for name, texts in zip(names, shards, strict=True):
        table = pa.table({"text": texts})
        with pa.OSFile(str(folder / name), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
    state = {"_data_files": [{"filename": n} for n in names], "_fingerprint": "0", "_split": None}
    (folder / "state.json").write_text(json.dumps(state))
    (folder / "dataset_info.json").write_text("{}")
    return [folder / n for n in names]


def paths(sources: list[Source]) -> list[str]:
    return [s.path for s in sources]


@pytest.mark.parametrize(
    ("name", "fmt", "compression"),
    [
        ("a.txt", "text", None),
        ("a.md", "text", None),
        ("a.rst", "text", None),
        ("a.text", "text", None),
        ("a.jsonl", "jsonl", None),
        ("a.ndjson", "jsonl", None),
        ("a.json", "json", None),
        ("a.parquet", "parquet", None),
        ("a.csv", "csv", None),
        ("a.tsv", "tsv", None),
        ("a.arrow", "arrow", None),
        ("a.feather", "arrow", None),
        ("a.txt.gz", "text", "gzip"),
        ("a.jsonl.bz2", "jsonl", "bz2"),
        ("a.csv.xz", "csv", "xz"),
        ("a.jsonl.zst", "jsonl", "zstd"),
        ("a.tsv.zstd", "tsv", "zstd"),
        ("A.JSONL.GZ", "jsonl", "gzip"),
    ],
)
def test_format_and_compression_come_from_the_extension(tmp_path, name, fmt, compression):
    path = touch(tmp_path / name, b"12345")
    sources, skipped = discover([str(path)])
    assert sources == [Source(str(path), fmt, compression, 5)]
    assert skipped == []


def test_input_format_overrides_the_extension(tmp_path):
    path = touch(tmp_path / "data.txt")
    sources, _ = discover([str(path)], ReadOptions(input_format="jsonl"))
    assert sources[0].format == "jsonl"


def test_input_format_lets_an_unknown_extension_be_read(tmp_path):
    path = touch(tmp_path / "corpus.dat.gz")
    sources, _ = discover([str(path)], ReadOptions(input_format="text"))
    assert sources == [Source(str(path), "text", "gzip", 1)]


def test_folder_is_walked_recursively_in_sorted_order(tmp_path):
    for name in ["b.txt", "a/z.jsonl", "a/b/c.csv", "c.md", "a.txt"]:
        touch(tmp_path / name)
    sources, skipped = discover([str(tmp_path)])
    expected = ["a/b/c.csv", "a/z.jsonl", "a.txt", "b.txt", "c.md"]
    assert paths(sources) == [os.path.join(str(tmp_path), p) for p in expected]
    assert skipped == []


def test_hidden_files_and_folders_are_ignored_in_a_folder(tmp_path):
    touch(tmp_path / "keep.txt")
    touch(tmp_path / ".hidden.txt")
    touch(tmp_path / ".git" / "notes.txt")
    sources, skipped = discover([str(tmp_path)])
    assert paths(sources) == [str(tmp_path / "keep.txt")]
    assert skipped == []


def test_a_hidden_file_named_explicitly_is_read(tmp_path):
    path = touch(tmp_path / ".notes.txt")
    assert paths(discover([str(path)])[0]) == [str(path)]


def test_unsupported_files_in_a_folder_are_reported_not_read(tmp_path):
    touch(tmp_path / "doc.txt")
    touch(tmp_path / "image.png")
    touch(tmp_path / "weights.bin")
    touch(tmp_path / "archive.tar.gz")
    sources, skipped = discover([str(tmp_path)])
    assert paths(sources) == [str(tmp_path / "doc.txt")]
    reasons = {Path(s.source).name: s.reason for s in skipped}
    assert set(reasons) == {"image.png", "weights.bin", "archive.tar.gz"}
    assert all(s.locator == "file" for s in skipped)
    assert reasons["image.png"].startswith("unsupported file type '.png'")
    assert "'.tar.gz'" in reasons["archive.tar.gz"]
    assert "--input-format" in reasons["weights.bin"]


def test_input_format_reads_every_file_of_a_folder(tmp_path):
    touch(tmp_path / "a.log")
    touch(tmp_path / "b")
    sources, skipped = discover([str(tmp_path)], ReadOptions(input_format="text"))
    assert [(Path(s.path).name, s.format) for s in sources] == [("a.log", "text"), ("b", "text")]
    assert skipped == []


def test_recursive_glob_finds_files_at_any_depth(tmp_path):
    for name in ["top.jsonl", "x/one.jsonl", "x/y/two.jsonl", "x/skip.txt"]:
        touch(tmp_path / name)
    sources, _ = discover([str(tmp_path / "**" / "*.jsonl")])
    assert [Path(p).relative_to(tmp_path).as_posix() for p in paths(sources)] == [
        "top.jsonl",
        "x/one.jsonl",
        "x/y/two.jsonl",
    ]


def test_glob_matching_folders_walks_them(tmp_path):
    touch(tmp_path / "part1" / "a.txt")
    touch(tmp_path / "part2" / "b.txt")
    sources, _ = discover([str(tmp_path / "part*")])
    assert [Path(p).name for p in paths(sources)] == ["a.txt", "b.txt"]


def test_glob_skips_unsupported_matches_instead_of_failing(tmp_path):
    touch(tmp_path / "a.txt")
    touch(tmp_path / "b.png")
    sources, skipped = discover([str(tmp_path / "*")])
    assert [Path(p).name for p in paths(sources)] == ["a.txt"]
    assert [Path(s.source).name for s in skipped] == ["b.png"]


def test_double_star_glob_does_not_walk_folders_twice(tmp_path):
    touch(tmp_path / "a" / "b" / "c.txt")
    sources, skipped = discover([str(tmp_path / "**")])
    assert [Path(p).name for p in paths(sources)] == ["c.txt"]
    assert skipped == []


def test_duplicates_are_removed_keeping_the_first_spelling(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    touch(tmp_path / "data" / "a.txt")
    touch(tmp_path / "data" / "b.txt")
    sources, _ = discover(["data/b.txt", "data", "./data/b.txt", "data/*.txt", "data"])
    assert paths(sources) == ["data/b.txt", os.path.join("data", "a.txt")]


def test_several_inputs_keep_their_order(tmp_path):
    second = touch(tmp_path / "z" / "2.txt")
    first = touch(tmp_path / "a" / "1.txt")
    sources, _ = discover([str(second), str(first)])
    assert paths(sources) == [str(second), str(first)]


def test_dash_is_standard_input_read_as_text_by_default():
    assert discover(["-"]) == ([Source("-", "text", None, None)], [])


def test_dash_takes_the_forced_input_format_and_appears_once():
    sources, _ = discover(["-", "-"], ReadOptions(input_format="jsonl"))
    assert sources == [Source("-", "jsonl", None, None)]


def test_source_size_is_the_size_on_disk(tmp_path):
    path = touch(tmp_path / "a.txt", b"x" * 1234)
    assert discover([str(path)])[0][0].size == 1234


def test_saved_dataset_folder_is_one_source_not_its_files(tmp_path):
    files = write_hf_dataset(tmp_path / "ds", [["a", "b"], ["c"]])
    sources, skipped = discover([str(tmp_path / "ds")])
    size = sum(f.stat().st_size for f in files)
    assert sources == [Source(str(tmp_path / "ds"), "hf_dataset", None, size)]
    assert skipped == []


def test_saved_dataset_inside_a_walked_folder_is_found(tmp_path):
    touch(tmp_path / "notes.txt")
    write_hf_dataset(tmp_path / "ds", [["a"]])
    sources, skipped = discover([str(tmp_path)])
    assert [(Path(s.path).name, s.format) for s in sources] == [("ds", "hf_dataset"), ("notes.txt", "text")]
    assert skipped == []


def test_dataset_dict_gives_one_source_per_split(tmp_path):
    root = tmp_path / "dd"
    write_hf_dataset(root / "train", [["a"]])
    write_hf_dataset(root / "test", [["b"]])
    (root / "dataset_dict.json").write_text(json.dumps({"splits": ["train", "test"]}))
    sources, skipped = discover([str(root)])
    assert [(Path(s.path).name, s.format) for s in sources] == [("train", "hf_dataset"), ("test", "hf_dataset")]
    assert skipped == []


def test_dataset_dict_split_without_data_is_reported(tmp_path):
    root = tmp_path / "dd"
    write_hf_dataset(root / "train", [["a"]])
    (root / "dataset_dict.json").write_text(json.dumps({"splits": ["train", "validation"]}))
    sources, skipped = discover([str(root)])
    assert [Path(s.path).name for s in sources] == ["train"]
    assert [(Path(s.source).name, s.locator) for s in skipped] == [("validation", "folder")]


def test_folder_whose_state_json_is_not_a_dataset_is_walked(tmp_path):
    touch(tmp_path / "state.json", b'{"step": 3}')
    touch(tmp_path / "a.txt")
    sources, _ = discover([str(tmp_path)])
    assert [(Path(s.path).name, s.format) for s in sources] == [("a.txt", "text"), ("state.json", "json")]


def test_empty_subfolder_next_to_readable_files_is_reported(tmp_path):
    touch(tmp_path / "a.txt")
    (tmp_path / "empty").mkdir()
    sources, skipped = discover([str(tmp_path)])
    assert paths(sources) == [str(tmp_path / "a.txt")]
    assert skipped == [Skipped(str(tmp_path / "empty"), "folder", skipped[0].reason)]
    assert "no readable files" in skipped[0].reason


def test_read_options_take_a_single_field_name_as_a_string():
    assert ReadOptions(text_fields="body").text_fields == ("body",)
    assert ReadOptions(text_fields=["q", "a"]).text_fields == ("q", "a")


@pytest.mark.parametrize(
    "options",
    [
        {"text_unit": "sentence"},
        {"input_format": "xml"},
        {"input_format": "hf_dataset"},
        {"text_fields": ()},
        {"text_fields": ("",)},
    ],
)
def test_read_options_reject_unknown_values(options):
    with pytest.raises(InputError) as caught:
        ReadOptions(**options)
    assert caught.value.hint


# --- what a folder's walk does not read: reported, never dropped or followed out (issue 21, item 6) ---


def skip_reasons(skipped: list[Skipped]) -> dict[str, str]:
    return {Path(s.source).name: s.reason for s in skipped}


def test_a_fifo_a_socket_and_a_dangling_link_in_a_folder_are_skipped_with_the_reason(tmp_path):
    import socket

    folder = tmp_path / "corpus"
    touch(folder / "a.txt", b"hello")
    os.mkfifo(folder / "pipe.txt")
    (folder / "gone.txt").symlink_to(folder / "deleted.txt")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(folder / "sock.txt"))
        sources, skipped = discover([str(folder)])
    assert paths(sources) == [str(folder / "a.txt")]
    reasons = skip_reasons(skipped)
    assert reasons["pipe.txt"].startswith("not a regular file but a FIFO (named pipe)")
    assert reasons["sock.txt"].startswith("not a regular file but a socket")
    assert reasons["gone.txt"] == (
        f"symbolic link to {folder / 'deleted.txt'}, which does not exist; fix or remove the link"
    )
    assert all(s.locator == "file" for s in skipped)


def test_a_walk_stays_inside_the_folder_given_and_skips_links_that_leave_or_loop(tmp_path):
    touch(tmp_path / "outside.txt", b"not part of the corpus")
    folder = tmp_path / "corpus"
    touch(folder / "a.txt", b"hello")
    touch(folder / "sub" / "b.txt", b"world")
    (folder / "up").symlink_to("..")
    (folder / "elsewhere.txt").symlink_to(tmp_path / "outside.txt")
    (folder / "sub" / "loop").symlink_to("..")
    (folder / "again").symlink_to("sub")  # inside the folder: followed, its files read once
    (folder / "b-again.txt").symlink_to(folder / "sub" / "b.txt")
    sources, skipped = discover([str(folder)])
    assert sorted(paths(sources)) == [str(folder / "a.txt"), str(folder / "again" / "b.txt")]
    reasons = skip_reasons(skipped)
    assert set(reasons) == {"up", "elsewhere.txt", "loop"}
    assert reasons["up"].startswith(f"symbolic link to {tmp_path}, outside the folder given ({folder})")
    assert reasons["elsewhere.txt"].startswith(f"symbolic link to {tmp_path / 'outside.txt'}, outside the folder")
    assert reasons["loop"].startswith(f"symbolic link back to {folder}, a folder that holds it (a loop)")


def test_a_glob_matching_a_fifo_skips_it_rather_than_blocking_on_it(tmp_path):
    touch(tmp_path / "a.txt", b"hello")
    os.mkfifo(tmp_path / "b.txt")
    sources, skipped = discover([str(tmp_path / "*.txt")])
    assert paths(sources) == [str(tmp_path / "a.txt")]
    assert skip_reasons(skipped)["b.txt"].startswith("not a regular file but a FIFO")


def test_an_entry_that_cannot_be_looked_at_is_skipped(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root looks into folders whatever their mode")
    folder = tmp_path / "corpus"
    touch(folder / "a.txt", b"hello")
    touch(folder / "locked" / "b.txt", b"hidden")
    (folder / "inside").symlink_to(folder / "locked" / "b.txt")
    (folder / "locked").chmod(0o600)  # listable name, but no entry in it can be looked at
    try:
        _, skipped = discover([str(folder)])
    finally:
        (folder / "locked").chmod(0o700)
    assert "permission denied" in skip_reasons(skipped)["inside"].lower()


def test_a_link_given_as_an_input_that_loops_or_dangles_is_named_as_it_would_be_inside_a_folder(tmp_path):
    """Issue 32: a symlink loop given by name said "input not found"; inside a folder it was named correctly."""
    (tmp_path / "a.txt").symlink_to(tmp_path / "b.txt")
    (tmp_path / "b.txt").symlink_to(tmp_path / "a.txt")
    (tmp_path / "gone.txt").symlink_to(tmp_path / "deleted.txt")
    with pytest.raises(InputError, match=r"a\.txt: symbolic link to .*b\.txt that cannot be followed: .*fix or remove"):
        discover([str(tmp_path / "a.txt")])
    with pytest.raises(InputError, match=r"gone\.txt: symbolic link to .*deleted\.txt, which does not exist"):
        discover([str(tmp_path / "gone.txt")])
