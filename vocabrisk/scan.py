"""`scan`: corpus → exact token counts → profile. The spine every other command builds on.

Reading runs in a background thread while the tokenizer encodes in the caller's thread
(`encode_batch` releases the GIL and spreads a batch over all cores), so file I/O,
decompression and parsing overlap with tokenization. Memory is bounded by the queue of
batches, not by the corpus.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from vocabrisk.corpus import Document, ReadOptions, Skipped, Source, discover, read_source
from vocabrisk.counting import SpecialTokenPolicy, TokenCounter, TokenCounts
from vocabrisk.errors import InputError, ModelError, ProfileError
from vocabrisk.groups import token_groups
from vocabrisk.model import HeadInfo, Vocabulary, load_vocabulary, locate_head, resolve_model
from vocabrisk.model.resolve import ModelFiles
from vocabrisk.prior import counts_prior, head_prior, tokenizer_prior
from vocabrisk.profile import MAX_SKIP_EXAMPLES, Profile

BATCH_BYTES = 1 << 20  # encode about 1 MiB of text per call: large enough to use every core
BATCH_DOCUMENTS = 4096
QUEUE_BATCHES = 4
AUTO = "auto"
BUNDLED_REFERENCE = "reference.txt.gz"


class ScanProgress(Protocol):
    """What a scan reports while it runs; the CLI draws it, the API may ignore it."""

    def start(self, total_bytes: int | None, total_files: int) -> None: ...
    def advance(self, raw_bytes: int) -> None: ...
    def counted(self, documents: int, tokens: int) -> None: ...
    def file_done(self, source: Source) -> None: ...


@dataclass(frozen=True)
class LoadedModel:
    """A resolved model: its files, vocabulary and (when it has weights) head location."""

    files: ModelFiles
    vocab: Vocabulary
    head: dict | None
    head_note: str | None

    def head_mismatch(self) -> dict:
        """Head rows no token maps to (padded vocabularies), and token ids with no head row."""
        if self.head is None:
            return {}
        rows, size = self.head["rows"], self.vocab.size
        return {"head_rows_without_token": max(rows - size, 0), "tokens_without_head_row": max(size - rows, 0)}

    @property
    def bundled_reference(self) -> Path | None:
        """A sample of the model's own pretraining distribution shipped with it (the demo model has one)."""
        path = self.files.folder / BUNDLED_REFERENCE
        return path if path.exists() else None

    @property
    def eos_id(self) -> int | None:
        eos = self.files.tokenizer_config().get("eos_token")
        if isinstance(eos, dict):
            eos = eos.get("content")
        if isinstance(eos, str):
            found = self.vocab.id_of(eos)
            if found is not None:
                return found
        config_eos = (self.files.config or {}).get("eos_token_id")
        return config_eos if isinstance(config_eos, int) else None


def load_model(name: str, *, allow_pickle: bool = False) -> LoadedModel:
    files = resolve_model(name)
    vocab = load_vocabulary(files.tokenizer_json)
    head, note = locate_head(files, allow_pickle=allow_pickle)
    return LoadedModel(files, vocab, head.to_dict() if head else None, note)


