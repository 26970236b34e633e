"""The local executor: counting on this machine, the default."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vocabrisk.counting.executors.shards import ATTEMPTS, ExecutorError, Shard, ShardResult
from vocabrisk.counting.executors.work import CountJob, count_pooled, count_shards

if TYPE_CHECKING:
    from vocabrisk.counting.executors.progress import ScanProgress


@dataclass(frozen=True)
class LocalExecutor:
    """One worker (the default) counts in this process: a reader thread feeds the tokenizer,
    which spreads each batch over its own threads, batches running across files where the job
    pools shards. More workers are processes, each counting whole shards with a share of the
    cores; a worker that dies is replaced and its shard counted again, up to `attempts` times."""

    workers: int = 1
    attempts: int = ATTEMPTS

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ExecutorError(f"{self.workers} workers cannot count anything", hint="use --workers 1 or more")

    def count(self, job: CountJob, shards: Sequence[Shard], progress: ScanProgress | None) -> Iterator[ShardResult]:
        workers = min(self.workers, len(shards))
        if workers <= 1:
            on_bytes = progress.advance if progress else None
            on_batch = (lambda counts: progress.counted(counts.documents, counts.tokens)) if progress else None
            job.counter().begin_scan()  # an accelerator is checked on this corpus's first documents
            return (count_pooled if job.pool_shards else count_shards)(shards, job, on_bytes, on_batch)
        if any(shard.source.path == "-" for shard in shards):
            raise ExecutorError(
                "standard input can only be counted in this process", hint="drop --workers, or save the input to a file"
            )
        from vocabrisk.counting.executors.pool import count_in_processes  # multiprocessing: loaded only for workers

        return count_in_processes(job, shards, workers, self.attempts, progress)
