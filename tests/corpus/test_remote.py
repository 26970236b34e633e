"""Remote inputs read like local files: S3 against a real S3-compatible server on loopback
(moto's server mode), plain https(s) against a local web server, and Hugging Face datasets
in streaming mode over a local dataset folder (the hub itself needs network)."""

from __future__ import annotations

import functools
import gzip
import http.server
import json
import shutil
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from vocabrisk import InputError, Profile, scan
from vocabrisk.cli.commands import main
from vocabrisk.corpus import ReadOptions
from vocabrisk.corpus.hf_stream import input_for
from vocabrisk.counting.executors import LocalExecutor

SAMPLES = Path(__file__).resolve().parents[2] / "sample_corpora"
BUCKET = "corpora"


@pytest.fixture(scope="module")
def local_corpus(tmp_path_factory) -> Path:
    """The sample corpora plus columnar files, a hidden file and a truncated download."""
    folder = tmp_path_factory.mktemp("local") / "samples"
    shutil.copytree(SAMPLES, folder)
    table = pa.table({"text": [f"row {n}: Zeile {n}, 행 {n}" for n in range(300)]})
    pq.write_table(table, folder / "rows.parquet")
    feather.write_feather(table, folder / "rows.arrow")
    (folder / ".hidden.txt").write_text("never read")
    blob = gzip.compress("\n".join(json.dumps({"text": f"line {n}"}) for n in range(3000)).encode())
    (folder / "cut.jsonl.gz").write_bytes(blob[: len(blob) // 2])
    return folder


@pytest.fixture(scope="module")
def s3(local_corpus):
    """A moto S3 server on 127.0.0.1 holding the local corpus under s3://corpora/samples/."""
    s3fs = pytest.importorskip("s3fs")
    moto_server = pytest.importorskip("moto.server")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    with pytest.MonkeyPatch.context() as env:
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
            env.delenv(name, raising=False)
        env.setenv("AWS_ACCESS_KEY_ID", "testing")
        env.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        env.setenv("AWS_DEFAULT_REGION", "us-east-1")
        env.setenv("AWS_ENDPOINT_URL_S3", f"http://{host}:{port}")  # read by worker processes too
        fs = s3fs.S3FileSystem(skip_instance_cache=True)
        fs.mkdir(BUCKET)
        fs.put(str(local_corpus), f"{BUCKET}/samples", recursive=True)
        yield fs
    server.stop()


def rows(profile: Profile) -> list[tuple]:
    """Each source as the corpus sees it, whatever its location."""
    return [
        (s["path"].rsplit("/", 1)[-1], s["format"], s["compression"], s["size"], s["documents"], s["skipped"])
        for s in profile.sources
    ]


def same_counts(remote: Profile, local: Profile) -> bool:
    return remote.counts == local.counts and rows(remote) == rows(local) and remote.skipped == local.skipped


@pytest.fixture(scope="module")
def local_profile(local_corpus) -> Profile:
    return scan([str(local_corpus)], "demo")


def test_an_s3_prefix_reads_like_the_local_folder(s3, local_profile):
    remote = scan([f"s3://{BUCKET}/samples/"], "demo")
    assert same_counts(remote, local_profile)
    assert {"parquet", "arrow", "jsonl", "csv", "text"} <= {s["format"] for s in remote.sources}
    assert all(s["path"].startswith(f"s3://{BUCKET}/samples/") for s in remote.sources)
    assert not any(".hidden" in s["path"] for s in remote.sources)
    [cut] = [e for e in remote.skipped_examples if "cut.jsonl.gz" in e["source"]]
    assert "truncated gzip" in cut["reason"]


def test_file_urls_are_plain_local_paths(local_corpus, local_profile):
    assert scan([f"file://{local_corpus}"], "demo").metadata() == local_profile.metadata()


def test_s3_globs_and_single_objects(s3, local_corpus):
    glob = scan([f"s3://{BUCKET}/samples/**/*.md"], "demo")
    assert same_counts(glob, scan([str(local_corpus / "**" / "*.md")], "demo"))
    one = scan([f"s3://{BUCKET}/samples/german-dialogue.jsonl.gz"], "demo")
    assert same_counts(one, scan([str(local_corpus / "german-dialogue.jsonl.gz")], "demo"))


def test_s3_in_worker_processes_gives_the_same_profile(s3):
    url = f"s3://{BUCKET}/samples/"
    one, two = scan([url], "demo"), scan([url], "demo", executor=LocalExecutor(workers=2))
    assert one.metadata() == two.metadata() and one.counts == two.counts


def test_a_saved_dataset_on_s3_is_read_as_its_arrow_files(s3, tmp_path):
    datasets = pytest.importorskip("datasets")
    folder = tmp_path / "saved"
    records = {"text": [f"gespeichert {n} 저장 {n}" for n in range(500)]}
    datasets.Dataset.from_dict(records).save_to_disk(str(folder), num_shards=2)
    s3.put(str(folder), f"{BUCKET}/saved", recursive=True)
    remote, local = scan([f"s3://{BUCKET}/saved/"], "demo"), scan([str(folder)], "demo")
    assert remote.counts == local.counts and remote.documents == 500
    assert {s["format"] for s in remote.sources} == {"arrow"}
    assert remote.skipped == 0, "its metadata files are not input left out: a gate must not fail on them"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (f"s3://{BUCKET}/samples/missing.jsonl", "input not found"),
        ("s3://no-such-bucket/data/", "input not found"),
        (f"s3://{BUCKET}/samples/*.nothing", "no files match"),
    ],
)
def test_missing_remote_inputs_are_input_errors(s3, url, message):
    with pytest.raises(InputError, match=message):
        scan([url], "demo")


