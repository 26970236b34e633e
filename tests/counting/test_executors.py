"""Engines decide only where counting runs: the profile is the same, byte for byte, whatever the
executor, the number of workers or the order in which shards are counted; a worker that dies is
replaced and its shard counted again, and a shard that keeps failing is reported."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from vocabrisk import InputError, Profile, scan
from vocabrisk.cli.commands import main
from vocabrisk.corpus import ReadOptions, Source, discover
from vocabrisk.counting.executors import (
    CountJob,
    ExecutorError,
    LocalExecutor,
    RayExecutor,
    Shard,
    ShardResult,
    executor_for,
)
from vocabrisk.counting.executors import shards as shards_module
from vocabrisk.errors import MissingExtra

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_corpora"
# profile.json holds no timing field today; one added later must be listed here to be ignored.
TIMING_FIELDS = ("elapsed_s", "started_at", "finished_at")


def same_profile(a: Profile, b: Profile, tmp_path: Path) -> bool:
    """tokens.parquet byte for byte, and profile.json but for timing fields."""
    folders = [a.save(tmp_path / "a"), b.save(tmp_path / "b")]
    metas = [json.loads((f / "profile.json").read_text()) for f in folders]
    for meta in metas:
        for field in TIMING_FIELDS:
            meta.pop(field, None)
    return (
        metas[0] == metas[1]
        and (folders[0] / "tokens.parquet").read_bytes() == (folders[1] / "tokens.parquet").read_bytes()
    )


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> list[str]:
    """The sample corpora plus shards with skipped records and a Parquet file."""
    extra = tmp_path_factory.mktemp("extra")
    for index in range(4):
        lines = [json.dumps({"text": f"shard {index} record {n} " * (n % 7 + 1)}) for n in range(300)]
        lines[17 + index] = "{not json"
        (extra / f"part-{index}.jsonl").write_text("\n".join(lines) + "\n")
    pq.write_table(pa.table({"text": [f"row {n} 한국어 {n * n}" for n in range(500)]}), extra / "rows.parquet")
    return [str(SAMPLES), str(extra)]


@pytest.fixture(scope="module")
def local_profile(corpus) -> Profile:
    return scan(corpus, "demo")


class ReversedOrder:
    """An executor that counts the shards last to first and hands back the results shuffled."""

    def count(self, job: CountJob, shards: Sequence[Shard], progress) -> Iterator[list[ShardResult]]:
        results = list(LocalExecutor().count(job, list(reversed(shards)), progress))
        yield from results[1::2] + results[0::2]


@pytest.fixture(autouse=True)
def file_units(monkeypatch):
    """Each file a unit of its own (`shards.units`): the test corpora are smaller than one unit, which a single
    worker would count in this process; tests that gather files into units set their own size."""
    monkeypatch.setattr(shards_module, "UNIT_BYTES", 1)


def test_workers_and_shard_order_do_not_change_the_profile(corpus, local_profile, tmp_path):
    assert local_profile.skipped == 4 and len(local_profile.sources) > 10
    for executor in (LocalExecutor(workers=2), ReversedOrder()):
        assert same_profile(local_profile, scan(corpus, "demo", executor=executor), tmp_path / type(executor).__name__)


@pytest.mark.parametrize("unit_bytes", [40_000, 300_000])
def test_workers_counting_units_of_several_files_give_the_same_profile(
    corpus, local_profile, tmp_path, monkeypatch, unit_bytes
):
    shards = [Shard(i, source) for i, source in enumerate(discover(corpus, ReadOptions())[0])]
    monkeypatch.setattr(shards_module, "UNIT_BYTES", unit_bytes)
    grouped = shards_module.units(shards)
    assert 2 <= len(grouped) < len(shards) and [s for unit in grouped for s in unit] == shards
    assert all(sum(s.source.size for s in unit) <= unit_bytes or len(unit) == 1 for unit in grouped)
    profile = scan(corpus, "demo", executor=LocalExecutor(workers=2))
    assert same_profile(local_profile, profile, tmp_path / str(unit_bytes))


def test_a_unit_is_a_large_or_unsized_source_alone_or_small_ones_together():
    sizes = [10, 20, None, 5, 100, 30, 40, 50, 0]
    shards = [Shard(i, Source(f"f{i}", "text", None, size)) for i, size in enumerate(sizes)]
    grouped = shards_module.units(shards, unit_bytes=60)
    assert [[s.index for s in unit] for unit in grouped] == [[0, 1], [2], [3], [4], [5], [6], [7, 8]]


def test_a_failed_unit_is_retried_file_by_file_and_only_the_failing_file_is_given_up():
    shards = [Shard(i, Source(f"f{i}", "text", None, 10)) for i in range(3)]
    queue = shards_module.ShardQueue([tuple(shards)], vocab_size=8, attempts=2)
    assert queue.failed(queue.todo.popleft(), "killed") == []
    assert list(queue.todo) == [(shards[0],), (shards[1],), (shards[2],)]
    queue.todo.popleft(), queue.todo.popleft()  # counted, this time
    [given_up] = queue.failed(queue.todo.popleft(), "killed again")
    assert given_up.index == 2 and given_up.failed and "failed 2 times" in given_up.skip_examples[0].reason
    assert not queue.todo


class Recorded:
    """A ScanProgress that adds up what it is told."""

    def __init__(self) -> None:
        self.total = self.bytes = self.tokens = self.files = 0

    def start(self, total_bytes, total_files) -> None:
        self.total = total_bytes

    def advance(self, raw_bytes) -> None:
        self.bytes += raw_bytes

    def counted(self, documents, tokens) -> None:
        self.tokens += tokens

    def file_done(self, source) -> None:
        self.files += 1


@pytest.mark.parametrize("workers", [1, 2])
def test_progress_adds_up_in_workers_too(corpus, local_profile, workers):
    progress = Recorded()
    scan(corpus, "demo", executor=LocalExecutor(workers=workers), progress=progress)
    assert progress.bytes == progress.total == sum(s["size"] for s in local_profile.sources)
    assert progress.files == len(local_profile.sources) and progress.tokens == local_profile.total_tokens


def test_workers_report_skips_in_discovery_order(corpus, local_profile):
    profile = scan(corpus, "demo", executor=LocalExecutor(workers=2))
    assert [e["source"] for e in profile.skipped_examples] == [e["source"] for e in local_profile.skipped_examples]
    assert [s["skipped"] for s in profile.sources] == [s["skipped"] for s in local_profile.sources]


def test_strict_fails_in_a_worker_with_the_file_and_line(corpus):
    with pytest.raises(InputError) as exc:
        scan(corpus[1:], "demo", executor=LocalExecutor(workers=2), strict=True)
    assert re.search(r"part-\d\.jsonl, line 1\d: malformed JSON", str(exc.value)) and "--strict" in exc.value.hint


def test_stdin_cannot_go_to_worker_processes(corpus):
    with pytest.raises(ExecutorError, match="standard input can only be counted in this process"):
        scan(["-", *corpus], "demo", executor=LocalExecutor(workers=2))


def test_engine_options_that_do_not_fit_are_errors_with_hints():
    with pytest.raises(ExecutorError, match="Ray cluster"):
        executor_for("local", address="auto")
    with pytest.raises(ExecutorError, match="workers"):
        LocalExecutor(workers=0)


def test_missing_ray_says_which_extra_to_install(monkeypatch, corpus):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    with pytest.raises(MissingExtra, match="--executor ray needs ray") as exc:
        scan(corpus, "demo", executor=RayExecutor())
    assert "vocabrisk[ray]" in exc.value.hint


# ---- workers that die --------------------------------------------------------------------
TEXT = "a stream that arrives only when its reader is alive " * 50


def readers_of(path: Path) -> list[int]:
    """Processes other than this one holding `path` open."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) == os.getpid():
            continue
        try:
            links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        except OSError:
            continue
        if os.path.realpath(path) in links:
            found.append(int(pid))
    return found


