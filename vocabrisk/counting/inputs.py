"""Count a run's inputs with a model's tokenizer: discover them, let an executor count them, merge.

Discovery turns the inputs into shards (one per source); an executor counts them where it
runs (`vocabrisk.counting.executors`: this process by default, local worker processes, or a Ray
cluster); their counts merge by addition, so they are the same whatever the executor, the
number of workers or the order of shards. With a checkpoint folder each shard's counts are
saved as they arrive, and a killed count resumes where it stopped. A scan counts its corpus
here, and `vocabrisk.prior.choose` its reference.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from vocabrisk._version import __version__
from vocabrisk.corpus import ReadOptions, Skipped, Source, discover
from vocabrisk.corpus.memory import MemorySource, is_data, memory_source
from vocabrisk.corpus.skips import SkipTally
from vocabrisk.counting import SpecialTokenPolicy
from vocabrisk.counting.engines import check_engine, engine_for
from vocabrisk.counting.executors import (
    Checkpoint,
    CountJob,
    Executor,
    ExecutorError,
    LocalExecutor,
    Merged,
    Shard,
    count_corpus,
)
from vocabrisk.counting.executors.progress import ScanProgress
from vocabrisk.counting.executors.shards import strict_error
from vocabrisk.errors import InputError, ModelError
from vocabrisk.model.loaded import LoadedModel
from vocabrisk.model.tokenizer import tokenizers_version


@dataclass(frozen=True)
class Counted:
    """The merged counts of some inputs, their sources in discovery order, and what was skipped."""

    merged: Merged
    sources: list[Source]
    shards: list[Shard]
    skips: SkipTally
    skipped: list[Skipped]  # examples: discovery's, then each shard's first, in discovery order

    def source_stats(self) -> list[dict]:
        """One entry per source (`source_entry`), in discovery order."""
        return [source_entry(s, *self.merged.stats(sh)) for sh, s in zip(self.shards, self.sources, strict=True)]


def source_entry(source: Source, documents: int, skips: SkipTally) -> dict:
    """A profile's entry for one source: where and what it is, and how much of it was counted or skipped."""
    return {
        "path": source.path,
        "format": source.format,
        "compression": source.compression,
        "size": source.size,
        "documents": documents,
        "skipped": skips.total,
        "skipped_bytes": skips.bytes,
    }


def count_inputs(
    inputs: Sequence[str] | object,
    loaded: LoadedModel,
    *,
    read_options: ReadOptions,
    policy: SpecialTokenPolicy,
    executor: Executor,
    strict: bool = False,
    progress: ScanProgress | None = None,
    checkpoint: Path | str | None = None,
    resume: bool = False,
    engine: str = "tokenizers",
) -> Counted:
    """Every document of `inputs` (as `vocabrisk.scan` takes them) counted with the ENGINE it names
    (`vocabrisk.counting.engines`); an error if there is none."""
    paths, in_memory = split_inputs(inputs)
    job = count_job(loaded, policy, read_options, strict)
    check_engine(engine, str(loaded.files.tokenizer_json))
    if resume and checkpoint is None:
        raise InputError("--resume continues from a checkpoint folder", hint="name it with --checkpoint DIR")
    sources, skipped = discover(paths, read_options) if paths or not in_memory else ([], [])
    if in_memory:
        _check_in_process(executor, checkpoint)
        sources += in_memory
    if strict and skipped:
        raise strict_error(skipped[0])
    shards = [Shard(index, source) for index, source in enumerate(sources)]
    saved = None
    if checkpoint is not None:
        identity = _identity(loaded, policy, read_options, sources)
        saved = Checkpoint.open(checkpoint, identity, shards, loaded.vocab.size, resume)
    sizes = [s.size for s in sources]
    known = None if None in sizes else sum(sizes)
    chosen, after = engine_for(engine, known, any(s.compression for s in sources))
    job = replace(job, engine=chosen, accelerate_after=after, pool_shards=saved is None)
    if progress:
        progress.start(known, len(sources))
    merged = count_corpus(job, shards, executor, saved, progress)

    skips = SkipTally.of(skipped) + merged.skips
    skipped += merged.skip_examples()
    if merged.counts.documents == 0:
        raise InputError(
            f"no documents to count in {', '.join(paths + [s.path for s in in_memory])}"
            + (f" ({skips.text} skipped; the first: {skipped[0].text})" if skipped else ""),
            hint="the reason of the first skip says what to fix"
            if skipped
            else "the inputs hold no text: check the paths, --text-field and --input-format",
        )
    return Counted(merged, sources, shards, skips, skipped)


def count_job(
    loaded: LoadedModel,
    policy: SpecialTokenPolicy,
    read_options: ReadOptions,
    strict: bool,
) -> CountJob:
    """What every worker needs to count with LOADED's tokenizer under POLICY; an error if POLICY asks for
    an EOS the model does not define."""
    if policy.append_eos and loaded.eos_id is None:
        raise ModelError(
            f"{loaded.files.name}: no EOS token is defined (tokenizer_config.json eos_token or config.json)",
            hint="drop --eos, or add eos_token to tokenizer_config.json",
        )
    return CountJob.for_tokenizer(
        loaded.files.tokenizer_json,
        vocab_size=loaded.vocab.size,
        policy=policy,
        eos_id=loaded.eos_id,
        read_options=read_options,
        strict=strict,
    )


def split_inputs(inputs) -> tuple[list[str], list[MemorySource]]:
    """Paths (as strings) and in-memory corpora, each in the order given."""
    if not is_data(inputs) or not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    for each in inputs:
        if isinstance(each, (bytes, bytearray, memoryview)):
            raise InputError(
                f"cannot read a corpus from {type(each).__name__}",
                hint="pass a path as str (or pathlib.Path), or texts in memory as strings: decode the bytes"
                " and pass scan([[text]]) (in a list, each element is one input)",
            )
    paths = [os.fspath(each) for each in inputs if not is_data(each)]
    data = [each for each in inputs if is_data(each)]
    return paths, [memory_source(each, number) for number, each in enumerate(data, 1)]


def _check_in_process(executor: Executor, checkpoint: Path | str | None) -> None:
    if executor != LocalExecutor():
        raise ExecutorError(
            "corpora in memory are counted in this process, not by workers or on Ray",
            hint="use the default executor, or save the data to files (e.g. df.to_parquet) and scan those",
        )
    if checkpoint is not None:
        raise InputError(
            "corpora in memory cannot be checkpointed: a resumed scan could not tell they are the same",
            hint="drop checkpoint, or save the data to files and scan those",
        )


def _identity(loaded: LoadedModel, policy: SpecialTokenPolicy, options: ReadOptions, sources: list[Source]) -> dict:
    """What a checkpoint must match to be resumed: everything that decides the counts."""
    return {
        "tool_version": __version__,
        "engine": tokenizers_version(),
        "tokenizer": loaded.vocab.fingerprint,
        "policy": policy.to_dict(),
        "read_options": read_options_dict(options),
        "sources": [[s.path, s.format, s.compression, s.size] for s in sources],
    }


def read_options_dict(options: ReadOptions) -> dict:
    """The read options that decide the counts, as a profile and a checkpoint record them."""
    return {
        "text_fields": list(options.text_fields),
        "text_unit": options.text_unit,
        "input_format": options.input_format,
    }
