"""What executors hand around: shards of a corpus, units of them, the result of counting one, and failures.

A shard is one source. Small ones are counted together in units (`units`): a worker encodes a unit in
batches across its files, sends back one vector of counts for all of them, and a checkpoint saves the unit
whole. A unit is counted whole or not at all, so partial counts never mix into a result; results merge by
addition, which makes the profile independent of where, in what order and in how many workers the units
were counted.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from vocabrisk.corpus import Skipped, Source
from vocabrisk.corpus.skips import SkipTally
from vocabrisk.counting import TokenCounts
from vocabrisk.errors import InputError, VocabriskError

ATTEMPTS = 3  # a shard whose worker dies or fails is counted at most this often
# Consecutive small sources are counted together up to about this many bytes: 1,082 files of 50 kB took 2.46 s
# in two worker processes one file at a time against 1.32 s in one process batching across them, and 7.4 s
# checkpointed (a file of counts per source). docs/PERFORMANCE.md, "Engines".
UNIT_BYTES = 8 << 20


class ExecutorError(VocabriskError):
    """A counting executor could not be started or reached (a missing extra, a cluster address)."""


@dataclass(frozen=True)
class Shard:
    """One source counted as a whole; `index` is its place in discovery order, its id."""

    index: int
    source: Source


Unit = tuple[Shard, ...]  # consecutive shards, counted together


def units(shards: Sequence[Shard], unit_bytes: int | None = None) -> list[Unit]:
    """SHARDS in order, consecutive ones gathered into units of at most about UNIT_BYTES; a shard of that size
    or more, or of unknown size (a stream), is a unit alone."""
    unit_bytes = UNIT_BYTES if unit_bytes is None else unit_bytes
    found: list[Unit] = []
    current: list[Shard] = []
    size = 0
    for shard in shards:
        known = shard.source.size
        if current and (known is None or known >= unit_bytes or size + known > unit_bytes):
            found.append(tuple(current))
            current, size = [], 0
        if known is None or known >= unit_bytes:
            found.append((shard,))
            continue
        current.append(shard)
        size += known
    if current:
        found.append(tuple(current))
    return found


@dataclass
class ShardResult:
    """The counts of one shard, its skipped records and the first examples of them.

    A shard counted in batches with other shards' documents (`vocabrisk.counting.executors.work.count_pooled`)
    has no counts of its own (`counts` is None): only its `documents` and skips are its own, and the counts of
    such batches come in the `pooled` counts of the first result after them, each batch's in exactly one.
    """

    index: int
    counts: TokenCounts | None
    skips: SkipTally = field(default_factory=SkipTally)
    skip_examples: list[Skipped] = field(default_factory=list)  # the first few, in reading order
    failed: bool = False  # no attempt finished: counts are empty and one Skipped says why
    documents: int = 0  # documents counted (its counts' own, where it has counts)
    pooled: TokenCounts | None = None  # counts of batches of this and earlier shards' documents, counted together
    engine: str = ""  # the engine that counted it (`vocabrisk.counting.engines`), where known
    engine_note: str | None = None  # why an accelerator asked for did not count: a disagreement

    def __post_init__(self) -> None:
        if self.counts is not None:
            self.documents = self.counts.documents


def failed_result(shard: Shard, vocab_size: int, attempts: int, cause: str) -> ShardResult:
    """A shard given up on: reported as a skipped source, never silently left out."""
    reason = (
        f"counting failed {attempts} times (last: {cause}); nothing from this input was counted;"
        " scan again to retry it (with --checkpoint and --resume, only the failed inputs are counted)"
    )
    skip = Skipped(shard.source.path, "file", reason, shard.source.size)
    return ShardResult(shard.index, TokenCounts.zeros(vocab_size), SkipTally.of([skip]), [skip], failed=True)


class ShardQueue:
    """The units still to count. A unit whose counting failed goes back to the front of the queue split into
    its shards, so that one bad file does not take its unit down with it, each shard until it has failed
    `attempts` times; then it is given up on, and reported."""

    def __init__(self, units: Iterable[Unit], vocab_size: int, attempts: int = ATTEMPTS):
        self.todo: deque[Unit] = deque(units)
        self.vocab_size = vocab_size
        self.attempts = attempts
        self._failures: Counter[int] = Counter()

    def failed(self, unit: Unit, cause: str) -> list[ShardResult]:
        """Record (and log) one more failure of each shard of `unit`: the results that report those given up
        on (none where all are queued again)."""
        import logging  # only a retried shard logs: a scan that needs none does not import logging

        paths = ", ".join(shard.source.path for shard in unit)
        logging.getLogger("vocabrisk").warning("counting %s failed: %s", paths, cause)
        given_up = []
        for shard in reversed(unit):
            self._failures[shard.index] += 1
            if self._failures[shard.index] < self.attempts:
                self.todo.appendleft((shard,))
            else:
                given_up.append(failed_result(shard, self.vocab_size, self.attempts, cause))
        return given_up[::-1]


@dataclass(frozen=True)
class UserFailure:
    """A VocabriskError raised in a worker, sent back as a value: pickling an exception keeps
    only its message, and the hint is what tells the user what to do."""

    kind: type[VocabriskError]
    message: str
    hint: str | None

    @classmethod
    def of(cls, error: VocabriskError) -> UserFailure:
        return cls(type(error), error.message, error.hint)

    def error(self) -> VocabriskError:
        return self.kind(self.message, hint=self.hint)


def strict_error(skip: Skipped) -> InputError:
    return InputError(skip.text, hint="--strict fails on any skipped input; drop it to skip and report")
