"""`scan`: corpus → exact token counts → profile. The spine every other command builds on.

Discovery turns the inputs into shards (one per source); an engine counts them where it
runs (`vocabrisk.engines`: this process by default, local worker processes, or a Ray
cluster); their counts merge by addition into the profile, which is therefore the same
whatever the engine, the number of workers or the order of shards. With a checkpoint folder
each shard's counts are saved as they arrive, and a killed scan resumes where it stopped.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from vocabrisk import engines
from vocabrisk._version import __version__
from vocabrisk.corpus import Document, ReadOptions, Skipped, Source, discover, read_source
from vocabrisk.corpus.memory import MemorySource, is_data, memory_source
from vocabrisk.counting import SpecialTokenPolicy
from vocabrisk.counting.encoder import tokenizers_version
from vocabrisk.engines.progress import ScanProgress
from vocabrisk.engines.shards import describe, strict_error
from vocabrisk.errors import InputError, ModelError, ProfileError
from vocabrisk.facts import VocabularyFacts, load_facts
from vocabrisk.model import HeadInfo, locate_head, resolve_model
from vocabrisk.model.head import is_encoder
from vocabrisk.model.resolve import ModelFiles
from vocabrisk.old_text import OLD_TEXT_TOKENS, OldText
from vocabrisk.prior import counts_prior, head_prior
from vocabrisk.profile import Profile
from vocabrisk.skips import MAX_SKIP_EXAMPLES, SkipTally

AUTO = "auto"
BUNDLED_REFERENCE = "reference.txt.gz"
PRIORS = (AUTO, "head", "tokenizer", "self-samples")


@dataclass(frozen=True)
class LoadedModel:
    """A resolved model: its files, vocabulary and (when it has weights) head location."""

    files: ModelFiles
    vocab: VocabularyFacts
    head: dict | None
    head_note: str | None
    # Priors made for this model in this process, so that `rank` reads the head or counts the
    # reference once, not once per candidate. Keyed by what decides them (`_base_usage`).
    priors: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def start_id(self) -> int:
        """The token a document starts from: BOS where the model has one, else EOS, else 0."""
        bos = self.files.tokenizer_config().get("bos_token")
        bos = bos.get("content") if isinstance(bos, dict) else bos
        found = self.vocab.id_of(bos) if isinstance(bos, str) else None
        return next((i for i in (found, self.eos_id) if i is not None), 0)

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


def load_model(name: str) -> LoadedModel:
    files = resolve_model(name)
    vocab = load_facts(files.tokenizer_json)
    head, note = locate_head(files)
    return LoadedModel(files, vocab, head.to_dict() if head else None, note)


def scan(
    inputs: Sequence[str] | object,
    model: str | LoadedModel = "demo",
    *,
    text_field: str | Sequence[str] | None = None,
    read_options: ReadOptions | None = None,
    policy: SpecialTokenPolicy | None = None,
    strict: bool = False,
    progress: ScanProgress | None = None,
    reference: Sequence[str] | Profile | str | None = AUTO,
    prior: str = AUTO,
    engine: engines.Engine | None = None,
    checkpoint: Path | str | None = None,
    resume: bool = False,
) -> Profile:
    """Count every token of the corpora in `inputs` with the model's tokenizer.

    `inputs` are paths, folders, globs, "-", fsspec URLs (s3://bucket/prefix/) or streamed
    Hugging Face datasets (`hf-dataset:NAME?split=train`), or corpora in memory: a
    `datasets.Dataset`/`IterableDataset`, a pandas or polars DataFrame or Series, a pyarrow
    Table, an iterable of strings (one document each) or of records (dicts). One such object
    may be passed alone; in a list, each element is one input, so a list of texts goes in as
    `[texts]` (a list of strings is a list of paths). `text_field` names the column or field
    (several are joined with "\\n"; it overrides `read_options.text_fields`). In-memory
    corpora are counted in this process, after the files.

    `reference` is text in the base model's own distribution (paths, or a saved profile):
    its counts become the prior of how much the base model relies on each token. By default
    a model's bundled reference sample is used where it has one (the demo model does), else
    a data-free prior from the head (or, without weights, the tokenizer); `None` forces the
    data-free prior. `prior` picks one source instead: "head", "tokenizer", or
    "self-samples" (text the model generates itself; needs torch, see `vocabrisk.self_samples`).

    `engine` is where counting runs (default: `LocalEngine()`, this process). With a
    `checkpoint` folder each shard's counts are saved as they are done; `resume` continues
    from those of an earlier, interrupted run of the same scan.

    >>> profile = scan(["sample_corpora/"], "demo")  # doctest: +SKIP
    >>> profile.total_tokens  # doctest: +SKIP
    """
    read_options = read_options or ReadOptions()
    if text_field is not None:
        read_options = replace(read_options, text_fields=text_field)
    policy = policy or SpecialTokenPolicy()
    engine = engine or engines.LocalEngine()
    paths, in_memory = _split_inputs(inputs)
    loaded = model if isinstance(model, LoadedModel) else load_model(model)
    eos_id = loaded.eos_id
    if policy.append_eos and eos_id is None:
        raise ModelError(
            f"{loaded.files.name}: no EOS token is defined (tokenizer_config.json eos_token or config.json)",
            hint="drop --eos, or add eos_token to tokenizer_config.json",
        )
    if resume and checkpoint is None:
        raise InputError("--resume continues from a checkpoint folder", hint="name it with --checkpoint DIR")
    sources, skipped = discover(paths, read_options) if paths or not in_memory else ([], [])
    if in_memory:
        _check_in_process(engine, checkpoint)
        sources += in_memory
    if strict and skipped:
        raise strict_error(skipped[0])
    shards = [engines.Shard(index, source) for index, source in enumerate(sources)]
    job = engines.CountJob.for_tokenizer(
        loaded.files.tokenizer_json,
        vocab_size=loaded.vocab.size,
        policy=policy,
        eos_id=eos_id,
        read_options=read_options,
        strict=strict,
    )
    saved = None
    if checkpoint is not None:
        identity = _identity(loaded, policy, read_options, sources)
        saved = engines.Checkpoint.open(checkpoint, identity, shards, loaded.vocab.size, resume)
    if progress:
        sizes = [s.size for s in sources]
        progress.start(None if None in sizes else sum(sizes), len(sources))
    merged = engines.count_corpus(job, shards, engine, saved, progress)

    skips = SkipTally.of(skipped) + merged.skips
    skipped += merged.skip_examples()
    if merged.counts.documents == 0:
        raise InputError(
            f"no documents to count in {', '.join(paths + [s.path for s in in_memory])}"
            + (f" ({skips.describe()} skipped; the first: {describe(skipped[0])})" if skipped else ""),
            hint="the reason of the first skip says what to fix"
            if skipped
            else "the inputs hold no text: check the paths, --text-field and --input-format",
        )
    vocab = loaded.vocab
    base, prior_source, reference_counts, old_text = _base_usage(loaded, reference, prior, policy, engine)
    return Profile.from_arrays(
        counts=merged.counts,
        tokens=list(vocab.readable),
        groups=vocab.groups,
        special=vocab.special_mask,
        prior=base,
        prior_source=prior_source,
        reference_counts=reference_counts,
        old_text=old_text,
        tokenizer={
            "name": loaded.files.name,
            "fingerprint": vocab.fingerprint,
            "model_type": vocab.model_type,
            "vocab_size": vocab.size,
            "truncation_in_file": vocab.truncation is not None,
            "engine": tokenizers_version(),
        },
        model={
            "name": loaded.files.name,
            "head": loaded.head,
            "head_note": loaded.head_note,
            "encoder": is_encoder(loaded.files.config),
            **loaded.head_mismatch(),
        },
        policy=policy.to_dict(),
        read_options={
            "text_fields": list(read_options.text_fields),
            "text_unit": read_options.text_unit,
            "input_format": read_options.input_format,
        },
        sources=[
            {"path": s.path, "format": s.format, "compression": s.compression, "size": s.size, **merged.stats(shard)}
            for shard, s in zip(shards, sources, strict=True)
        ],
        skips=skips,
        skipped_examples=[_skip_dict(s) for s in skipped[:MAX_SKIP_EXAMPLES]],
    )


def _split_inputs(inputs) -> tuple[list[str], list[MemorySource]]:
    """Paths (as strings) and in-memory corpora, each in the order given."""
    if not is_data(inputs) or not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    paths = [os.fspath(each) for each in inputs if not is_data(each)]
    data = [each for each in inputs if is_data(each)]
    return paths, [memory_source(each, number) for number, each in enumerate(data, 1)]


def _check_in_process(engine: engines.Engine, checkpoint: Path | str | None) -> None:
    if engine != engines.LocalEngine():
        raise engines.EngineError(
            "corpora in memory are counted in this process, not by workers or on Ray",
            hint="use the default engine, or save the data to files (e.g. df.to_parquet) and scan those",
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
        "read_options": {
            "text_fields": list(options.text_fields),
            "text_unit": options.text_unit,
            "input_format": options.input_format,
        },
        "sources": [[s.path, s.format, s.compression, s.size] for s in sources],
    }


def _base_usage(
    loaded: LoadedModel, reference, prior: str, policy: SpecialTokenPolicy, engine: engines.Engine
) -> tuple[np.ndarray, str, np.ndarray | None, OldText | None]:
    """The prior, where it came from, the counts behind it and a sample of its ids if it came from text.

    See `vocabrisk.prior`; the sample is the old text the forecast reads contexts from. Made once per
    model and choice in a process (a given `Profile` is used as it is).
    """
    if reference is not None and not isinstance(reference, str | list | tuple):  # a Profile, a DataFrame, ...
        return _make_base_usage(loaded, reference, prior, policy, engine)
    key = (prior, reference if reference is None or isinstance(reference, str) else tuple(reference), policy)
    if key not in loaded.priors:
        loaded.priors[key] = _make_base_usage(loaded, reference, prior, policy, engine)
    return loaded.priors[key]


def _make_base_usage(
    loaded: LoadedModel, reference, prior: str, policy: SpecialTokenPolicy, engine: engines.Engine
) -> tuple[np.ndarray, str, np.ndarray | None, OldText | None]:
    if prior not in PRIORS:
        raise ValueError(f"prior must be one of {', '.join(PRIORS)}, not {prior!r}")
    auto = isinstance(reference, str) and reference == AUTO  # `==` on a DataFrame compares elementwise
    if prior != AUTO and not (auto or reference is None):
        raise InputError("--reference and --prior both choose the prior", hint="give one of them")
    if prior == "self-samples":
        from vocabrisk.self_samples import SamplingPlan, self_sample_counts

        plan = SamplingPlan()
        counts = self_sample_counts(loaded.files, loaded.vocab.size, loaded.start_id, plan)
        return counts_prior(counts), f"self-generated: {plan.samples} samples of {plan.length} tokens", counts, None
    if prior == "head" and loaded.head is None:
        raise ModelError(f"{loaded.files.name}: no head to take a prior from ({loaded.head_note})")
    if prior in ("head", "tokenizer"):
        reference = None
    elif auto:
        reference = [str(loaded.bundled_reference)] if loaded.bundled_reference else None
    elif isinstance(reference, str):
        reference = [reference]
    if reference is None and loaded.head is not None and prior != "tokenizer":
        return *head_prior(HeadInfo(**loaded.head), loaded.vocab.size), None, None
    if reference is None:
        return loaded.vocab.tokenizer_prior, "tokenizer", None, None
    old_text = None
    if not isinstance(reference, Profile):
        old_text = read_old_text(reference, loaded, policy)
        reference = scan(reference, loaded, policy=policy, prior="tokenizer", engine=engine)
    if reference.tokenizer["fingerprint"] != loaded.vocab.fingerprint:
        raise ProfileError(
            "the reference profile was counted with a different tokenizer",
            hint="scan the reference with the same --model",
        )
    names = ", ".join(Path(s["path"]).name for s in reference.sources[:3])
    counts = reference.counts.counts
    old_text = old_text if old_text is not None else reference.old_text
    return counts_prior(counts), f"reference: {names} ({reference.total_tokens:,} tokens)", counts, old_text


def read_old_text(paths: Sequence[str], loaded: LoadedModel, policy: SpecialTokenPolicy) -> OldText | None:
    """Token ids of the reference text, document by document, up to OLD_TEXT_TOKENS.

    Documents are read in order until the budget is spent: the old text the forecast reads is
    a prefix of the reference, which for a shuffled or varied reference is a fair sample.
    """
    paths, in_memory = _split_inputs(paths)
    sources = (discover(paths, ReadOptions())[0] if paths else []) + in_memory
    job = engines.CountJob.for_tokenizer(
        loaded.files.tokenizer_json,
        vocab_size=loaded.vocab.size,
        policy=policy,
        eos_id=loaded.eos_id,
        read_options=ReadOptions(),
    )
    counter = job.counter()  # the process's counter for this tokenizer: no second load
    documents, tokens = [], 0
    for source in sources:
        for item in read_source(source, ReadOptions()):
            if not isinstance(item, Document):
                continue
            ids = counter.encode([item.text])[0]
            documents.append(ids[: OLD_TEXT_TOKENS - tokens])
            tokens += len(documents[-1])
            if tokens >= OLD_TEXT_TOKENS:
                return OldText.of(documents)
    return OldText.of(documents) if documents else None


def _skip_dict(skip: Skipped) -> dict:
    return {"source": skip.source, "locator": skip.locator, "reason": skip.reason, "bytes": skip.size}
