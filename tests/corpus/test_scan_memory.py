"""`vocabrisk.scan` on corpora in memory: the same counts as the same text in files.

Each in-memory type is compared with a file holding the same records, read by the file
readers (JSON lines, Parquet, a saved dataset), so any difference in what a document is,
how fields join or which rows are skipped shows up as a count difference.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vocabrisk import rank, scan
from vocabrisk.counting.executors import ExecutorError, LocalExecutor
from vocabrisk.errors import InputError, ModelError

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_corpora"


@pytest.fixture(scope="module")
def records() -> list[dict]:
    """The sample CSV's records (numbers, hashes, prices: tokenizer edge cases), and a chat corpus."""
    pd = pytest.importorskip("pandas")
    return pd.read_csv(SAMPLES / "numbers-tables.csv", dtype=str).to_dict("records")


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def same_counts(a, b) -> None:
    assert a.counts == b.counts
    assert (a.documents, a.total_tokens, a.skipped) == (b.documents, b.total_tokens, b.skipped)


@pytest.fixture(scope="module")
def from_file(records, tmp_path_factory):
    return scan([str(write_jsonl(tmp_path_factory.mktemp("jsonl") / "rows.jsonl", records))], "demo")


def test_pandas_dataframe_and_series_count_like_the_same_rows_in_a_file(records, from_file):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(records)
    same_counts(scan(frame, "demo"), from_file)
    same_counts(scan(frame["text"], "demo"), from_file)
    profile = scan(frame, "demo", text_field="text")
    assert profile.sources[0]["path"] == "<pandas.DataFrame #1>" and profile.sources[0]["format"] == "memory"


def test_polars_and_arrow_tables_count_like_the_same_rows_in_parquet(records, tmp_path):
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame(records)
    path = tmp_path / "rows.parquet"
    frame.write_parquet(path)
    from_parquet = scan([str(path)], "demo")
    same_counts(scan(frame, "demo"), from_parquet)
    same_counts(scan(frame["text"], "demo"), from_parquet)
    same_counts(scan(frame.to_arrow(), "demo"), from_parquet)


def test_datasets_dataset_counts_like_its_saved_folder_and_honours_selection(records, tmp_path):
    datasets = pytest.importorskip("datasets")
    dataset = datasets.Dataset.from_list(records)
    dataset.save_to_disk(tmp_path / "saved")
    same_counts(scan(dataset, "demo"), scan([str(tmp_path / "saved")], "demo"))
    subset = dataset.shuffle(seed=1).select(range(100))  # an indices mapping over the same table
    subset.save_to_disk(tmp_path / "subset")
    same_counts(scan(subset, "demo"), scan([str(tmp_path / "subset")], "demo"))


def test_iterable_dataset_and_plain_iterables_count_like_jsonl(records, from_file):
    datasets = pytest.importorskip("datasets")
    texts = [row["text"] for row in records]
    streamed = datasets.Dataset.from_list(records).to_iterable_dataset(num_shards=3)
    same_counts(scan(streamed, "demo"), from_file)
    same_counts(scan([texts], "demo"), from_file)  # a list of texts is one input
    same_counts(scan((text for text in texts), "demo"), from_file)
    same_counts(scan(np.array(texts), "demo"), from_file)
    same_counts(scan([records], "demo"), from_file)  # records: dicts by field, as in JSON lines


def test_chat_records_count_like_the_chat_jsonl(tmp_path):
    import gzip

    with gzip.open(SAMPLES / "german-dialogue.jsonl.gz", "rt", encoding="utf-8") as file:
        chats = [json.loads(line) for line in file]
    same_counts(scan([chats], "demo"), scan([str(SAMPLES / "german-dialogue.jsonl.gz")], "demo"))


def test_in_memory_and_file_inputs_mix_and_add_up(records, from_file):
    texts = [row["text"] for row in records]
    both = scan([str(SAMPLES / "korean-notes.txt"), texts[:10], texts[10:]], "demo")
    korean = scan([str(SAMPLES / "korean-notes.txt")], "demo")
    assert both.counts == korean.counts + from_file.counts
    assert [s["path"] for s in both.sources][1:] == ["<builtins.list #1>", "<builtins.list #2>"]


