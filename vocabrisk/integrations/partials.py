"""Partial profiles: what one task of a pipeline counted, saved, and the partials merged into one profile.

A pipeline executor (datatrove, locally, on Slurm or on Ray) runs a pipeline as many tasks, each over
part of the corpus. In each task, the documents that flow past are counted exactly as `vocabrisk
scan` counts the records of a file (`TaskCounts`: the same counter, special-token policy, pieces for
long documents and skip rules), per source file; the task saves one partial (`.npz`: the counts and,
per source, the documents and skips). `merge_partials` adds the partials of every task of one run and
assembles the profile as a scan does (`vocabrisk.profile.scan.assemble_profile`). Counts add, and sources
are listed in the order a scan of their folder lists them, so the profile does not depend on the
number of tasks or the order they ran in, and equals a scan of the same files.
"""

from __future__ import annotations

import io
import itertools
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from operator import attrgetter

from vocabrisk._version import __version__
from vocabrisk.corpus import Document, ReadOptions, Skipped, Source, discover
from vocabrisk.corpus.memory import values_document
from vocabrisk.corpus.read import in_pieces
from vocabrisk.corpus.skips import MAX_SKIP_EXAMPLES, SkipTally
from vocabrisk.counting import SpecialTokenPolicy, TokenCounts
from vocabrisk.counting.executors import CountJob, LocalExecutor
from vocabrisk.counting.executors.checkpoint import UNREADABLE, read_counts, write_counts
from vocabrisk.counting.executors.pipeline import document_batches
from vocabrisk.counting.executors.work import Tally
from vocabrisk.counting.inputs import read_options_dict, source_entry
from vocabrisk.errors import InputError, ModelError
from vocabrisk.model.loaded import LoadedModel
from vocabrisk.model.tokenizer import tokenizers_version
from vocabrisk.prior.choose import AUTO, choose_prior
from vocabrisk.profile.profile import Profile
from vocabrisk.profile.scan import assemble_profile, loaded_model, reference_prior

FORMAT = "vocabrisk partial profile"
FORMAT_VERSION = 2  # 2: each partial names the folder its task wrote it to
SUFFIX = ".npz"
NO_FILE = "<pipeline>"  # the source of documents whose reader named no file
NO_FILE_FORMAT = "pipeline"  # the format of a source vocabrisk cannot read itself
_FRESH_FOLDER = "write each run's partials to a folder of their own (or empty this one), and run it again"


def partial_name(rank: int) -> str:
    return f"{rank:05d}{SUFFIX}"


def identity(loaded: LoadedModel, model: str, policy: SpecialTokenPolicy, read_options: ReadOptions) -> dict:
    """What every partial of one run shares: what decides the counts, and the model as named."""
    return {
        "tool_version": __version__,
        "engine": tokenizers_version(),
        "model": model,
        "tokenizer": loaded.vocab.fingerprint,
        "vocab_size": loaded.vocab.size,
        "policy": policy.to_dict(),
        "read_options": read_options_dict(read_options),
    }


def document_items(text: object, source: str, locator: str) -> Iterator[Document | Skipped]:
    """One document of a pipeline as a scan reads a value of a corpus in memory: a document (in pieces
    when long), nothing for an empty text, or a Skipped saying why it cannot be counted."""
    return in_pieces(values_document((text,), ("text",), source, locator))


@dataclass
class _SourceTally:
    source: Source
    documents: int = 0
    skips: SkipTally = field(default_factory=SkipTally)
    examples: list[Skipped] = field(default_factory=list)  # the first few, in reading order

    def add(self, documents: int, skips: SkipTally, examples: list[Skipped]) -> None:
        self.documents += documents
        self.skips += skips
        self.examples += examples[: MAX_SKIP_EXAMPLES - len(self.examples)]

    def to_dict(self) -> dict:
        s = self.source
        return {
            "path": s.path,
            "format": s.format,
            "compression": s.compression,
            "size": s.size,
            "documents": self.documents,
            "skips": self.skips.to_dict(),
            "skip_examples": [[e.source, e.locator, e.reason, e.size] for e in self.examples],
        }

    @classmethod
    def from_dict(cls, data: dict) -> _SourceTally:
        source = Source(data["path"], data["format"], data["compression"], data["size"])
        examples = [Skipped(*example) for example in data["skip_examples"]]
        return cls(source, data["documents"], SkipTally.from_dict(data["skips"]), examples)


