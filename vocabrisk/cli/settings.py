"""How a command reads and counts corpora, and where their prior comes from: one `ScanSettings`.

`scan`, `rank`, `gate` and `verify` take the same corpus flags (--model, --text-field, the
special-token flags, --reference, --prior, --executor, --engine); they become one ScanSettings, which
loads the model, starts the executor and counts the reference once per command, however many
corpora the command then counts. Whether an input is a saved profile or a corpus is decided
in `vocabrisk.profile.inputs`, the same way for every input.

The stages a method runs are imported in it: the CLI builds a ScanSettings for every command
that takes corpus flags, and `--help` or a gate on a saved profile should not load the
counting, prior and scanning code that only a count needs.
"""

from __future__ import annotations

import functools
import glob
import os
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from vocabrisk.corpus import ReadOptions
from vocabrisk.counting import SpecialTokenPolicy
from vocabrisk.counting.executors import Executor, executor_for
from vocabrisk.errors import InputError, UsageError
from vocabrisk.model.priors import AUTO

if TYPE_CHECKING:
    from vocabrisk.model.loaded import LoadedModel
    from vocabrisk.prior.choose import Prior
    from vocabrisk.profile.profile import Profile

DEFAULT_MODEL = "demo"


@dataclass(frozen=True)
class ScanSettings:
    """The choices every corpus of one command is counted under; the defaults are the CLI's."""

    model: str | None = None  # None: not stated, so DEFAULT_MODEL for a count, and a saved profile's own
    text_fields: tuple[str, ...] = ()  # none named: ReadOptions' default, the `text` field
    text_unit: str = "file"
    input_format: str | None = None
    special_tokens: bool = True
    eos: bool = False
    split_special_tokens: bool = False
    reference: tuple[str, ...] = ()  # none: the model's bundled sample if any, else `prior`
    prior: str = AUTO
    strict: bool = False
    executor: str = "local"
    workers: int | None = None
    address: str | None = None
    engine: str = "auto"  # what encodes: `vocabrisk.counting.engines`
    # Makes the context each count runs in, which yields the ScanProgress to report to (or None).
    progress: Callable[[], AbstractContextManager] = field(default=nullcontext, compare=False, repr=False)

    @property
    def read_options(self) -> ReadOptions:
        return ReadOptions(
            text_fields=tuple(self.text_fields) or ("text",), text_unit=self.text_unit, input_format=self.input_format
        )

    @property
    def policy(self) -> SpecialTokenPolicy:
        return SpecialTokenPolicy(
            add_special_tokens=self.special_tokens, append_eos=self.eos, split_special_tokens=self.split_special_tokens
        )

    @property
    def model_name(self) -> str:
        """The model a corpus is counted against: the one stated, else DEFAULT_MODEL."""
        return self.model or DEFAULT_MODEL

    @cached_property
    def loaded(self) -> LoadedModel:
        from vocabrisk.model.loaded import load_model
        from vocabrisk.profile.scan import counts_here

        return load_model(self.model_name, counted_here=counts_here(self.counting_executor))

    @property
    def model_is_loaded(self) -> bool:
        """Whether this command has loaded its model (to count): a gate of a saved profile never does."""
        return "loaded" in vars(self)

    @cached_property
    def counting_executor(self) -> Executor:
        return executor_for(self.executor, self.workers, self.address)

    @cached_property
    def prior_reference(self) -> Prior | list[str] | str:
        """What makes the prior: the --reference saved profile, or the --reference text (read with the corpus's
        options, once per command, its start kept as the forecast's old text, as the API does), or AUTO."""
        from vocabrisk.profile.inputs import saved_profile
        from vocabrisk.profile.profile import Profile
        from vocabrisk.profile.scan import reference_prior

        if not self.reference:
            return AUTO
        self._check_found(self.reference, "--reference")
        folder = saved_profile(self.reference)
        return reference_prior(self.loaded, Profile.load(folder)) if folder else list(self.reference)

    def ready(self) -> ScanSettings:
        """Load the model, start the executor and count the reference now, so a bad one fails before any corpus."""
        from vocabrisk.prior.choose import choose_prior

        loaded, reference = self.loaded, self.prior_reference
        choose_prior(loaded, self.policy, reference, self.prior, self.counting_executor, self.read_options)
        return self

    def scan(self, inputs: str | Sequence[str], checkpoint: str | None = None, resume: bool = False) -> Profile:
        """The profile of the corpus INPUTS name, against the model and the prior these settings choose."""
        return self._count(inputs, self.prior_reference, self.prior, checkpoint=checkpoint, resume=resume)

    def profile_of(self, inputs: Sequence[str], checkpoint: str | None = None, resume: bool = False) -> Profile:
        """The saved profile INPUTS name, as it was saved; else the corpus they name, counted (`scan`)."""
        from vocabrisk.profile.inputs import profile_or_corpus, saved_profile

        profile = profile_or_corpus(inputs, functools.partial(self.scan, checkpoint=checkpoint, resume=resume))
        folder = saved_profile(inputs)
        return self.check_model(profile, folder) if folder else profile

    def check_model(self, profile: Profile, name: str) -> Profile:
        """PROFILE (saved as NAME), refused where the model stated is not the one it was counted with: a saved
        profile is read as it was saved, and a report on it must not name another model."""
        counted = profile.model["name"]
        if self.model is None or _same_model(self.model, counted):
            return profile
        raise UsageError(
            f"{name}: this saved profile was counted against the model {counted!r}, not {self.model!r}; a saved "
            "profile is not rescanned, so --model cannot change it: drop --model (or the configuration's model), "
            f"or scan the corpus again with --model {self.model}",
            option="--model",
        )

    def counts_of(self, inputs: Sequence[str], option: str) -> Profile:
        """A --mix corpus: the saved profile INPUTS name, or the counts of a corpus with no prior of its own."""
        from vocabrisk.profile.inputs import profile_or_corpus

        self._check_found(inputs, option)
        return profile_or_corpus(inputs, functools.partial(self._count, reference=None, prior="tokenizer"))

    @staticmethod
    def _check_found(inputs: Sequence[str], option: str) -> None:
        for path in inputs:
            if "://" not in path and path != "-" and not glob.has_magic(path) and not os.path.exists(path):
                raise InputError(f"{option} {path}: not found", hint=f"check the path given to {option}")

    def old_text(self) -> list[str] | None:
        """--reference as the old text `verify` measures forgetting on (None: the model's own); it decides the prior."""
        from vocabrisk.profile.profile import is_profile

        if any(is_profile(path) for path in self.reference):
            raise InputError("verify measures forgetting on old text: --reference must be text, not a saved profile")
        if self.prior != AUTO:
            raise UsageError("verify predicts with the prior of its old text (--reference); drop --prior")
        return list(self.reference) or None

    def _count(self, inputs, reference, prior: str, checkpoint: Path | str | None = None, resume=False) -> Profile:
        from vocabrisk.profile.scan import scan

        with self.progress() as progress:
            return scan(
                [inputs] if isinstance(inputs, str) else list(inputs),
                self.loaded,
                read_options=self.read_options,
                policy=self.policy,
                strict=self.strict,
                progress=progress,
                reference=reference,
                prior=prior,
                executor=self.counting_executor,
                checkpoint=checkpoint,
                resume=resume,
                engine=self.engine,
            )


