"""The Ray executor: shards counted as Ray tasks across a cluster's machines.

The driver (this process) discovers the shards, gathers small ones into units (`shards.units`), puts
the job (tokenizer text and options) into Ray's object store once, and keeps a bounded number of tasks
in flight; each task counts one whole unit and returns its counts. The driver merges results by addition
as they come, checkpoints them, and counts again the shards of a unit whose task failed (a dead worker or
node, or an unexpected error), each up to `attempts` times. Ray's own retries are off, so that every
failure is seen and a shard that keeps failing is reported.

Every node needs vocabrisk (with the `remote` extra for URLs) in the same version, and the
shards must be readable from every node: URLs, or paths on a shared file system.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vocabrisk.counting.executors.shards import (
    ATTEMPTS,
    ExecutorError,
    Shard,
    ShardQueue,
    ShardResult,
    Unit,
    UserFailure,
)
from vocabrisk.counting.executors.shards import units as units_of
from vocabrisk.counting.executors.work import CountJob, count_in_worker, limit_threads
from vocabrisk.errors import require

if TYPE_CHECKING:
    from vocabrisk.counting.executors.progress import ScanProgress

IN_FLIGHT_PER_CPU = 2  # tasks queued per CPU, so that no worker waits for the driver between units


@dataclass(frozen=True)
class RayExecutor:
    """Count on a Ray cluster: the one at `address` ("auto", "ray://head:10001"), the one this
    process is already connected to, or else a local one started for the scan."""

    address: str | None = None
    workers: int | None = None  # tasks in flight at once; default: every CPU of the cluster
    attempts: int = ATTEMPTS

    def count(
        self, job: CountJob, shards: Sequence[Shard], progress: ScanProgress | None
    ) -> Iterator[list[ShardResult]]:
        if any(shard.source.path == "-" for shard in shards):
            raise ExecutorError(
                "standard input cannot be counted on Ray", hint="save the input to a file, or use --executor local"
            )
        ray = self._connect()
        return self._run(ray, job, units_of(shards), progress)

    def _connect(self):
        ray = require("ray", "ray", "--executor ray")
        if not ray.is_initialized():
            local = {"include_dashboard": False} if self.address is None else {}
            try:
                ray.init(address=self.address, logging_level=logging.WARNING, **local)
            except (ConnectionError, ValueError, RuntimeError) as exc:
                raise ExecutorError(
                    f"cannot connect to the Ray cluster at {self.address or 'this machine'}: {exc}",
                    hint="check --address (e.g. auto, or ray://HEAD:10001) and that the cluster is up",
                ) from exc
        return ray

    def _run(self, ray, job: CountJob, units: Sequence[Unit], progress: ScanProgress | None):
        task = ray.remote(_count_task).options(num_cpus=1, max_retries=0)
        job_ref = ray.put(job)
        slots = self.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        queue, running = ShardQueue(units, job.vocab_size, self.attempts), {}
        try:
            while queue.todo or running:
                while queue.todo and len(running) < slots * IN_FLIGHT_PER_CPU:
                    unit = queue.todo.popleft()
                    running[task.remote(job_ref, unit)] = unit
                (ref,), _ = ray.wait(list(running), num_returns=1)
                unit = running.pop(ref)
                try:
                    outcome = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    if given_up := queue.failed(unit, _cause(exc)):
                        yield given_up
                    continue
                if isinstance(outcome, UserFailure):
                    raise outcome.error()
                if progress:
                    progress.advance(sum(shard.source.size or 0 for shard in unit))
                    counted = [c for r in outcome for c in (r.counts, r.pooled) if c is not None]
                    progress.counted(sum(r.documents for r in outcome), sum(c.tokens for c in counted))
                yield outcome
        finally:
            for ref in running:
                ray.cancel(ref, force=True)


def _count_task(job: CountJob, unit: Unit) -> list[ShardResult] | UserFailure:
    """One Ray task: one unit, on one CPU (the tokenizer gets one thread per task)."""
    limit_threads(1)
    return count_in_worker(job, unit)


def _cause(error: Exception) -> str:
    """The first line of a Ray error: what happened, without the remote traceback."""
    cause = getattr(error, "cause", None)
    if cause is not None:
        return f"{type(cause).__name__}: {cause}"
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