def exited(pid: int) -> bool:
    """Whether the process has closed its files: reaped, or a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX"
    except OSError:
        return True


def serve_stream(fifo: Path, kills: int, text: str | None) -> None:
    """Kill the reader of the pipe `kills` times as it waits for data, then give `text` to the
    next one. The write end stays open throughout, so that no reader ever sees an early end;
    opening it returns only once a reader has the pipe open, so each kill lands mid-shard. Unbuffered: the
    text is in the pipe as soon as it is written, not at the close, when the reader seen may have gone."""
    with open(fifo, "wb", buffering=0) as writer:
        for _ in range(kills):
            for pid in wait_for_readers(fifo):
                os.kill(pid, signal.SIGKILL)
                while not exited(pid):  # a dying reader would swallow what is written next
                    time.sleep(0.01)
        while text is not None:
            wait_for_readers(fifo)
            try:
                writer.write(text.encode())
                text = None
            except BrokenPipeError:  # the reader seen closed the pipe before the write: wait for the next
                continue


def wait_for_readers(fifo: Path) -> list[int]:
    deadline = time.monotonic() + 60
    while not (readers := readers_of(fifo)) and time.monotonic() < deadline:
        time.sleep(0.01)
    return readers


def scan_in_thread(inputs: list[str], executor) -> tuple[threading.Thread, dict]:
    out: dict = {}

    def run() -> None:
        try:
            out["profile"] = scan(inputs, "demo", executor=executor)
        except BaseException as exc:
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


@pytest.fixture
def stream(tmp_path) -> Path:
    if not hasattr(os, "mkfifo") or not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs named pipes and /proc")
    fifo = tmp_path / "stream.txt"
    os.mkfifo(fifo)
    return fifo


def expected_counts(tmp_path: Path, others: list[str]):
    plain = tmp_path / "plain.txt"
    plain.write_text(TEXT)
    return scan([*others, str(plain)], "demo").counts


def test_a_killed_local_worker_is_replaced_and_its_shard_counted_again(stream, tmp_path):
    others = [str(SAMPLES / "korean-notes.txt"), str(SAMPLES / "python-code.jsonl")]
    thread, out = scan_in_thread([*others, str(stream)], LocalExecutor(workers=2, attempts=2))
    serve_stream(stream, 1, TEXT)
    thread.join(60)
    assert "error" not in out, out.get("error")
    assert out["profile"].counts == expected_counts(tmp_path, others)
    assert out["profile"].skipped == 0


def test_a_shard_that_keeps_failing_is_reported_not_dropped(stream):
    others = [str(SAMPLES / "korean-notes.txt")]
    thread, out = scan_in_thread([*others, str(stream)], LocalExecutor(workers=2, attempts=2))
    serve_stream(stream, 2, None)
    thread.join(60)
    profile = out["profile"]
    assert profile.documents == scan(others, "demo").documents
    [skip] = profile.skipped_examples
    assert skip["source"] == str(stream) and "failed 2 times" in skip["reason"] and "SIGKILL" in skip["reason"]
    assert [s["skipped"] for s in profile.sources] == [0, 1]


# ---- Ray: one local cluster of two CPUs for the module -------------------------------------
@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    yield ray
    ray.shutdown()


def test_ray_gives_the_same_profile_as_the_local_engine(ray_cluster, corpus, local_profile, tmp_path):
    assert same_profile(local_profile, scan(corpus, "demo", executor=RayExecutor()), tmp_path)


def test_cli_engine_ray_joins_the_running_cluster(ray_cluster, corpus, local_profile):
    result = CliRunner().invoke(main, ["scan", *corpus, "--executor", "ray", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["tokens"] == local_profile.total_tokens


def test_a_killed_ray_worker_is_retried(ray_cluster, stream, tmp_path):
    others = [str(SAMPLES / "korean-notes.txt")]
    thread, out = scan_in_thread([*others, str(stream)], RayExecutor(attempts=2))
    serve_stream(stream, 1, TEXT)
    thread.join(60)
    assert "error" not in out, out.get("error")
    assert out["profile"].counts == expected_counts(tmp_path, others)


def test_a_shard_that_keeps_failing_on_ray_is_reported_not_dropped(ray_cluster, stream):
    others = [str(SAMPLES / "korean-notes.txt")]
    thread, out = scan_in_thread([*others, str(stream)], RayExecutor(attempts=2))
    serve_stream(stream, 2, None)
    thread.join(60)
    assert "error" not in out, out.get("error")
    profile = out["profile"]
    assert profile.documents == scan(others, "demo").documents
    [skip] = profile.skipped_examples
    assert skip["source"] == str(stream) and "failed 2 times" in skip["reason"], skip


def test_a_job_counts_from_its_tokenizer_file_where_it_is_and_from_a_copy_elsewhere(tmp_path, monkeypatch):
    """The process that made a job uses the model's own file (already read, maybe already loaded);
    a worker where that path is missing or holds other content gets a copy made from the job."""
    import tempfile
    from dataclasses import replace

    from vocabrisk.corpus import ReadOptions
    from vocabrisk.counting import SpecialTokenPolicy

    demo = Path(__file__).resolve().parents[2] / "vocabrisk" / "demo_model" / "tokenizer.json"
    original = tmp_path / "model" / "tokenizer.json"
    original.parent.mkdir()
    original.write_bytes(demo.read_bytes())
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    job = CountJob.for_tokenizer(
        original, vocab_size=4096, policy=SpecialTokenPolicy(), eos_id=None, read_options=ReadOptions()
    )
    assert job._tokenizer_file() == original
    elsewhere = replace(job, tokenizer_path=str(tmp_path / "not-here.json"))
    copy = elsewhere._tokenizer_file()
    assert copy.parent == tmp_path / "tmp" / f"vocabrisk-{os.getuid()}" and copy.read_bytes() == demo.read_bytes()
    original.write_text("{}")  # the path now holds another tokenizer
    assert job._tokenizer_file() == copy


def test_counters_released_after_a_command_load_again_and_count_the_same(corpus, local_profile):
    """What `scan` and `gate` do once they have counted (`release_counters`): the process holds no tokenizer,
    and a later count in it loads one again and counts exactly as before."""
    from vocabrisk.counting.executors import work
    from vocabrisk.model import tokenizer

    scan(corpus, "demo")
    assert work._COUNTERS and tokenizer._TOKENIZERS
    work.release_counters()
    assert not work._COUNTERS and not tokenizer._TOKENIZERS and not tokenizer._FASTOKENS
    assert scan(corpus, "demo").counts == local_profile.counts