def test_cli_scans_an_s3_url(s3, local_profile):
    result = CliRunner().invoke(main, ["scan", f"s3://{BUCKET}/samples/", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["tokens"] == local_profile.total_tokens


@pytest.fixture(scope="module")
def web(local_corpus):
    """A plain web server on 127.0.0.1 serving the local corpus."""
    pytest.importorskip("aiohttp")
    handler = functools.partial(_QuietHandler, directory=str(local_corpus))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


# Parquet and Arrow need range requests, which http.server does not serve; the S3 tests cover them.
@pytest.mark.parametrize("name", ["german-dialogue.jsonl.gz", "numbers-tables.csv"])
def test_an_https_url_reads_like_the_local_file(web, local_corpus, name):
    assert same_counts(scan([f"{web}/{name}"], "demo"), scan([str(local_corpus / name)], "demo"))


def test_a_missing_web_file_is_an_input_error(web):
    with pytest.raises(InputError, match="input not found"):
        scan([f"{web}/missing.jsonl"], "demo")


# ---- Hugging Face datasets in streaming mode, over a local dataset folder --------------------
@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    """A dataset folder as on the hub: two data files for train, one for test."""
    pytest.importorskip("datasets")
    folder = tmp_path_factory.mktemp("hub-like")
    (folder / "data").mkdir()
    for index in range(2):
        records = [{"text": f"train {index}.{n}: Märchen 이야기 {n * 7}", "id": n} for n in range(400)]
        write_jsonl(folder / "data" / f"train-{index:05d}-of-00002.jsonl", records)
    write_jsonl(folder / "data" / "test-00000-of-00001.jsonl", [{"text": "held out", "id": 0}])
    return folder


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def test_a_streamed_dataset_counts_like_its_files_one_source_per_data_file(dataset):
    streamed = scan([input_for(str(dataset), "train")], "demo")
    files = scan(sorted(str(p) for p in (dataset / "data").glob("train-*.jsonl")), "demo")
    assert streamed.counts == files.counts
    assert [s["documents"] for s in streamed.sources] == [400, 400]
    assert all(s["format"] == "hf_stream" and "shard=" in s["path"] for s in streamed.sources)
    in_workers = scan([input_for(str(dataset), "train")], "demo", executor=LocalExecutor(workers=2))
    assert in_workers.metadata() == streamed.metadata()


def test_cli_hf_dataset_and_split(dataset):
    result = CliRunner().invoke(main, ["scan", "--hf-dataset", str(dataset), "--split", "test", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["documents"] == 1


def test_a_dataset_without_the_text_column_is_skipped_with_its_columns(dataset):
    with pytest.raises(InputError) as exc:
        scan([input_for(str(dataset), "test")], "demo", read_options=ReadOptions(text_fields=("body",)))
    assert "no column 'body' (columns: text, id)" in str(exc.value)


def test_an_unknown_split_says_what_to_check(dataset):
    with pytest.raises(InputError) as exc:
        scan([input_for(str(dataset), "validation")], "demo")
    assert "validation" in str(exc.value) and "network" in exc.value.hint
