"""The unit of work, the same code on every executor: shards in, one `ShardResult` per shard out.

Executors only decide where this runs: in the calling process, in local worker processes, or
in Ray tasks on other machines. What a worker needs is one `CountJob`, sent once.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from vocabrisk.corpus import Document, ReadOptions, Skipped
from vocabrisk.corpus.skips import MAX_SKIP_EXAMPLES, SkipTally
from vocabrisk.counting import SpecialTokenPolicy, TokenCounter, TokenCounts
from vocabrisk.counting.counter import UnreadableText
from vocabrisk.counting.counts import utf8_size
from vocabrisk.counting.executors.pipeline import Gathered, Pieces, in_background, pooled_batches
from vocabrisk.counting.executors.shards import Shard, ShardResult, Unit, UserFailure, strict_error
from vocabrisk.counting.pieces import CannotCount, LongDocument
from vocabrisk.errors import VocabriskError
from vocabrisk.model.tokenizer import give_back_memory, release_tokenizers
from vocabrisk.model.vocabulary import read_tokenizer_file
from vocabrisk.storage.outputs import write_atomic

_COUNTERS: dict[tuple, TokenCounter] = {}  # one tokenizer per process and job, however many shards


@dataclass(frozen=True)
class CountJob:
    """Everything needed to count any shard of one scan.

    The tokenizer travels as the text of its tokenizer.json, so that workers on other
    machines need no shared disk and no access to the model's hub or cache.
    """

    tokenizer_json: bytes  # the file's content
    tokenizer_digest: str  # sha256 of tokenizer_json: names the tokenizer's file and cache entry
    vocab_size: int
    policy: SpecialTokenPolicy
    eos_id: int | None
    read_options: ReadOptions
    strict: bool = False
    tokenizer_path: str | None = None  # where the file is on the machine that made the job
    engine: str = "tokenizers"  # what encodes: `vocabrisk.counting.engines` (each worker checks an accelerator)
    accelerate_after: int = 0  # with `auto`: characters of text counted before an accelerator is loaded
    # Whether this process may count all shards in batches across their boundaries (`count_pooled`), or only
    # those of each unit (`shards.units`), which a checkpoint saves whole
    pool_shards: bool = False

    @classmethod
    def for_tokenizer(cls, path: Path | str, **fields) -> CountJob:
        content, digest = read_tokenizer_file(path)
        return cls(content, digest, **fields, tokenizer_path=str(path))

    def counter(self) -> TokenCounter:
        """This process's counter for the job's tokenizer, loaded once."""
        key = (self.tokenizer_digest, self.vocab_size, self.policy, self.eos_id, self.engine, self.accelerate_after)
        if key not in _COUNTERS:
            _COUNTERS[key] = TokenCounter(self._tokenizer_file(), *key[1:])
        return _COUNTERS[key]

    def _tokenizer_file(self) -> Path:
        """The job's tokenizer file: where it was found, if it is there with the same content (the
        process that made the job has read it already, and may have loaded it), else a copy."""
        if self.tokenizer_path is not None:
            with contextlib.suppress(OSError):
                if read_tokenizer_file(self.tokenizer_path)[1] == self.tokenizer_digest:
                    return Path(self.tokenizer_path)
        return _materialise(self.tokenizer_json, self.tokenizer_digest)


def release_counters() -> None:
    """Release this process's counters and their tokenizers, and give the memory back to the system, for a
    command that has counted all it will: the summary and advice that follow then run without them. The two
    engines beside transformers hold ~220 MB for a 150k vocabulary, which had a scan end at 410-420 MB; a later
    count loads them again."""
    _COUNTERS.clear()
    release_tokenizers()  # freed here rather than at exit: no cost but glibc's trim (10-20 ms)
    give_back_memory()


def _materialise(content: bytes, digest: str) -> Path:
    """The tokenizer as a file (tokenizers loads from files), named by its content so that
    processes sharing a machine share it and a half-written one is never used."""
    path = Path(tempfile.gettempdir()) / f"vocabrisk-{os.getuid()}" / f"tokenizer-{digest[:32]}.json"
    if not path.exists():
        write_atomic(path, content, "tokenizer")
    return path


def count_pooled(
    shards: Sequence[Shard],
    job: CountJob,
    on_bytes: Callable[[int], None] | None = None,
    on_batch: Callable[[TokenCounts], None] | None = None,
) -> Iterator[ShardResult]:
    """Count `shards` in order, reading ahead in a background thread, with whole documents gathered into batches
    across the shards' boundaries (`pooled_batches`): a folder of small files costs as few `encode_batch` calls
    as one large file, and no vector of the vocabulary's size per file. Yields each shard's result as soon as it
    is read to its end.

    Each shard's documents and skips are its own; its tokens are not counted apart: a result's `pooled`
    counts are those of the batches counted since the result before it. `on_bytes(n)` reports raw bytes read
    (from the reader thread), `on_batch(counts)` each counted batch. A strict job raises InputError at the
    first skipped record.
    """
    counter = job.counter()
    tallies: dict[int, PooledTally] = {}  # the shards begun and not yet ended
    pending: TokenCounts | None = None

    def tally(index: int) -> PooledTally:
        if index not in tallies:
            tallies[index] = PooledTally()
        return tallies[index]

    for item in in_background(pooled_batches(shards, job.read_options, on_bytes)):
        if isinstance(item, Shard):
            result = (tallies.pop(item.index, None) or PooledTally()).result(item.index)
            result.pooled, pending = pending, None
            yield _with_engine(result, counter)
            continue
        if isinstance(item, Gathered):
            counts, unreadable = _count_readable(counter, item.documents)
            for index, skip in unreadable.items():
                if job.strict:
                    raise strict_error(skip)
                tally(item.shards[index]).skip(skip)
            for shard, documents in itertools.groupby(i for n, i in enumerate(item.shards) if n not in unreadable):
                tally(shard).documents += sum(1 for _ in documents)
        else:
            counts = tally(item[0]).take(item[1], counter, job.strict)
        if counts is None:
            continue
        if pending is None:
            pending = counts  # a batch's own counts (bincount's array), not shared: added into from now on
        else:
            pending += counts
        if on_batch:
            on_batch(counts)


def _with_engine(result: ShardResult, counter: TokenCounter) -> ShardResult:
    result.engine, result.engine_note = counter.engine_name, counter.engine_note
    return result


def _count_readable(counter: TokenCounter, documents: list[Document]) -> tuple[TokenCounts, dict[int, Skipped]]:
    """The counts of a batch, and a Skipped for each document holding text the model cannot read, by its
    index in the batch (the rest of such a batch is encoded again)."""
    texts = [d.text for d in documents]
    try:
        return counter.count(texts), {}
    except UnreadableText as exc:
        skips = {
            i: Skipped(documents[i].source, documents[i].locator, reason, utf8_size(documents[i].text))
            for i, reason in exc.reasons.items()
        }
        return counter.count([t for i, t in enumerate(texts) if i not in exc.reasons]), skips


def count_in_worker(
    job: CountJob,
    unit: Unit,
    on_bytes: Callable[[int], None] | None = None,
    on_batch: Callable[[TokenCounts], None] | None = None,
) -> list[ShardResult] | UserFailure:
    """Count one unit away from the caller (`count_pooled`): a user error comes back as a value, anything
    else is raised, for the executor to retry."""
    try:
        return list(count_pooled(unit, job, on_bytes, on_batch))
    except VocabriskError as error:
        return UserFailure.of(error)


THREAD_VARIABLES = ("RAYON_NUM_THREADS", "FASTOKENS_BPE_THREADS")  # tokenizers' thread pool; fastokens' own


def limit_threads(threads: int) -> None:
    """Give the engines of this worker process `threads` threads (unless the user chose),
    so that workers sharing a machine do not each start one thread per core.

    Must run before the process's first encoding, when the thread pools are created.
    """
    for variable in THREAD_VARIABLES:
        os.environ.setdefault(variable, str(max(1, threads)))


class Tally:
    """The counts and skips of the source being read, taken a batch at a time (`document_batches`).

    The counts of a long document's pieces wait in `pending` until its last piece: a document
    cut short by a skip (invalid UTF-8 half-way through a file) is then dropped whole, as a
    short one is.
    """

    def __init__(self, vocab_size: int):
        self.counts = TokenCounts.zeros(vocab_size)
        self._start()

    def _start(self) -> None:
        self.documents = 0
        self.skips = SkipTally()
        self.examples: list[Skipped] = []
        self.document: LongDocument | None = None  # the long document being read, if any
        self.pending: TokenCounts | None = None

    def take(self, item: list[Document] | Pieces | Skipped, counter: TokenCounter, strict: bool) -> TokenCounts | None:
        """Count a batch, or record a skip (InputError when STRICT); the counts it made final, if any."""
        if isinstance(item, Skipped):
            if strict:
                raise strict_error(item)
            self.skip(item)
            return None
        if isinstance(item, Pieces):
            counts = self.pieces(item, counter)
            if isinstance(counts, Skipped):
                if strict:
                    raise strict_error(counts)
                self.skip(counts)
                return None
            return counts
        counts, unreadable = _count_readable(counter, item)
        for skip in unreadable.values():
            if strict:
                raise strict_error(skip)
            self.skip(skip)
        self._add(counts)
        return counts

    def _add(self, counts: TokenCounts) -> None:
        self.documents += counts.documents
        self.counts += counts

    def pieces(self, item: Pieces, counter: TokenCounter) -> TokenCounts | Skipped | None:
        """Take pieces of a long document; its counts once they are final, or a Skipped."""
        if item.first_part == 0:
            self.document, self.pending = counter.long_document(), TokenCounts.zeros(counter.vocab_size)
        if self.document is None:  # given up on: the rest of it is passed over, and counts as skipped
            self.skips.bytes += sum(map(utf8_size, item.texts))
            return None
        try:
            self.pending += self.document.add(item.texts, item.first_part, item.cuts)
            if not item.last:
                return None
            done = self.pending + self.document.finish()
        except CannotCount as exc:  # too long to hold, or text the model cannot read
            size = self.pending.text_bytes + sum(map(utf8_size, item.texts))
            self.document = self.pending = None
            return Skipped(item.source, item.locator, str(exc), size)
        self.document = self.pending = None
        self._add(done)
        return done

    def skip(self, item: Skipped) -> None:
        self.document = self.pending = None  # a document cut short is dropped with all its pieces
        self.skips.add(item)
        if len(self.examples) < MAX_SKIP_EXAMPLES:
            self.examples.append(item)

    def result(self, index: int) -> ShardResult:
        return ShardResult(index, self.counts, self.skips, self.examples)


class PooledTally(Tally):
    """A source's documents and skips, as a `Tally` keeps them, with no counts of its own: `take` hands
    the counts back, to be pooled with other sources' (`count_pooled`)."""

    def __init__(self) -> None:
        self._start()

    def _add(self, counts: TokenCounts) -> None:
        self.documents += counts.documents

    def result(self, index: int) -> ShardResult:
        return ShardResult(index, None, self.skips, self.examples, documents=self.documents)
