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
    """Where counting runs. Yields the shards' results in lists, in any order: each list whole in itself (the
    counts of its shards' documents are in its results, and in no other list's), for a checkpoint to save as
    one; each document's counts are in exactly one result (its shard's own `counts`, or a result's `pooled`
    counts where shards are counted in batches together)."""

    def count(
        self, job: CountJob, shards: Sequence[Shard], progress: ScanProgress | None
    ) -> Iterator[list[ShardResult]]: ...


class Merged:
    """The sum of the shards' counts, each shard's stats kept for listing in shard order, and the engines
    that counted them."""

    def __init__(self, vocab_size: int):
        self.counts = TokenCounts.zeros(vocab_size)
        self._results: dict[int, tuple[int, SkipTally, list[Skipped]]] = {}
        self._engines: set[str] = set()
        self._engine_notes: dict[str, None] = {}  # in the order met

    def add(self, result: ShardResult) -> None:
        for counts in (result.counts, result.pooled):
            if counts is not None:
                self.counts += counts
        self._results[result.index] = (result.documents, result.skips, result.skip_examples)
        if result.engine:
            self._engines.add(result.engine)
        if result.engine_note:
            self._engine_notes[result.engine_note] = None

    @property
    def engine(self) -> str | None:
        """The engines that counted, as a profile records them (None: none said, as for checkpointed shards of
        an earlier version). The most telling wins: an accelerator "checked against" the reference (which
        counted the documents it was checked on), else the reference alone, else the reference "cross-checked"
        by an accelerator that agreed on all of it."""
        for kind in ("checked against", None, "cross-checked"):
            names = {n for n in self._engines if (kind in n if kind else "checked" not in n)}
            if names:
                return " + ".join(sorted(names))
        return None

    @property
    def engine_notes(self) -> list[str]:
        """Each disagreement of an accelerator with the reference, once."""
        return list(self._engine_notes)

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
                progress.counted(
                    result.documents, sum(c.tokens for c in (result.counts, result.pooled) if c is not None)
                )
                progress.file_done(shard.source)
    todo = [shard for shard in shards if shard.index not in done]
    by_index = {shard.index: shard for shard in todo}
    results = executor.count(job, todo, progress) if todo else iter(())
    try:
        for together in results:
            for result in together:
                if job.strict and result.skip_examples:
                    raise strict_error(result.skip_examples[0])
            if checkpoint and not any(result.failed for result in together):
                checkpoint.save(together)
            for result in together:
                merged.add(result)
                if progress:
                    progress.file_done(by_index[result.index].source)
    finally:
        getattr(results, "close", lambda: None)()  # stop workers and reader threads at once on an error
    return merged
