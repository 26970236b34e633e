"""Engines decide where counting runs; the counting code is the same everywhere.

- `LocalEngine` (the default): this process, or `workers` local processes over shards.
- `RayEngine`: Ray tasks over a cluster's machines (`pip install 'vocabrisk[ray]'`).

A shard is one source; a worker counts whole shards and returns their counts, which the
driver merges by addition (`count_corpus`) and, with a checkpoint, saves as they arrive.
"""

from __future__ import annotations

from vocabrisk.engines.checkpoint import Checkpoint
from vocabrisk.engines.local import LocalEngine
from vocabrisk.engines.run import Engine, Merged, count_corpus
from vocabrisk.engines.shards import ATTEMPTS, EngineError, Shard, ShardResult
from vocabrisk.engines.work import CountJob

ENGINES = ("local", "ray")

__all__ = [
    "ATTEMPTS",
    "ENGINES",
    "Checkpoint",
    "CountJob",
    "Engine",
    "EngineError",
    "LocalEngine",
    "Merged",
    "RayEngine",
    "Shard",
    "ShardResult",
    "count_corpus",
    "engine_for",
]


def __getattr__(name: str):
    if name == "RayEngine":  # loaded on first use: only `--engine ray` needs it
        from vocabrisk.engines.ray_engine import RayEngine

        return RayEngine
    raise AttributeError(f"module 'vocabrisk.engines' has no attribute {name!r}")


def engine_for(name: str = "local", workers: int | None = None, address: str | None = None) -> Engine:
    """The engine the command line names: `--engine`, `--workers`, `--address`."""
    if name == "ray":
        from vocabrisk.engines.ray_engine import RayEngine

        return RayEngine(address=address, workers=workers)
    if name != "local":
        raise EngineError(f"unknown engine {name!r}", hint=f"use one of: {', '.join(ENGINES)}")
    if address:
        raise EngineError("--address names a Ray cluster", hint="add --engine ray, or drop --address")
    return LocalEngine(workers=workers or 1)
