"""The prior of a run: how much the base model relies on each token, chosen once per model.

In order of preference (the formulas are in `vocabrisk.model.priors`):

1. Counts of a reference corpus in the base model's own distribution: `--reference`, else
   the sample a model ships with (the demo model has one).
2. With no data, the head; with no weights either, the tokenizer.

`--prior` picks one source instead, or text the model generates itself (`self-samples`,
`vocabrisk.prior.self_samples`). `choose_prior` keeps what it chose on the `LoadedModel`, so that
every corpus of a run (each candidate of a `rank`) shares one prior, and the reference is
counted, or the head read, once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vocabrisk.corpus import Document, ReadOptions, Source, read_source
from vocabrisk.counting import SpecialTokenPolicy
from vocabrisk.counting.counter import UnreadableText
from vocabrisk.counting.executors import CountJob, Executor, LocalExecutor
from vocabrisk.counting.inputs import count_inputs
from vocabrisk.errors import InputError, ModelError
from vocabrisk.model.loaded import LoadedModel
from vocabrisk.model.priors import AUTO, PRIORS, counts_prior, head_prior
from vocabrisk.prior.old_text import OLD_TEXT_TOKENS, OldText
from vocabrisk.prior.self_samples import SamplingPlan, self_sample_counts


@dataclass(frozen=True)
class Prior:
    """A prior, where it came from, and the text behind it when it came from text."""

    values: np.ndarray  # a probability per token id
    source: str  # for reports: "reference: a.txt (1,234 tokens)", "tokenizer", ...
    reference_counts: np.ndarray | None = None  # the counts it was made from
    old_text: OldText | None = None  # a sample of that text's ids: the old text the forecast reads contexts from

    @classmethod
    def of_counts(cls, counts: np.ndarray, paths: list[str], tokens: int, old_text: OldText | None) -> Prior:
        """The prior of a reference's counts, named after its first files."""
        names = ", ".join(Path(path).name for path in paths[:3])
        return cls(counts_prior(counts), f"reference: {names} ({tokens:,} tokens)", counts, old_text)


def choose_prior(
    loaded: LoadedModel,
    policy: SpecialTokenPolicy,
    reference: Sequence[str] | Prior | str | None = AUTO,
    prior: str = AUTO,
    executor: Executor | None = None,
    read_options: ReadOptions | None = None,
) -> Prior:
    """The prior `reference` and `prior` choose, as `vocabrisk.scan` documents them.

    A reference given as paths is read with `read_options`, as the corpus is (the model's
    bundled reference with the defaults). Made once per model and choice in a run; a reference
    given as a `Prior` (a saved profile's) or as data in memory is used as it is each time (it has been read
    already).
    """
    read_options = read_options or ReadOptions()
    if reference is not None and not isinstance(reference, str | list | tuple):  # a Profile, a DataFrame, ...
        return _make(loaded, policy, reference, prior, executor, read_options)
    key = (prior, reference if reference is None or isinstance(reference, str) else tuple(reference), policy)
    key += (read_options,) if key[1] not in (None, AUTO) else ()
    if key not in loaded.priors:
        loaded.priors[key] = _make(loaded, policy, reference, prior, executor, read_options)
    return loaded.priors[key]


def _make(loaded: LoadedModel, policy: SpecialTokenPolicy, reference, prior: str, executor, read_options) -> Prior:
    if prior not in PRIORS:
        raise ValueError(f"prior must be one of {', '.join(PRIORS)}, not {prior!r}")
    auto = isinstance(reference, str) and reference == AUTO  # `==` on a DataFrame compares elementwise
    if prior != AUTO and not (auto or reference is None):
        raise InputError("--reference and --prior both choose the prior", hint="give one of them")
    if prior == "self-samples":
        plan = SamplingPlan()
        counts = self_sample_counts(loaded.files, loaded.vocab.size, loaded.start_id, plan)
        return Prior(counts_prior(counts), f"self-generated: {plan.samples} samples of {plan.length} tokens", counts)
    if prior == "head" and loaded.head is None:
        raise ModelError(f"{loaded.files.name}: no head to take a prior from ({loaded.head_note})")
    if prior in ("head", "tokenizer"):
        reference = None
    elif auto:
        reference = [str(loaded.bundled_reference)] if loaded.bundled_reference else None
        read_options = ReadOptions()
    elif isinstance(reference, str):
        reference = [reference]
    if reference is None and loaded.head is not None and prior != "tokenizer":
        return Prior(*head_prior(loaded.head, loaded.vocab.size))
    if reference is None:
        return Prior(loaded.vocab.tokenizer_prior, "tokenizer")
    if isinstance(reference, Prior):  # made from a saved profile (`vocabrisk.profile.scan`)
        return reference
    return _from_text(loaded, policy, reference, executor or LocalExecutor(), read_options)


def _from_text(loaded: LoadedModel, policy: SpecialTokenPolicy, reference, executor: Executor, read_options) -> Prior:
    counted = count_inputs(reference, loaded, read_options=read_options, policy=policy, executor=executor)
    old_text = read_old_text(counted.sources, loaded, policy, read_options)
    counts = counted.merged.counts
    return Prior.of_counts(counts.counts, [s.path for s in counted.sources], counts.tokens, old_text)


def read_old_text(
    sources: Sequence[Source], loaded: LoadedModel, policy: SpecialTokenPolicy, read_options: ReadOptions
) -> OldText | None:
    """Token ids of the reference text, document by document, up to OLD_TEXT_TOKENS.

    Documents are read in order from the sources the reference's count found, until the budget
    is spent: the old text the forecast reads is a prefix of the reference, which for a
    shuffled or varied reference is a fair sample.
    """
    job = CountJob.for_tokenizer(
        loaded.files.tokenizer_json,
        vocab_size=loaded.vocab.size,
        policy=policy,
        eos_id=loaded.eos_id,
        read_options=read_options,
    )
    counter = job.counter()  # the process's counter for this tokenizer: no second load
    documents, tokens = [], 0
    for source in sources:
        for item in read_source(source, read_options):
            if not isinstance(item, Document):
                continue
            try:
                ids = counter.encode([item.text])[0]
            except UnreadableText:  # skipped, and reported, by the reference's count
                continue
            documents.append(ids[: OLD_TEXT_TOKENS - tokens])
            tokens += len(documents[-1])
            if tokens >= OLD_TEXT_TOKENS:
                return OldText.of(documents)
    return OldText.of(documents) if documents else None
