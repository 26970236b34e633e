"""`scan`: corpus → exact token counts → profile. The spine every other command builds on.

The corpus is counted by `vocabrisk.counting.inputs` (wherever the executor runs; a profile is the same
whatever the executor, the number of workers or the order of shards), the prior chosen by
`vocabrisk.prior.choose`; a scan puts the two together with what it knows of the model and inputs.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from vocabrisk.corpus import ReadOptions, Skipped
from vocabrisk.corpus.datatypes import field_names
from vocabrisk.corpus.skips import MAX_SKIP_EXAMPLES, SkipTally
from vocabrisk.counting import SpecialTokenPolicy, TokenCounts
from vocabrisk.counting.executors import Executor, LocalExecutor
from vocabrisk.counting.executors.progress import ScanProgress
from vocabrisk.counting.inputs import count_inputs, read_options_dict
from vocabrisk.errors import ModelError, ProfileError
from vocabrisk.model.loaded import LoadedModel, load_model
from vocabrisk.model.tokenizer import tokenizers_version
from vocabrisk.prior.choose import AUTO, Prior, choose_prior
from vocabrisk.profile.inputs import refuse_profiles
from vocabrisk.profile.profile import Profile


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
    executor: Executor | None = None,
    checkpoint: Path | str | None = None,
    resume: bool = False,
    engine: str = "auto",
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
    its counts become the prior of how much the base model relies on each token (paths are
    read with the corpus's `read_options`), and its first 20k tokens the old text the forecast
    reads. By default
    a model's bundled reference sample is used where it has one (the demo model does), else
    a data-free prior from the head (or, without weights, the tokenizer); `None` forces the
    data-free prior. `prior` picks one source instead: "head", "tokenizer", or
    "self-samples" (text the model generates itself; needs torch, see `vocabrisk.prior.self_samples`).

    `executor` is where counting runs (default: `LocalExecutor()`, this process). With a
    `checkpoint` folder each shard's counts are saved as they are done; `resume` continues
    from those of an earlier, interrupted run of the same scan. `engine` is what encodes:
    "tokenizers", "fastokens" or "auto" (`vocabrisk.counting.engines`); the counts are the same.

    >>> profile = scan(["sample_corpora/"], "demo")
    >>> profile.documents, profile.total_tokens
    (1459, 158749)
    """
    refuse_profiles(inputs)
    read_options = read_options or ReadOptions()
    if text_field is not None:
        read_options = replace(read_options, text_fields=field_names(text_field))
    policy = policy or SpecialTokenPolicy()
    executor = executor or LocalExecutor()
    loaded = loaded_model(model, counted_here=counts_here(executor))
    counted = count_inputs(
        inputs,
        loaded,
        read_options=read_options,
        policy=policy,
        executor=executor,
        strict=strict,
        progress=progress,
        checkpoint=checkpoint,
        resume=resume,
        engine=engine,
    )
    given = reference_prior(loaded, reference) if isinstance(reference, Profile) else reference
    chosen = choose_prior(loaded, policy, given, prior, executor, read_options)
    return assemble_profile(
        loaded,
        counted.merged.counts,
        chosen,
        policy=policy,
        read_options=read_options,
        sources=counted.source_stats(),
        skips=counted.skips,
        skipped=counted.skipped,
        engine=counted.merged.engine,
        engine_notes=counted.merged.engine_notes,
    )


def assemble_profile(
    loaded: LoadedModel,
    counts: TokenCounts,
    chosen: Prior,
    *,
    policy: SpecialTokenPolicy,
    read_options: ReadOptions,
    sources: list[dict],
    skips: SkipTally,
    skipped: Sequence[Skipped],
    engine: str | None = None,
    engine_notes: Sequence[str] = (),
) -> Profile:
    """The profile of COUNTS (a corpus counted with LOADED's tokenizer) under the CHOSEN prior.

    `sources` are the entries `Counted.source_stats` makes, in discovery order; `skipped` the skips in
    the order a reader meets them, of which the profile keeps the first few. `engine` names what counted
    (default: the installed tokenizers), `engine_notes` each disagreement of an accelerator with it, which
    every report shows (`Profile.notes`). Every profile is put together here, whoever counted it (`scan`, or
    the datatrove integration's merge).
    """
    vocab = loaded.vocab
    return Profile.from_arrays(
        counts=counts,
        tokens=vocab.readable,
        groups=vocab.groups,
        special=vocab.special_mask,
        prior=chosen.values,
        prior_source=chosen.source,
        reference_counts=chosen.reference_counts,
        old_text=chosen.old_text,
        tokenizer={
            "name": loaded.files.name,
            "fingerprint": vocab.fingerprint,
            "model_type": vocab.model_type,
            "vocab_size": vocab.size,
            "truncation_in_file": vocab.truncation is not None,
            "engine": engine or tokenizers_version(),
            **({"engine_note": " ".join(engine_notes)} if engine_notes else {}),
        },
        model=loaded.metadata(),
        policy=policy.to_dict(),
        read_options=read_options_dict(read_options),
        sources=sources,
        skips=skips,
        skipped_examples=[_skip_dict(s) for s in skipped[:MAX_SKIP_EXAMPLES]],
        notes=tuple(engine_notes),
    )


def loaded_model(model: object, counted_here: bool) -> LoadedModel:
    """MODEL as a `LoadedModel`: one already, else the name or path `load_model` resolves."""
    if isinstance(model, LoadedModel):
        return model
    if not isinstance(model, (str, os.PathLike)):
        raise ModelError(
            f"the model must be a name, a path or a LoadedModel, not {type(model).__name__}",
            hint="pass a name or path as str: 'demo', a model folder, a .gguf file or a hub id in the local cache,"
            " or a LoadedModel from vocabrisk.load_model",
        )
    return load_model(os.fspath(model), counted_here=counted_here)


def counts_here(executor: Executor) -> bool:
    """Whether `executor` counts in this process (with the tokenizer this process loads)."""
    return executor == LocalExecutor()


def _skip_dict(skip: Skipped) -> dict:
    return {"source": skip.source, "locator": skip.locator, "reason": skip.reason, "bytes": skip.size}


def reference_prior(loaded: LoadedModel, reference: Profile) -> Prior:
    """The prior of a saved profile given as the reference: its counts and old text, as they were saved."""
    if reference.tokenizer["fingerprint"] != loaded.vocab.fingerprint:
        raise ProfileError(
            "the reference profile was counted with a different tokenizer",
            hint="scan the reference with the same --model",
        )
    names = [s["path"] for s in reference.sources]
    return Prior.of_counts(reference.counts.counts, names, reference.total_tokens, reference.old_text)
