"""Executors decide where counting runs; the counting code is the same everywhere.

- `LocalExecutor` (the default): this process, or `workers` local processes over shards.
- `RayExecutor`: Ray tasks over a cluster's machines (`pip install 'vocabrisk[ray]'`).

A shard is one source; small consecutive ones form a unit (`shards.units`). A worker counts whole
units, in batches across their files, and returns their counts, which the driver merges by addition
(`count_corpus`) and, with a checkpoint, saves a unit at a time as they arrive.
"""

from __future__ import annotations

from vocabrisk.counting.executors.checkpoint import Checkpoint
from vocabrisk.counting.executors.local import LocalExecutor
from vocabrisk.counting.executors.run import Executor, Merged, count_corpus
from vocabrisk.counting.executors.shards import ATTEMPTS, ExecutorError, Shard, ShardResult
from vocabrisk.counting.executors.work import CountJob

EXECUTORS = ("local", "ray")

__all__ = [
    "ATTEMPTS",
    "EXECUTORS",
    "Checkpoint",
    "CountJob",
    "Executor",
    "ExecutorError",
    "LocalExecutor",
    "Merged",
    "RayExecutor",
    "Shard",
    "ShardResult",
    "count_corpus",
    "executor_for",
]


def __getattr__(name: str):
    if name == "RayExecutor":  # loaded on first use: only `--executor ray` needs it
        from vocabrisk.counting.executors.ray import RayExecutor

        return RayExecutor
    raise AttributeError(f"module 'vocabrisk.counting.executors' has no attribute {name!r}")


def executor_for(name: str = "local", workers: int | None = None, address: str | None = None) -> Executor:
    """The executor the command line names: `--executor`, `--workers`, `--address`."""
    if name == "ray":
        from vocabrisk.counting.executors.ray import RayExecutor

        return RayExecutor(address=address, workers=workers)
    if name != "local":
        raise ExecutorError(f"unknown executor {name!r}", hint=f"use one of: {', '.join(EXECUTORS)}")
    if address:
        raise ExecutorError("--address names a Ray cluster", hint="add --executor ray, or drop --address")
    return LocalExecutor(workers=workers or 1)
