"""The local executor: counting on this machine, the default."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vocabrisk.counting.executors.shards import ATTEMPTS, ExecutorError, Shard, ShardResult, Unit, units
from vocabrisk.counting.executors.work import CountJob, count_pooled

if TYPE_CHECKING:
    from vocabrisk.counting.executors.progress import ScanProgress


@dataclass(frozen=True)
class LocalExecutor:
    """One worker (the default) counts in this process: a reader thread feeds the tokenizer,
    which spreads each batch over its own threads, batches running across files (across all of them where
    the job pools shards, else across each unit's). More workers are processes, each counting whole units
    with a share of the cores; a worker that dies is replaced and its unit counted again, split into its
    shards, each up to `attempts` times."""

    workers: int = 1
    attempts: int = ATTEMPTS

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ExecutorError(f"{self.workers} workers cannot count anything", hint="use --workers 1 or more")

    def count(
        self, job: CountJob, shards: Sequence[Shard], progress: ScanProgress | None
    ) -> Iterator[list[ShardResult]]:
        grouped = units(shards)
        workers = min(self.workers, len(grouped))  # one unit: this process counts it, in batches across its files
        if workers <= 1:
            job.counter().begin_scan()  # an accelerator is checked on this corpus's first documents
            return _in_process(job, shards, grouped, progress)
        if any(shard.source.path == "-" for shard in shards):
            raise ExecutorError(
                "standard input can only be counted in this process", hint="drop --workers, or save the input to a file"
            )
        from vocabrisk.counting.executors.pool import count_in_processes  # multiprocessing: loaded only for workers

        return count_in_processes(job, grouped, workers, self.attempts, progress)


def _in_process(
    job: CountJob, shards: Sequence[Shard], grouped: list[Unit], progress: ScanProgress | None
) -> Iterator[list[ShardResult]]:
    """Each shard's result as it ends, in batches across all of them; or, where each unit is saved whole, each
    of the units' results, in batches across its own shards."""
    on_bytes = progress.advance if progress else None
    on_batch = (lambda counts: progress.counted(counts.documents, counts.tokens)) if progress else None
    if job.pool_shards:
        for result in count_pooled(shards, job, on_bytes, on_batch):
            yield [result]
        return
    for unit in grouped:
        yield list(count_pooled(unit, job, on_bytes, on_batch))