def test_missing_and_non_text_values_are_skipped_and_reported_by_row(tmp_path):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"text": ["one", None, "three", float("nan"), 5], "n": [1, 2, 3, 4, 5]})
    profile = scan(frame, "demo")
    assert profile.documents == 2 and profile.skipped == 3
    assert [(s["locator"], s["reason"]) for s in profile.skipped_examples] == [
        ("row 2", "missing value (None, NaN or NA)"),
        ("row 4", "missing value (None, NaN or NA)"),
        ("row 5", "value is int, not a string"),
    ]
    with pytest.raises(InputError, match="row 2"):
        scan(frame, "demo", strict=True)
    with pytest.raises(InputError, match=r"no documents.*no column 'body' \(columns: text, n\)"):
        scan(frame, "demo", text_field="body")
    with pytest.raises(InputError, match="column 'n' has dtype int64, not text"):
        scan(frame, "demo", text_field="n")
    assert scan(pd.Series(["a", pd.NA, "b"], dtype="string"), "demo").skipped == 1


def test_progress_is_reported_as_for_files(records):
    class Recorder:
        def __init__(self):
            self.events = []

        def start(self, total_bytes, total_files):
            self.events.append(("start", total_bytes, total_files))

        def advance(self, raw_bytes):
            pass

        def counted(self, documents, tokens):
            self.events.append(("counted", documents, tokens))

        def file_done(self, source):
            self.events.append(("done", source.path))

    recorder = Recorder()
    profile = scan([[row["text"] for row in records]], "demo", progress=recorder)
    counted = [e for e in recorder.events if e[0] == "counted"]
    assert recorder.events[0] == ("start", None, 1) and recorder.events[-1] == ("done", "<builtins.list #1>")
    assert sum(e[1] for e in counted) == profile.documents and sum(e[2] for e in counted) == profile.total_tokens


def test_what_cannot_be_counted_in_memory_is_refused_with_a_way_out(tmp_path):
    with pytest.raises(ExecutorError, match="in this process"):
        scan([["some text"]], "demo", executor=LocalExecutor(workers=2))
    with pytest.raises(InputError, match="cannot be checkpointed"):
        scan([["some text"]], "demo", checkpoint=tmp_path / "ck")
    with pytest.raises(InputError, match="cannot read a corpus from int"):
        scan([5], "demo")


def test_inputs_of_the_wrong_kind_are_refused_saying_what_is_accepted(tmp_path):
    """Issue 21, item 10: these raised raw TypeErrors, or took texts for missing paths without a word on texts."""
    with pytest.raises(InputError, match="cannot read a corpus from bytes") as bytes_error:
        scan(b"some text", "demo")
    assert "decode the bytes" in bytes_error.value.hint
    with pytest.raises(InputError, match="cannot read a corpus from bytearray"):
        scan([bytearray(b"some text")], "demo")
    with pytest.raises(ModelError, match="the model must be a name, a path or a LoadedModel, not int"):
        scan([str(SAMPLES / "korean-notes.txt")], model=5)
    with pytest.raises(InputError, match="rank takes a list of candidates, not int"):
        rank(5, "demo")
    with pytest.raises(InputError, match="rank takes a list of candidates, not str"):
        rank(str(SAMPLES / "korean-notes.txt"), "demo")  # would have ranked each character
    with pytest.raises(InputError, match="a rank candidate is a path or a Profile, not float"):
        rank([1.5], "demo")
    for texts, message in ((["first text here", "second"], "input not found"), (["What is it?"], "no files match")):
        with pytest.raises(InputError, match=message) as missing:
            scan(texts, "demo")
        assert "vocabrisk.scan([texts])" in missing.value.hint


def test_a_saved_profile_folder_is_refused_as_a_corpus(tmp_path):
    korean = str(SAMPLES / "korean-notes.txt")
    scan([korean], "demo").save(tmp_path / "profile")
    for inputs in (str(tmp_path / "profile"), [str(tmp_path / "profile"), korean]):
        with pytest.raises(InputError, match="is a saved vocabrisk profile, not a corpus to count") as refused:
            scan(inputs, "demo")
        assert "Profile.load" in refused.value.hint and "--baseline" in refused.value.hint
    assert [r.name for r in rank([str(tmp_path / "profile")], "demo")] == [str(tmp_path / "profile")]  # one, alone


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=8))
def test_any_texts_count_as_the_same_jsonl_records(tmp_path, texts):
    path = write_jsonl(tmp_path / "t.jsonl", [{"text": t} for t in texts])
    from_file = scan([str(path)], "demo", prior="tokenizer")
    same_counts(scan([texts], "demo", prior="tokenizer"), from_file)


def test_readme_example_scans_a_dataframe_and_a_list_of_texts(readme_example, monkeypatch):
    pytest.importorskip("pandas")
    monkeypatch.chdir(REPO)
    namespace: dict = {}
    exec(readme_example("### Corpora already in memory"), namespace)
    assert namespace["profile"].documents == 2 and namespace["profile"].skipped == 0
