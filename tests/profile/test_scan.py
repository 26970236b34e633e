"""`vocabrisk scan` end to end: real corpora in, a profile that round-trips out, bad input reported."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import vocabrisk
from vocabrisk import Profile, scan
from vocabrisk.cli.commands import main
from vocabrisk.corpus import ReadOptions
from vocabrisk.errors import InputError, ProfileError
from vocabrisk.storage.outputs import OutputError

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_corpora"


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)


@pytest.fixture(scope="module")
def sample_profile() -> Profile:
    return scan([str(SAMPLES)], "demo")


def test_demo_scan_of_sample_corpora_profiles_every_file(sample_profile):
    files = {Path(s["path"]).name for s in sample_profile.sources}
    assert {"python-code.jsonl", "german-dialogue.jsonl.gz", "korean-notes.txt", "numbers-tables.csv"} <= files
    assert all(s["documents"] > 0 for s in sample_profile.sources)
    assert sample_profile.skipped == 0
    assert sample_profile.head.tensor == "lm_head.weight"
    assert 0 < sample_profile.used_rows() < sample_profile.vocab_size


def test_saved_profile_round_trips(sample_profile, tmp_path):
    loaded = Profile.load(sample_profile.save(tmp_path / "profile"))
    assert loaded.counts == sample_profile.counts
    assert loaded.tokens == sample_profile.tokens
    assert list(loaded.groups) == list(sample_profile.groups)
    np.testing.assert_array_equal(loaded.prior, sample_profile.prior)
    assert loaded.metadata() == sample_profile.metadata()


def test_profile_json_records_what_reproduces_the_scan(sample_profile, tmp_path):
    meta = json.loads((sample_profile.save(tmp_path / "p") / "profile.json").read_text())
    assert meta["tokenizer"]["fingerprint"].startswith("sha256:")
    assert meta["tool_version"] == vocabrisk.__version__
    assert meta["policy"] == {"add_special_tokens": True, "append_eos": False, "split_special_tokens": False}
    assert meta["tokens"] == sample_profile.total_tokens and meta["documents"] == sample_profile.documents
    assert {"path", "format", "compression", "size", "documents", "skipped"} <= set(meta["sources"][0])


def test_profiles_of_parts_add_up_to_the_profile_of_the_whole(tmp_path):
    parts = [str(SAMPLES / "python-code.jsonl"), str(SAMPLES / "korean-notes.txt")]
    whole = scan(parts, "demo")
    summed = scan(parts[:1], "demo") + scan(parts[1:], "demo")
    assert summed.counts == whole.counts


def test_scan_counts_equal_plain_encoding_of_each_document(shared_data):
    """The whole pipeline (reading, batching, threads) keeps counts exact on a real corpus."""
    from tokenizers import Tokenizer

    tokenizer_dir = shared_data / "tokenizers" / "llama2"
    corpus = shared_data / "corpora" / "de-grimm" / "de-grimm.txt"
    profile = scan([str(corpus)], str(tokenizer_dir), read_options=ReadOptions(text_unit="line"))
    tokenizer = Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json"))
    lines = [line for line in corpus.read_bytes().decode("utf-8").split("\n") if line]
    ids = [i for e in tokenizer.encode_batch(lines) for i in e.ids]
    np.testing.assert_array_equal(profile.counts.counts, np.bincount(ids, minlength=profile.vocab_size))


def test_text_bytes_are_the_utf8_size_of_the_documents(shared_data, tmp_path):
    """A profile's bytes are its documents' UTF-8 bytes, whatever their script."""
    german = shared_data / "corpora" / "de-grimm" / "de-grimm.txt"
    assert scan([str(german)], "demo").text_bytes == german.stat().st_size
    texts = ["plain ASCII", "Märchen", "행 7", "emoji 🙂", ""]
    records = tmp_path / "records.jsonl"
    records.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    assert scan([str(records)], "demo").text_bytes == sum(len(t.encode("utf-8")) for t in texts)


def test_cli_scan_prints_a_report_and_saves_the_profile(tmp_path):
    result = run("scan", str(SAMPLES), "--model", "demo", "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert "risk" in result.output and "coverage" in result.output
    assert Profile.load(tmp_path / "out").documents > 0


def test_cli_json_output_is_clean_json(tmp_path):
    result = run("scan", str(SAMPLES / "python-code.jsonl"), "--format", "json")
    payload = json.loads(result.stdout)
    assert payload["risk"]["band"] in {"low", "medium", "high"}
    assert payload["tokens"] > 0 and payload["groups"] and payload["top_at_risk"]


def test_cli_reads_stdin():
    result = run("scan", "-", "--format", "json", input="def f(x):\n    return x + 1\n")
    assert json.loads(result.stdout)["documents"] == 1


def test_skipped_records_are_counted_and_reported(tmp_path):
    corpus = tmp_path / "data.jsonl"
    corpus.write_text('{"text": "good"}\n{not json}\n{"body": "no text field"}\n{"text": "also good"}\n')
    result = run("scan", str(corpus), "--format", "json")
    payload = json.loads(result.stdout)
    assert payload["documents"] == 2 and payload["skipped"] == 2
    assert {e["locator"] for e in payload["skipped_examples"]} == {"line 2", "line 3"}


def test_strict_turns_a_skip_into_an_error_naming_file_and_line(tmp_path):
    corpus = tmp_path / "data.jsonl"
    corpus.write_text('{"text": "good"}\n{not json}\n')
    result = run("scan", str(corpus), "--strict")
    assert result.exit_code == 2
    output = " ".join(result.output.split())  # the console wraps long paths
    assert "data.jsonl" in output and "line 2" in output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("make_input", "message"),
    [
        (lambda d: str(d / "missing.txt"), "missing.txt"),
        (lambda d: str(d), "no"),  # an empty folder
        (lambda d: str(d / "*.jsonl"), "*.jsonl"),
    ],
)
def test_bad_inputs_exit_2_with_a_message_and_no_traceback(tmp_path, make_input, message):
    result = run("scan", make_input(tmp_path))
    assert result.exit_code == 2
    assert "error:" in result.output and message in result.output
    assert "Traceback" not in result.output


def test_truncated_gzip_is_skipped_and_named(tmp_path):
    blob = gzip.compress(("\n".join(json.dumps({"text": f"line {i}"}) for i in range(2000))).encode())
    (tmp_path / "cut.jsonl.gz").write_bytes(blob[: len(blob) // 2])
    result = run("scan", str(tmp_path / "cut.jsonl.gz"), "--format", "json")
    payload = json.loads(result.stdout)
    assert payload["skipped"] == 1 and payload["documents"] > 0
    assert "cut.jsonl.gz" in payload["skipped_examples"][0]["source"]


def test_unknown_model_exits_2():
    result = run("scan", str(SAMPLES), "--model", "./not-a-model")
    assert result.exit_code == 2 and "not found" in result.output


def test_only_binary_or_unsupported_files_is_an_input_error(tmp_path):
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0")
    with pytest.raises(InputError, match="no readable files") as caught:
        scan([str(tmp_path)], "demo")
    assert "unsupported file type '.png'" in caught.value.hint


def test_out_folder_that_is_not_a_profile_is_never_overwritten(tmp_path):
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me")
    result = run("scan", str(SAMPLES / "korean-notes.txt"), "--out", str(precious))
    assert result.exit_code == 2
    assert (precious / "notes.txt").read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["precious"]


def test_failed_save_leaves_no_half_written_profile(sample_profile, tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(pq, "write_table", broken)
    with pytest.raises(OutputError, match=r"out: cannot write the profile \(disk full\); nothing there was replaced"):
        sample_profile.save(tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_profiles_of_different_tokenizers_do_not_add(sample_profile, shared_data):
    other = scan([str(SAMPLES / "korean-notes.txt")], str(shared_data / "tokenizers" / "gpt2"))
    with pytest.raises(ProfileError, match="different tokenizers"):
        sample_profile + other


def test_loading_something_that_is_not_a_profile_says_how_to_make_one(tmp_path):
    with pytest.raises(ProfileError) as exc:
        Profile.load(tmp_path)
    assert "vocabrisk scan" in exc.value.hint