class TaskCounts:
    """What one task counted: the counts of every document it saw, and per source its documents and skips."""

    def __init__(self, job: CountJob, read_options: ReadOptions, counted_with: dict):
        self.job = job
        self.read_options = read_options
        self.counted_with = counted_with
        self.counts = TokenCounts.zeros(job.vocab_size)
        self.sources: dict[str, _SourceTally] = {}

    def count(self, items: Iterable[Document | Skipped]) -> Iterator[None]:
        """Count ITEMS (`document_items` of each document) a batch at a time, yielding after each batch,
        so that a step streaming the documents on holds no more than a batch of them.

        Batches never mix sources, so that each source's documents and skips are its own.
        """
        counter = self.job.counter()
        for path, items_of_source in itertools.groupby(items, key=attrgetter("source")):
            tally = Tally(self.job.vocab_size)
            for batch in document_batches(items_of_source):
                tally.take(batch, counter, strict=False)
                yield
            self.counts += tally.counts
            if path not in self.sources:
                self.sources[path] = _SourceTally(self._source_of(path))
            self.sources[path].add(tally.counts.documents, tally.skips, tally.examples)

    def _source_of(self, path: str) -> Source:
        """The source as a scan of the file would list it (format, compression, size); where vocabrisk
        cannot tell its format, or reach it, the format `pipeline` and no size. Only a description:
        whatever goes wrong finding it (a store's credentials, say) never fails the task's count."""
        if path != NO_FILE:
            try:
                (source,), _ = discover([path], self.read_options)
                return source
            except Exception:  # see above
                pass
        return Source(path, NO_FILE_FORMAT, None, None)

    def to_bytes(self, rank: int, world_size: int) -> bytes:
        """This task's partial, the file `merge_partials` reads."""
        meta = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "task": {"rank": rank, "world_size": world_size},
            "counted_with": self.counted_with,
            "sources": [tally.to_dict() for tally in self.sources.values()],
        }
        buffer = io.BytesIO()
        write_counts(buffer, self.counts, meta)
        return buffer.getvalue()


@dataclass
class _Partial:
    name: str
    counts: TokenCounts
    rank: int
    world_size: int
    counted_with: dict
    sources: list[_SourceTally]


def _read(name: str, data: bytes) -> _Partial:
    try:
        counts, meta = read_counts(io.BytesIO(data))
    except UNREADABLE as exc:
        raise InputError(
            f"{name}: not a whole partial profile ({type(exc).__name__}: {exc})",
            hint="run the task that writes it again (datatrove reruns the tasks it has not marked completed)",
        ) from exc
    if meta.get("format") != FORMAT:
        raise InputError(f"{name}: not a partial profile", hint="keep only the partials of one run in their folder")
    if meta.get("format_version") != FORMAT_VERSION:
        raise InputError(
            f"{name}: a partial profile of format {meta.get('format_version')}, not {FORMAT_VERSION}",
            hint="merge with the vocabrisk version that counted them, or count again with this one",
        )
    task = meta["task"]
    sources = [_SourceTally.from_dict(entry) for entry in meta["sources"]]
    return _Partial(name, counts, task["rank"], task["world_size"], meta["counted_with"], sources)


