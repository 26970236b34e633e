"""Drive a count: resume from checkpoints, let an executor count the rest, merge in a fixed order.

This part is the same whatever the executor: results arrive in any order and are added into
one count vector (integer addition, so the order cannot change it); the per-shard stats are
kept by shard index and listed in discovery order. That is why the profile does not depend
on the executor, the number of workers or the order in which shards finish.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from vocabrisk.corpus import Skipped
from vocabrisk.corpus.skips import SkipTally
from vocabrisk.counting import TokenCounts
from vocabrisk.counting.executors.checkpoint import Checkpoint
from vocabrisk.counting.executors.shards import Shard, ShardResult, strict_error
from vocabrisk.counting.executors.work import CountJob

if TYPE_CHECKING:
    from collections.abc import Iterator

    from vocabrisk.counting.executors.progress import ScanProgress


class Executor(Protocol):
    """Where counting runs. Yields one result per shard, in any order."""

    def count(self, job: CountJob, shards: Sequence[Shard], progress: ScanProgress | None) -> Iterator[ShardResult]: ...


class Merged:
    """The sum of the shards' counts, and each shard's stats kept for listing in shard order."""

    def __init__(self, vocab_size: int):
        self.counts = TokenCounts.zeros(vocab_size)
        self._results: dict[int, tuple[int, SkipTally, list[Skipped]]] = {}

    def add(self, result: ShardResult) -> None:
        self.counts += result.counts
        self._results[result.index] = (result.counts.documents, result.skips, result.skip_examples)

    def stats(self, shard: Shard) -> tuple[int, SkipTally]:
        """The documents counted in SHARD, and what of it was skipped."""
        documents, skips, _ = self._results[shard.index]
        return documents, skips

    @property
    def skips(self) -> SkipTally:
        return sum((skips for _, skips, _ in self._results.values()), SkipTally())

    def skip_examples(self) -> list[Skipped]:
        """Each shard's first skips, shards in discovery order: what one reader would meet first."""
        return [skip for index in sorted(self._results) for skip in self._results[index][2]]


def count_corpus(
    job: CountJob,
    shards: Sequence[Shard],
    executor: Executor,
    checkpoint: Checkpoint | None = None,
    progress: ScanProgress | None = None,
) -> Merged:
    """Every shard counted once: those checkpointed are loaded, the others counted by `executor`."""
    merged = Merged(job.vocab_size)
    done = checkpoint.done() if checkpoint else {}
    for shard in shards:
        if shard.index in done:
            result = done[shard.index]
            merged.add(result)
            if progress:
                progress.advance(shard.source.size or 0)
                progress.counted(result.counts.documents, result.counts.tokens)
                progress.file_done(shard.source)
    todo = [shard for shard in shards if shard.index not in done]
    by_index = {shard.index: shard for shard in todo}
    results = executor.count(job, todo, progress) if todo else iter(())
    try:
        for result in results:
            if job.strict and result.skip_examples:
                raise strict_error(result.skip_examples[0])
            if checkpoint and not result.failed:
                checkpoint.save(result)
            merged.add(result)
            if progress:
                progress.file_done(by_index[result.index].source)
    finally:
        getattr(results, "close", lambda: None)()  # stop workers and reader threads at once on an error
    return merged