def scan(
    inputs: Sequence[str],
    model: str | LoadedModel = "demo",
    *,
    read_options: ReadOptions | None = None,
    policy: SpecialTokenPolicy | None = None,
    strict: bool = False,
    progress: ScanProgress | None = None,
    reference: Sequence[str] | Profile | str | None = AUTO,
) -> Profile:
    """Count every token of the corpora in `inputs` with the model's tokenizer.

    `reference` is text in the base model's own distribution (paths, or a saved profile):
    its counts become the prior of how much the base model relies on each token. By default
    a model's bundled reference sample is used where it has one (the demo model does), else
    a data-free prior from the head (or, without weights, the tokenizer); `None` forces the
    data-free prior.

    >>> profile = scan(["sample_corpora/"], "demo")  # doctest: +SKIP
    >>> profile.total_tokens  # doctest: +SKIP
    """
    read_options = read_options or ReadOptions()
    policy = policy or SpecialTokenPolicy()
    loaded = model if isinstance(model, LoadedModel) else load_model(model)
    eos_id = loaded.eos_id
    if policy.append_eos and eos_id is None:
        raise ModelError(
            f"{loaded.files.name}: no EOS token is defined (tokenizer_config.json eos_token or config.json)",
            hint="drop --eos, or add eos_token to tokenizer_config.json",
        )
    sources, skipped = discover(inputs, read_options)
    if strict and skipped:
        _fail_strict(skipped[0])
    counter = TokenCounter(loaded.files.tokenizer_json, loaded.vocab.size, policy, eos_id)
    if progress:
        sizes = [s.size for s in sources]
        progress.start(None if None in sizes else sum(sizes), len(sources))

    total = TokenCounts.zeros(loaded.vocab.size)
    per_source = {s.path: {"documents": 0, "skipped": 0} for s in sources}
    for item in _batches_in_background(sources, read_options, progress):
        if isinstance(item, Skipped):
            if strict:
                _fail_strict(item)
            skipped.append(item)
            if item.source in per_source:
                per_source[item.source]["skipped"] += 1
            continue
        if isinstance(item, Source):
            if progress:
                progress.file_done(item)
            continue
        source_path, texts = item
        counts = counter.count(texts)
        total += counts
        per_source[source_path]["documents"] += counts.documents
        if progress:
            progress.counted(counts.documents, counts.tokens)

    if total.documents == 0:
        raise InputError(
            f"no documents to count in {', '.join(inputs)}"
            + (f" ({len(skipped)} records or files skipped: {_describe(skipped[0])} ...)" if skipped else ""),
            hint="check the paths, --text-field and --input-format",
        )
    vocab = loaded.vocab
    prior, prior_source, reference_counts = _base_usage(loaded, reference, policy)
    special = np.zeros(vocab.size, dtype=bool)
    special[list(vocab.special_ids)] = True
    return Profile(
        counts=total,
        tokens=[vocab.readable(i) for i in range(vocab.size)],
        groups=token_groups(vocab),
        special=special,
        prior=prior,
        prior_source=prior_source,
        reference_counts=reference_counts,
        tokenizer={
            "name": loaded.files.name,
            "fingerprint": vocab.fingerprint,
            "model_type": vocab.model_type,
            "vocab_size": vocab.size,
            "truncation_in_file": vocab.truncation is not None,
            "engine": counter.engine,
        },
        model={"name": loaded.files.name, "head": loaded.head, "head_note": loaded.head_note, **loaded.head_mismatch()},
        policy=policy.to_dict(),
        read_options={
            "text_fields": list(read_options.text_fields),
            "text_unit": read_options.text_unit,
            "input_format": read_options.input_format,
        },
        sources=[
            {"path": s.path, "format": s.format, "compression": s.compression, "size": s.size, **per_source[s.path]}
            for s in sources
        ],
        skipped=len(skipped),
        skipped_examples=[_skip_dict(s) for s in skipped[:MAX_SKIP_EXAMPLES]],
    )


def _base_usage(
    loaded: LoadedModel, reference, policy: SpecialTokenPolicy
) -> tuple[np.ndarray, str, np.ndarray | None]:
    """The prior, where it came from, and the reference's own counts if it came from one."""
    if reference == AUTO:
        reference = [str(loaded.bundled_reference)] if loaded.bundled_reference else None
    elif isinstance(reference, str):
        reference = [reference]
    if reference is None and loaded.head is not None:
        return *head_prior(HeadInfo(**loaded.head), loaded.vocab.size), None
    if reference is None:
        return tokenizer_prior(loaded.vocab), "tokenizer", None
    if not isinstance(reference, Profile):
        reference = scan(reference, loaded, policy=policy, reference=None)
    if reference.tokenizer["fingerprint"] != loaded.vocab.fingerprint:
        raise ProfileError(
            "the reference profile was counted with a different tokenizer",
            hint="scan the reference with the same --model",
        )
    names = ", ".join(Path(s["path"]).name for s in reference.sources[:3])
    counts = reference.counts.counts
    return counts_prior(counts), f"reference: {names} ({reference.total_tokens:,} tokens)", counts


def _batches(sources: list[Source], options: ReadOptions, progress: ScanProgress | None) -> Iterator:
    """Yield (source path, texts) batches, Skipped records, and each Source once it is read."""
    on_bytes = progress.advance if progress else None
    for source in sources:
        texts: list[str] = []
        size = 0
        for item in read_source(source, options, on_bytes):
            if isinstance(item, Document):
                texts.append(item.text)
                size += len(item.text)
                if size >= BATCH_BYTES or len(texts) >= BATCH_DOCUMENTS:
                    yield source.path, texts
                    texts, size = [], 0
            else:
                yield item
        if texts:
            yield source.path, texts
        yield source


_DONE = object()


def _batches_in_background(sources: list[Source], options: ReadOptions, progress: ScanProgress | None) -> Iterator:
    """`_batches`, produced by a reader thread; its exceptions surface in the caller."""
    channel: queue.Queue = queue.Queue(maxsize=QUEUE_BATCHES)
    stop = threading.Event()

    def offer(item: object) -> bool:
        """Put an item unless the consumer has gone away; False once it has."""
        while not stop.is_set():
            try:
                channel.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in _batches(sources, options, progress):
                if not offer(item):
                    return
            offer(_DONE)
        except BaseException as exc:  # re-raised in the consuming thread
            offer(exc)

    reader = threading.Thread(target=produce, name="vocabrisk-reader", daemon=True)
    reader.start()
    try:
        while True:
            item = channel.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        reader.join(timeout=5)


def _describe(skip: Skipped) -> str:
    return f"{skip.source}, {skip.locator}: {skip.reason}"


def _skip_dict(skip: Skipped) -> dict:
    return {"source": skip.source, "locator": skip.locator, "reason": skip.reason}


def _fail_strict(skip: Skipped) -> None:
    raise InputError(f"{_describe(skip)}", hint="--strict fails on any skipped input; drop it to skip and report")
