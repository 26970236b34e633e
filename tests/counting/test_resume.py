"""A scan killed at any point and started again with --resume ends with exactly the profile of
an uninterrupted scan; checkpoints of another scan are never mixed in."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from vocabrisk import InputError, SpecialTokenPolicy, scan
from vocabrisk.counting.executors.checkpoint import read_counts

SHARDS = 48
# profile.json holds no timing field today; one added later must be listed here to be ignored.
TIMING_FIELDS = ("elapsed_s", "started_at", "finished_at")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """48 files of about 1 MB: long enough to scan (a few seconds) to be killed part-way."""
    folder = tmp_path_factory.mktemp("corpus")
    rng = random.Random(7)
    words = [f"{rng.choice(['ka', 'to', 'mi', 'ra', 'zu'])}{n}" for n in range(3000)] + ["the", "und", "한국어"]
    for index in range(SHARDS):
        lines = [json.dumps({"text": " ".join(rng.choices(words, k=60))}) for _ in range(2000)]
        if index % 16 == 5:
            lines[3] = "{broken"
        (folder / f"part-{index:03d}.jsonl").write_text("\n".join(lines) + "\n")
    return folder


@pytest.fixture(scope="module")
def uninterrupted(corpus, tmp_path_factory) -> Path:
    return scan([str(corpus)], "demo").save(tmp_path_factory.mktemp("whole") / "profile")


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "vocabrisk.cli", "scan", *args, "--quiet", "--format", "json"]


def checkpointed(folder: Path) -> int:
    """The shards counted in the checkpoint folder's files: one file per unit of them (small files together)."""
    shards = folder / "shards"
    files = [p for p in shards.iterdir() if p.suffix == ".npz"] if shards.is_dir() else []
    return sum(len(read_counts(path)[1]["shards"]) for path in files)


def kill_when(command: list[str], folder: Path, at_least: int) -> None:
    """Run `command` and SIGKILL it once `folder` holds `at_least` shard checkpoints."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while checkpointed(folder) < at_least and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL, "the scan ended before it could be killed part-way"


def same_profile(a: Path, b: Path) -> bool:
    """tokens.parquet byte for byte, and profile.json but for timing fields."""
    metas = [json.loads((folder / "profile.json").read_text()) for folder in (a, b)]
    for meta in metas:
        for field in TIMING_FIELDS:
            meta.pop(field, None)
    return metas[0] == metas[1] and (a / "tokens.parquet").read_bytes() == (b / "tokens.parquet").read_bytes()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_scan_killed_twice_resumes_to_the_uninterrupted_profile(corpus, uninterrupted, tmp_path, workers):
    checkpoint, out = tmp_path / "checkpoint", tmp_path / "profile"
    command = cli(str(corpus), "--checkpoint", str(checkpoint), "--resume", "--workers", workers, "--out", str(out))
    kill_when(command, checkpoint, at_least=3)
    first = checkpointed(checkpoint)
    kill_when(command, checkpoint, at_least=first + 5)
    assert first < checkpointed(checkpoint) < SHARDS and not out.exists()

    finished = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr
    assert checkpointed(checkpoint) == SHARDS
    assert same_profile(out, uninterrupted)


def test_unreadable_and_half_written_checkpoints_are_counted_again(corpus, uninterrupted, tmp_path):
    checkpoint = tmp_path / "checkpoint"
    scan([str(corpus)], "demo", checkpoint=checkpoint)
    shards = sorted((checkpoint / "shards").iterdir())
    shards[0].write_bytes(shards[0].read_bytes()[:100])  # cut short, as no atomic write leaves it
    shards[1].unlink()
    (checkpoint / "shards" / ".tmp-of-a-killed-write.tmp").write_bytes(b"partial")
    resumed = scan([str(corpus)], "demo", checkpoint=checkpoint, resume=True).save(tmp_path / "profile")
    assert same_profile(resumed, uninterrupted)
    assert not any(p.name.startswith(".") for p in (checkpoint / "shards").iterdir())


def test_checkpoints_saved_before_v7_with_a_2_gram_sample_are_resumed_from(corpus, tmp_path):
    """Before v7 each unit's file held the unit's 2-gram sample beside its counts (`context_*`): a resumed scan
    reads the counts and leaves the sample, counting nothing again."""
    files = sorted(str(p) for p in corpus.iterdir())[:3]
    checkpoint = tmp_path / "checkpoint"
    whole = scan(files, "demo", checkpoint=checkpoint).save(tmp_path / "whole")
    units = sorted((checkpoint / "shards").iterdir())
    for path in units:
        with np.load(path) as data:
            saved = {name: data[name] for name in data.files}
        meta = {**json.loads(str(saved.pop("meta"))), "context_level": 0, "context_pairs": 3}
        keys, counts = np.array([7, 9, 12], dtype=np.uint64), np.array([2, 1, 4], dtype=np.int64)
        np.savez_compressed(path, **saved, context_keys=keys, context_counts=counts, meta=np.array(json.dumps(meta)))
    resumed = scan(files, "demo", checkpoint=checkpoint, resume=True).save(tmp_path / "resumed")
    assert same_profile(resumed, whole)
    for path in units:  # read, not counted again: a unit counted again is written again, without the sample
        with np.load(path) as data:
            assert "context_keys" in data.files


def test_checkpoints_of_another_scan_are_refused(corpus, tmp_path):
    checkpoint = tmp_path / "checkpoint"
    files = sorted(str(p) for p in corpus.iterdir())
    scan(files[:2], "demo", checkpoint=checkpoint)
    with pytest.raises(InputError, match="holds the checkpoints of an earlier scan") as exc:
        scan(files[:2], "demo", checkpoint=checkpoint)
    assert "--resume" in exc.value.hint
    with pytest.raises(InputError, match=r"different scan .*sources changed"):
        scan(files[:3], "demo", checkpoint=checkpoint, resume=True)
    with pytest.raises(InputError, match=r"different scan .*policy changed"):
        scan(files[:2], "demo", checkpoint=checkpoint, resume=True, policy=SpecialTokenPolicy(add_special_tokens=False))


def test_a_folder_that_is_not_a_checkpoint_is_left_alone(corpus, tmp_path):
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me")
    with pytest.raises(InputError, match="not a checkpoint folder"):
        scan([str(next(corpus.iterdir()))], "demo", checkpoint=precious, resume=True)
    assert os.listdir(precious) == ["notes.txt"]