def _same_model(stated: str, counted: str) -> bool:
    """Whether two model names name one model: the same text, or one folder or file (as samefile sees it)."""
    if stated == counted:
        return True
    try:
        return os.path.samefile(stated, counted)
    except OSError:
        return False


def old_loss_of(
    value: float | str | None, settings: ScanSettings | None, say: Callable[[str], None] = lambda _message: None
) -> float | Callable[[Profile], float | None] | None:
    """--old-loss as the forecast takes it (`vocabrisk.verify.old_loss`): NATS as given; `none`, nothing (the
    calibration's, else unknown); `measure`, the base model's loss on each profile's old text, one forward pass
    here (torch), in place of the calibration's; `auto` (the default), the calibration's where it has one, else
    the loss kept from an earlier run, else measured here where that is cheap (`auto_old_loss`). Without SETTINGS
    (a report or a diff, which load no model), `auto` finds a kept loss alone. SAY hears of a measurement."""
    if not isinstance(value, str):
        return value
    if value == "none":
        return None
    if value == "measure" and settings is None:
        raise UsageError("--old-loss measure needs the model, which this command does not load: give NATS")

    def measured(profile: Profile) -> float:
        if profile.old_text is None or not len(profile.old_text.ids):
            raise InputError(
                "--old-loss measure: the profile holds no old text to measure the base model's loss on",
                hint="give --reference with text in the base model's own distribution, or --old-loss NATS",
            )
        if not _counted_with(settings, profile):
            raise InputError(
                f"--old-loss measure: this profile was counted against {profile.model['name']!r}, which this "
                f"command did not load ({settings.model_name!r})",
                hint=f"add --model {profile.model['name']}, or give --old-loss NATS",
            )
        try:
            from vocabrisk.verify.old_loss import measure_old_loss

            return measure_old_loss(settings.loaded, profile.old_text)
        except ImportError as exc:
            raise InputError(
                f"--old-loss measure runs the model, which needs torch and transformers ({exc})",
                hint="pip install 'vocabrisk[verify]', or give the loss as --old-loss NATS",
            ) from exc

    def auto(profile: Profile) -> float | None:
        from vocabrisk.risk.calibration import load_calibration
        from vocabrisk.verify.old_loss import auto_old_loss, kept_old_loss

        if profile.old_text is None or not len(profile.old_text.ids):
            return None
        if load_calibration(profile.calibration_key, profile.weights_key).old_loss is not None:
            return None  # the calibration's, which its constants were fitted with
        if settings is None or not settings.model_is_loaded or not _counted_with(settings, profile):
            return kept_old_loss(profile.calibration_key, profile.weights_key, profile.old_text)  # loads no model
        return auto_old_loss(settings.loaded, profile.old_text, say)

    return measured if value == "measure" else auto


def _counted_with(settings: ScanSettings | None, profile: Profile) -> bool:
    """Whether the model SETTINGS load is the one PROFILE was counted against, with the same weights."""
    if settings is None or not _same_model(settings.model_name, profile.model["name"]):
        return False
    return profile.weights_key in (None, settings.loaded.weights_key)
