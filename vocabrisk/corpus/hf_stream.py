"""Hugging Face datasets read in streaming mode (`--hf-dataset NAME --split SPLIT`).

`datasets.load_dataset(NAME, split=SPLIT, streaming=True)` reads records as they arrive,
without downloading or converting the dataset first. NAME is a hub id (which needs network)
or a local folder of data files, read the same way. Each data file of the split is a shard
(`IterableDataset.shard`), so the executors spread a dataset's files over workers exactly as
they spread local files.

A stream is named as an input `hf-dataset:NAME?split=SPLIT` (plus `&config=CONFIG`);
discovery turns it into one source per data file, named with `&shard=I&shards=N` added.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from urllib.parse import parse_qs, urlencode

from vocabrisk.corpus.datatypes import Document, ReadOptions, Skipped, Source
from vocabrisk.corpus.fields import FieldError, missing_column, record_text
from vocabrisk.corpus.positions import ByteTally, Position
from vocabrisk.errors import InputError, require

PREFIX = "hf-dataset:"
FORMAT = "hf_stream"
_ACCESS_HINT = (
    "a hub dataset needs network access (and HF_TOKEN for a gated one); a local folder or files"
    " need no network. Check the name, --split and the config (NAME:CONFIG)"
)


@dataclass(frozen=True)
class StreamRef:
    """One split of a dataset, or one shard of it when `shards` is set."""

    name: str
    split: str
    config: str | None = None
    shard: int | None = None
    shards: int | None = None

    @classmethod
    def parse(cls, path: str) -> StreamRef:
        name, _, query = path.removeprefix(PREFIX).rpartition("?")
        params = {key: values[-1] for key, values in parse_qs(query).items()}
        if not name or "split" not in params:
            raise InputError(f"cannot read the dataset input {path!r}", hint=f"write it as {PREFIX}NAME?split=SPLIT")
        shard, shards = params.get("shard"), params.get("shards")
        return cls(
            name, params["split"], params.get("config"), int(shard) if shard else None, int(shards) if shards else None
        )

    @property
    def path(self) -> str:
        params = {"config": self.config, "split": self.split, "shard": self.shard, "shards": self.shards}
        return PREFIX + self.name + "?" + urlencode({key: value for key, value in params.items() if value is not None})


def input_for(name: str, split: str) -> str:
    """The input naming `split` of dataset `name` ("NAME" or "NAME:CONFIG")."""
    name, _, config = name.partition(":")
    return StreamRef(name, split, config or None).path


def is_stream(path: str) -> bool:
    return path.startswith(PREFIX)


def stream_sources(path: str) -> list[Source]:
    """One source per data file of the split (a single one where there is only one)."""
    ref = StreamRef.parse(path)
    count = _load(ref).n_shards
    refs = [replace(ref, shard=index, shards=count) for index in range(count)] if count > 1 else [ref]
    return [Source(each.path, FORMAT, None, None) for each in refs]


def read_hf_stream(
    source: Source, options: ReadOptions, position: Position, tally: ByteTally
) -> Iterator[Document | Skipped]:
    """Documents of one stream source, one per record ("row N" within the source)."""
    position.unit = "row"
    dataset = _load(StreamRef.parse(source.path))
    problem = missing_column(dataset.column_names, options.text_fields)
    if problem:
        yield Skipped(source.path, "file", problem, source.size)
        return
    for record in dataset:
        position.done += 1
        try:
            text = record_text(record, options.text_fields)
        except FieldError as exc:
            yield Skipped(source.path, f"row {position.done}", str(exc))
            continue
        if text:
            yield Document(text, source.path, f"row {position.done}")


def _load(ref: StreamRef):
    datasets = require("datasets", "remote", f"reading {ref.path}")
    try:
        dataset = datasets.load_dataset(ref.name, ref.config, split=ref.split, streaming=True)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot open dataset {ref.name} (split {ref.split}): {exc}", hint=_ACCESS_HINT) from exc
    if ref.shards is None:
        return dataset
    if dataset.n_shards != ref.shards:
        raise InputError(
            f"dataset {ref.name} now has {dataset.n_shards} data files, not the {ref.shards} it had when discovered",
            hint="the dataset changed during the scan; scan it again",
        )
    return dataset.shard(num_shards=ref.shards, index=ref.shard)
