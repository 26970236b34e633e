"""The planned fine-tuning run: what a user knows before training and a forecast needs.

A plan comes from flags, the `[plan]` table of the configuration file, or the JSON a
transformers `TrainingArguments` writes (`training_args.json`), in that order of precedence
(`vocabrisk.risk.plan_settings`). Its length is given in optimizer steps, or in epochs over the corpus,
in which case the steps follow from the corpus's size (`steps_for`, `resolve`). Either way
the plan implies a number of epochs over the corpus, which every report shows: a default
plan over a small corpus silently repeats it hundreds of times.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields, replace
from numbers import Real
from pathlib import Path
from typing import Any, cast

import numpy as np

from vocabrisk.errors import PlanError
from vocabrisk.risk.wording import format_epochs

LR_SCHEDULES = ("constant", "linear", "cosine")
TRAINS = ("all", "head-frozen", "lora", "lora+head")
DEFAULT_STEPS = 1_000
REPEATS_WARNING = 4.0  # implied epochs above which reports warn


@dataclass(frozen=True, kw_only=True)
class TrainingPlan:
    """The planned fine-tuning run a risk or forecast is computed for.

    `steps` or `epochs` give its length. With `epochs`, `steps` is None until the plan is
    resolved against a corpus (`resolve`), which sets it and keeps `epochs`.
    """

    tokens_per_step: int = 524_288  # e.g. 128 sequences of 4,096 tokens
    steps: int | None = None  # DEFAULT_STEPS when neither steps nor epochs is given
    learning_rate: float = 2e-5
    warmup_steps: int = 0
    warmup_ratio: float = 0.0  # share of the steps warmed up when warmup_steps is 0 (transformers' rule)
    lr_schedule: str = "constant"  # after warmup: constant, or linear / cosine decay to 0
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    weight_decay: float = 0.0
    trains: str = "all"  # all, head-frozen, lora, lora+head
    head_eps: float | None = None  # the mitigation: Adam eps for the output projection only
    epochs: float | None = None  # the length in epochs over the corpus, instead of steps

    def __post_init__(self) -> None:
        if self.steps is None and self.epochs is None:
            object.__setattr__(self, "steps", DEFAULT_STEPS)
        for name, check in CHECKS.items():
            value = getattr(self, name)
            if not (value is None and name in _OPTIONAL) and not check.holds(value):
                raise PlanError(f"{name} = {value!r} is not {check.meaning}", hint=f"e.g. {name} = {check.example}")

    # ---- length ----------------------------------------------------------------------------
    def steps_for(self, corpus_tokens: int) -> int:
        """Optimizer steps over a corpus of CORPUS_TOKENS: `steps`, or the steps `epochs` take, rounded up (one
        at least)."""
        if self.epochs is None:
            return cast(int, self.steps)  # a plan not in epochs has steps: __post_init__ sees to it
        return max(math.ceil(self.epochs * corpus_tokens / self.tokens_per_step), 1)

    def resolve(self, corpus_tokens: int) -> TrainingPlan:
        """This plan with its steps set for a corpus of CORPUS_TOKENS (itself for a plan in steps)."""
        return self if self.epochs is None else replace(self, steps=self.steps_for(corpus_tokens))

    def implied_epochs(self, corpus_tokens: int) -> float | None:
        """How many times the plan goes over a corpus of CORPUS_TOKENS (None for an empty corpus).

        A plan in epochs goes over it `epochs` times (its last step a partial one, as a Trainer's is), except
        where that is less than one step: the run's one step of `tokens_per_step` goes over it more often.
        """
        if corpus_tokens <= 0:
            return None
        if self.epochs is None:
            return self.steps_for(corpus_tokens) * self.tokens_per_step / corpus_tokens
        return max(self.epochs, self.tokens_per_step / corpus_tokens)

    def repeats_warning(self, corpus_tokens: int) -> str | None:
        """A warning when the plan repeats the corpus more than REPEATS_WARNING times, or more than its epochs say."""
        epochs = self.implied_epochs(corpus_tokens)
        if epochs is not None and self.epochs is not None and epochs > self.epochs:
            return (
                f"{self.epochs:g} epochs of this corpus ({corpus_tokens:,} tokens) is less than one optimizer step of "
                f"{self.tokens_per_step:,} tokens: the run's one step goes over it {format_epochs(epochs)} times, "
                "which every number here is for; pass --steps, or fewer --tokens-per-step"
            )
        if epochs is None or epochs <= REPEATS_WARNING:
            return None
        return (
            f"the plan repeats this corpus {format_epochs(epochs)} times; "
            "pass --steps/--epochs/--training-args to state your real plan"
        )

    @property
    def total_tokens(self) -> int:
        """Tokens the run trains on (a plan in epochs must be resolved first)."""
        return self.tokens_per_step * self._steps()

    # ---- optimizer -------------------------------------------------------------------------
    @property
    def memory_steps(self) -> float:
        """Adam's second-moment memory, in steps."""
        return 1.0 / (1.0 - self.beta2)

    @property
    def warmup(self) -> int:
        """Warmup steps: warmup_steps, else warmup_ratio of the steps rounded up, as transformers does."""
        if self.warmup_steps or not self.warmup_ratio:
            return self.warmup_steps
        return math.ceil(self.warmup_ratio * self._steps())

    def lr_at(self, step: int | np.ndarray) -> float | np.ndarray:
        """The learning rate of optimizer step STEP (0-based), as transformers' get_*_schedule_with_warmup."""
        total, warmup = self._steps(), self.warmup
        s = np.asarray(step, dtype=np.float64)
        progress = np.clip((s - warmup) / max(1, total - warmup), 0.0, 1.0)
        after = {
            "constant": np.ones_like(s),
            "linear": np.maximum(0.0, (total - s) / max(1, total - warmup)),
            "cosine": 0.5 * (1.0 + np.cos(np.pi * progress)),
        }[self.lr_schedule]
        factor = np.where(s < warmup, s / max(1, warmup), after)
        rate = self.learning_rate * factor
        return float(rate) if np.ndim(rate) == 0 else rate

    @property
    def mean_lr(self) -> float:
        """The learning rate averaged over the run's steps (`lr_at`'s mean, in closed form)."""
        total, warmup = self._steps(), self.warmup
        warm = min(warmup, total)
        rising = warm * (warm - 1) / (2 * max(1, warmup))  # sum of s / warmup over the warmup steps
        rest = total - warm
        # linear and cosine decay both sum to (rest + 1) / 2 over the rest: cos(pi k / rest) sums to 1
        after = rest if self.lr_schedule == "constant" else (rest + 1) / 2 if rest else 0.0
        return self.learning_rate * ((rising + after) / total)

    @property
    def head_trains(self) -> bool:
        """Whether the output head's rows are trained at all (not with the head frozen, nor plain LoRA)."""
        return self.trains in ("all", "lora+head")

    # ---- conversion ------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> TrainingPlan:
        """A plan from `to_dict`, or from an older one that lacks the newer fields."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    @classmethod
    def from_training_arguments(
        cls, source: str | Path | dict, seq_len: int | None = None, world_size: int = 1
    ) -> TrainingPlan:
        """The plan a transformers `TrainingArguments` describes (its JSON, a path to it, or the dict).

        Tokens per step are per-device batch × gradient accumulation × WORLD_SIZE × SEQ_LEN; without
        SEQ_LEN, the `max_seq_length` or `max_length` a TRL SFTConfig writes is used.
        """
        return cls(**training_arguments_fields(source, seq_len, world_size))

    def _steps(self) -> int:
        if self.steps is None:
            raise PlanError(
                f"a plan of {self.epochs:g} epochs has no step count until it meets a corpus",
                hint="call plan.resolve(corpus_tokens) first",
            )
        return self.steps


# ---- validation ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Check:
    meaning: str
    example: str
    kind: type | tuple[type, ...] = Real
    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] = ()

    def holds(self, value: object) -> bool:
        if self.choices:
            return value in self.choices
        if isinstance(value, bool) or not isinstance(value, self.kind):
            return False
        if not isinstance(value, Real):  # a path
            return True
        number = float(value)
        if not math.isfinite(number):
            return False
        above = number > self.low if self.low_open else number >= self.low
        below = number < self.high if self.high_open else number <= self.high
        return above and below


WHOLE = (int, np.integer)
CHECKS = {
    "tokens_per_step": Check("a positive whole number", "524288", WHOLE, low=1),
    "steps": Check("a positive whole number", "1000", WHOLE, low=1),
    "epochs": Check("a positive number", "3", low=0, low_open=True),
    "learning_rate": Check("a number from 0 up", "2e-5", low=0),
    "warmup_steps": Check("a whole number from 0 up", "100", WHOLE, low=0),
    "warmup_ratio": Check("a number from 0 to 1", "0.03", low=0, high=1),
    "lr_schedule": Check(f"one of {', '.join(LR_SCHEDULES)}", "linear", choices=LR_SCHEDULES),
    "beta1": Check("a number from 0 up to (not including) 1", "0.9", low=0, high=1, high_open=True),
    "beta2": Check("a number from 0 up to (not including) 1", "0.999", low=0, high=1, high_open=True),
    "eps": Check("a number from 0 up", "1e-8", low=0),
    "weight_decay": Check("a number from 0 up", "0.01", low=0),
    "trains": Check(f"one of {', '.join(TRAINS)}", "lora", choices=TRAINS),
    "head_eps": Check("a positive number", "1e-5", low=0, low_open=True),
}
_OPTIONAL = frozenset({"steps", "epochs", "head_eps"})


# ---- transformers TrainingArguments --------------------------------------------------------
# lr_scheduler_type → (schedule, whether it warms up); transformers' "constant" ignores warmup
_HF_SCHEDULES = {
    "linear": ("linear", True),
    "cosine": ("cosine", True),
    "constant": ("constant", False),
    "constant_with_warmup": ("constant", True),
}


def training_arguments_fields(
    source: str | Path | dict, seq_len: int | None = None, world_size: int = 1, ignore: frozenset[str] = frozenset()
) -> dict:
    """The TrainingPlan fields a TrainingArguments JSON states, checked, with errors naming file and field.

    Fields in IGNORE are not read (a flag states them), so a value vocabrisk cannot use there is no error.
    """
    where, args = _load_training_arguments(source)

    def read(name: str, check: Check, default: object = None) -> Any:  # what CHECK holds for
        value = args.get(name, default)
        if value is None or not check.holds(value):
            raise PlanError(
                f"{where}: field {name} = {value!r} is not {check.meaning}",
                hint=f"e.g. {name}: {check.example}, or state it with a flag",
            )
        return value

    if "per_device_train_batch_size" not in args:
        raise PlanError(
            f"{where}: no field per_device_train_batch_size; is this a TrainingArguments JSON?",
            hint="write it with TrainingArguments.to_json_string() (the Trainer saves training_args.bin, not JSON)",
        )
    whole = CHECKS["tokens_per_step"]
    plan: dict = {}
    if "tokens_per_step" not in ignore:
        if seq_len is None:
            key = next((k for k in ("max_seq_length", "max_length") if args.get(k) is not None), None)
            if key is None:
                raise PlanError(
                    f"{where}: says no sequence length, which tokens per step need",
                    hint="pass --seq-len (the length the data is packed or truncated to)",
                )
            seq_len = read(key, whole)
        plan["tokens_per_step"] = (
            read("per_device_train_batch_size", whole)
            * read("gradient_accumulation_steps", whole, 1)
            * int(world_size)
            * int(seq_len)
        )
    if not ignore & {"steps", "epochs"}:
        max_steps = read("max_steps", Check("a whole number", "-1", WHOLE), -1)
        if max_steps > 0:
            plan["steps"] = max_steps
        else:
            plan["epochs"] = read("num_train_epochs", CHECKS["epochs"], 3.0)
    for name, key in (("learning_rate", "learning_rate"), ("beta1", "adam_beta1"), ("beta2", "adam_beta2"),
                      ("eps", "adam_epsilon"), ("weight_decay", "weight_decay")):  # fmt: skip
        if name not in ignore and key in args:
            plan[name] = read(key, CHECKS[name])
    optim = str(args.get("optim", "adamw_torch"))
    if "adam" not in optim:
        raise PlanError(
            f"{where}: field optim = {optim!r} is not an Adam optimizer, which vocabrisk models",
            hint="the risk and forecast assume Adam or AdamW",
        )
    if "lr_schedule" not in ignore:
        kind = args.get("lr_scheduler_type", "linear")
        if kind not in _HF_SCHEDULES:
            raise PlanError(
                f"{where}: field lr_scheduler_type = {kind!r} is not one vocabrisk models ({', '.join(_HF_SCHEDULES)})",
                hint="pass --lr-schedule constant, linear or cosine: the one nearest to it",
            )
        plan["lr_schedule"], warms_up = _HF_SCHEDULES[kind]
        if not warms_up:
            plan["warmup_steps"] = 0
    if "warmup_steps" not in ignore and "warmup_steps" not in plan:
        steps = read("warmup_steps", Check("a number from 0 up", "100", low=0), 0)
        if steps >= 1:  # transformers 5 takes a float, whole steps from 1 up
            plan["warmup_steps"] = int(steps)
        elif steps > 0:  # and a fraction of the steps below 1
            plan["warmup_ratio"] = steps
        elif args.get("warmup_ratio"):  # transformers 4
            plan["warmup_ratio"] = read("warmup_ratio", CHECKS["warmup_ratio"])
    return plan


def _load_training_arguments(source: str | Path | dict) -> tuple[str, dict]:
    if isinstance(source, dict):
        return "TrainingArguments", source
    path = Path(source)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PlanError(f"{path}: cannot read: {exc.strerror}", hint="pass the path of a training_args.json") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PlanError(
            f"{path}: not JSON: {exc}", hint="write it with TrainingArguments.to_json_string(), not the .bin"
        ) from exc
    if not isinstance(data, dict):
        raise PlanError(f"{path}: holds a JSON {type(data).__name__}, not an object of TrainingArguments fields")
    return str(path), data