class _Run:
    """The partials of one run added up as they are read, one at a time (memory holds one count vector
    however many tasks there were), with what each task said of each source."""

    def __init__(self, where: str):
        self.where = where
        self.first: _Partial | None = None
        self.counts: TokenCounts | None = None
        self.names: dict[int, str] = {}  # rank -> the partial's name
        self.by_path: dict[str, list[tuple[int, _SourceTally]]] = {}

    def add(self, partial: _Partial) -> None:
        first = self.first = self.first or partial
        if partial.world_size != first.world_size:
            raise InputError(
                f"{self.where} holds the partials of runs with {first.world_size} and {partial.world_size} tasks"
                f" ({first.name}, {partial.name})",
                hint=_FRESH_FOLDER,
            )
        changed = [
            key for key in first.counted_with
            if key != "written_to" and partial.counted_with.get(key) != first.counted_with[key]
        ]  # fmt: skip
        if changed:
            raise InputError(
                f"{first.name} and {partial.name} were counted differently ({', '.join(changed)})", hint=_FRESH_FOLDER
            )
        here, there = first.counted_with.get("written_to"), partial.counted_with.get("written_to")
        if here != there:
            raise InputError(
                f"{partial.name} is another run's partial: its task wrote it to {there}, where {first.name}'s "
                f"wrote to {here}",
                hint=_FRESH_FOLDER,
            )
        if partial.rank in self.names:
            raise InputError(
                f"{self.names[partial.rank]} and {partial.name} are both task {partial.rank}'s partial",
                hint=_FRESH_FOLDER,
            )
        self.names[partial.rank] = partial.name
        if self.counts is None:
            self.counts = partial.counts
        else:
            self.counts += partial.counts
        for tally in partial.sources:
            self.by_path.setdefault(tally.source.path, []).append((partial.rank, tally))

    def complete(self) -> tuple[dict, TokenCounts]:
        """What the tasks counted with, and their counts added up; an error unless every task's partial is here."""
        if self.first is None or self.counts is None:
            raise InputError(f"no partial profiles in {self.where}", hint="run the counting pipeline first, then merge")
        world_size = self.first.world_size
        missing = sorted(set(range(world_size)) - set(self.names))
        if missing:
            names = ", ".join(partial_name(r) for r in missing[:5]) + (", ..." if len(missing) > 5 else "")
            raise InputError(
                f"{self.where}: {world_size - len(missing)} of {world_size} tasks' partials are there"
                f" (missing: {names})",
                hint="run the counting pipeline to its end (datatrove reruns only the tasks not completed), then merge",
            )
        return self.first.counted_with, self.counts

    def sources(self) -> list[_SourceTally]:
        """Each source once, in the order a scan lists them; one several tasks saw adds up their tallies
        in task order (its first skips are the first task's)."""
        merged = []
        for path in sorted(self.by_path, key=_scan_order):
            (_, total), *rest = sorted(self.by_path[path], key=lambda pair: pair[0])
            for _, tally in rest:
                total.add(tally.documents, tally.skips, tally.examples)
            merged.append(total)
        return merged


def _scan_order(path: str) -> list[str]:
    """Paths in the order a scan of their folder lists them: name by name, one folder level at a time
    (`a/x.txt` before `a.txt`, as the folder `a` sorts before the file `a.txt`)."""
    return path.split("/")


def merge_partials(
    partials: Iterable[tuple[str, bytes]],
    model: str | os.PathLike | LoadedModel | None = None,
    *,
    reference=AUTO,
    prior: str = AUTO,
    where: str = "the partials",
) -> Profile:
    """The profile of the documents every task of one run counted: PARTIALS are (name, content) of each
    task's partial, in any order. MODEL defaults to the model the tasks counted with; `reference` and
    `prior` choose the prior as `vocabrisk.scan` documents them."""
    run = _Run(where)
    for name, data in partials:
        run.add(_read(name, data))
    counted_with, counts = run.complete()
    if counts.documents == 0:
        raise InputError(
            f"no documents were counted in {where}",
            hint="check that the step sits after the reader in the pipeline, and the reader's text_key",
        )
    loaded = loaded_model(counted_with["model"] if model is None else model, counted_here=True)
    if loaded.vocab.fingerprint != counted_with["tokenizer"]:
        raise ModelError(
            f"{loaded.files.name} has another tokenizer than the partials were counted with ({counted_with['model']})",
            hint="merge with the model the pipeline counted with (the default)",
        )
    sources = run.sources()
    policy = SpecialTokenPolicy(**counted_with["policy"])
    read_options = ReadOptions(**counted_with["read_options"])
    given = reference_prior(loaded, reference) if isinstance(reference, Profile) else reference
    chosen = choose_prior(loaded, policy, given, prior, LocalExecutor(), read_options)
    return assemble_profile(
        loaded,
        counts,
        chosen,
        policy=policy,
        read_options=read_options,
        sources=[source_entry(s.source, s.documents, s.skips) for s in sources],
        skips=sum((s.skips for s in sources), SkipTally()),
        skipped=[example for s in sources for example in s.examples],
    )
