"""Settings from `[tool.vocabrisk.*]` in pyproject.toml, or from vocabrisk.toml: the gate and the plan.

A data pipeline keeps its limits and its training plan next to its code, so the same
`vocabrisk gate data/` runs unchanged on a laptop, in pre-commit and in CI, and `scan`,
`rank`, `diff`, `gate` and `report` judge under the same plan (`training_plan`). The
nearest file from the working directory upwards wins (a pyproject.toml counts only when it
has a `[tool.vocabrisk]` table, as ruff does it), or the one --config names; flags given on
the command line override what the file says (`Config.training_plan`, `Config.gate`).

    [tool.vocabrisk.gate]
    corpus = "data/train"                  # or a list; relative to this file (the gate's INPUTS, when none is given)
    model = "gpt2"
    max-risk = 0.30
    max-starved-share = 0.90
    baseline = ".vocabrisk/baseline"      # relative to this file
    max-risk-increase = 0.01
    max-skipped-share = 0.001              # default 0: any skipped file or record fails

    [tool.vocabrisk.gate.max-group-risk]
    Hangul = 0.02
    "*" = 0.15                             # every other group

    [tool.vocabrisk.plan]                  # the keys are the plan flags' names (see plan_settings.SETTINGS)
    training-args = "train/training_args.json"   # relative to this file
    seq-len = 2048
    trains = "lora"
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from vocabrisk.errors import PlanError, UsageError, VocabriskError
from vocabrisk.report import CI_FORMATS as REPORT_FORMATS
from vocabrisk.risk.plan import TrainingPlan
from vocabrisk.risk.plan_settings import check_settings, resolve_plan

if TYPE_CHECKING:
    from vocabrisk.gate import Thresholds

CONFIG_FILE = "vocabrisk.toml"
PYPROJECT = "pyproject.toml"

_SHARES = ("max-risk", "max-starved-share", "max-risk-increase", "max-skipped-share")
_KEYS = frozenset({*_SHARES, "corpus", "model", "baseline", "max-group-risk", "max-forgetting"})
_MOVED_TO_PLAN = frozenset({"tokens-per-step", "steps", "beta2"})


class ConfigError(VocabriskError):
    """A configuration file is unreadable or says something vocabrisk cannot use."""


def _dashed(name: str) -> str:
    return name.replace("_", "-")


@dataclass(frozen=True)
class GateSettings:
    """What one gate run judges and holds it to, from its flags over the configuration file."""

    inputs: tuple[str, ...]  # the corpus (or saved profile) to judge
    model: str | None  # None: not stated (DEFAULT_MODEL for a count; a saved profile keeps its own)
    thresholds: Thresholds
    baseline: Path | str | None  # a saved profile of the data as it was
    reports: list[tuple[str, str]]  # (format, path) of each --report


@dataclass(frozen=True)
class Config:
    """What a configuration file asks of the gate, and the plan it states; every field is optional."""

    path: Path | None = None
    corpus: tuple[str, ...] = ()  # the inputs a gate given none judges
    model: str | None = None
    max_risk: float | None = None
    max_forgetting: float | None = None
    max_starved_share: float | None = None
    max_group_risk: dict[str, float] = field(default_factory=dict)
    baseline: Path | None = None
    max_risk_increase: float | None = None
    max_skipped_share: float | None = None
    plan: dict[str, object] = field(default_factory=dict)  # plan setting (plan_settings.SETTINGS) → value

    def training_plan(self, flags: dict) -> TrainingPlan:
        """The plan every command judges under: FLAGS (the plan flags given) over this file's plan (`resolve_plan`)."""
        return resolve_plan(flags, self.plan)

    def gate(
        self, flags: dict, reports: Sequence[str] = (), out: str | None = None, inputs: Sequence[str] = ()
    ) -> GateSettings:
        """The gate's inputs, model, limits and baseline: a flag given wins, else this file, else the default.

        INPUTS are the command line's, else this file's `corpus` (one of them must name some). FLAGS
        maps the gate flags given on the command line (model, max_risk, max_forgetting,
        max_starved_share, group_limits as GROUP=LIMIT texts, baseline, max_risk_increase,
        max_skipped_share) to their values; REPORTS are the FORMAT=PATH texts of --report; OUT is
        where the profile is saved, which must not be the baseline.
        """

        from vocabrisk.gate import Thresholds  # the decisions are imported by the command that makes them

        def pick(name: str):
            return flags[name] if name in flags else getattr(self, name)

        thresholds = Thresholds(
            max_risk=pick("max_risk"),
            max_forgetting=pick("max_forgetting"),
            max_starved_share=pick("max_starved_share"),
            max_group_risk={**self.max_group_risk, **dict(map(parse_group_limit, flags.get("group_limits", ())))},
            max_risk_increase=pick("max_risk_increase") or 0.0,
            max_skipped_share=pick("max_skipped_share") or 0.0,
        )
        targets = [parse_report_target(text) for text in reports]
        baseline = flags.get("baseline") or self.baseline
        if not baseline and (flags.get("max_risk_increase") is not None or self.max_risk_increase is not None):
            raise UsageError("--max-risk-increase needs a baseline: --baseline DIR, or `baseline` in the config")
        if baseline and out and Path(out).resolve() == Path(baseline).resolve():
            raise UsageError("--out would overwrite the baseline it is compared with; save it elsewhere")
        inputs = tuple(inputs) or self.corpus
        if not inputs:
            where = f"`corpus` in {self.path}" if self.path else "`corpus` in the [gate] table of a vocabrisk.toml"
            raise UsageError(f"no corpus to gate: name it (vocabrisk gate data/train), or set {where}")
        return GateSettings(inputs, flags.get("model") or self.model, thresholds, baseline, targets)


def training_plan(flags: dict, path: Path | str | None = None) -> TrainingPlan:
    """The plan FLAGS state over the [plan] of the configuration file (PATH, else the nearest), over the defaults."""
    return load_config(path).training_plan(flags)


def parse_group_limit(text: str) -> tuple[str, float]:
    """--max-group-risk GROUP=LIMIT (group names may hold spaces: `code symbols=0.05`)."""
    key, sep, value = text.rpartition("=")
    try:
        limit = float(value)
    except ValueError:
        limit = -1.0
    if not sep or not key or not 0.0 <= limit <= 1.0:
        raise UsageError(f"{text!r} is not GROUP=LIMIT with LIMIT from 0 to 1", option="--max-group-risk")
    return key, limit


def parse_report_target(text: str) -> tuple[str, str]:
    """--report FORMAT=PATH."""
    name, sep, path = text.partition("=")
    if not sep or not path or name not in REPORT_FORMATS:
        raise UsageError(
            f"{text!r} is not FORMAT=PATH with FORMAT one of {', '.join(REPORT_FORMATS)}", option="--report"
        )
    return name, path


def find_config(start: Path) -> Path | None:
    """The nearest vocabrisk.toml, or pyproject.toml with a `[tool.vocabrisk]` table, from START up."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / CONFIG_FILE).is_file():
            return folder / CONFIG_FILE
        pyproject = folder / PYPROJECT
        if pyproject.is_file() and "vocabrisk" in _read(pyproject).get("tool", {}):
            return pyproject
    return None


def load_config(path: Path | str | None = None, start: Path | None = None) -> Config:
    """Read PATH, or the nearest configuration file from START (the working directory); none is fine."""
    path = Path(path) if path else find_config(start or Path.cwd())
    if path is None:
        return Config()
    data = _read(path)
    table = data.get("tool", {}).get("vocabrisk", {}) if path.name == PYPROJECT else data
    prefix = "table tool.vocabrisk." if path.name == PYPROJECT else "table "
    config = _parse(path, prefix + "gate", table.get("gate", {}))
    return replace(config, plan=_parse_plan(path, prefix + "plan", table.get("plan", {})))


def _read(path: Path) -> dict:
    if sys.version_info >= (3, 11):  # imported only where there is a file to read
        import tomllib
    else:  # pragma: no cover - Python 3.10 reads TOML through the backport
        import tomli as tomllib
    try:
        with path.open("rb") as file:
            return tomllib.load(file)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}", hint="fix the file, or pass --config FILE") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}", hint="pass --config FILE") from exc


def _parse(path: Path, where: str, gate: dict) -> Config:
    def fail(message: str, hint: str) -> ConfigError:
        return ConfigError(f"{path}: {where} {message}", hint=hint)

    if not isinstance(gate, dict):
        raise fail("is not a table", hint="write the gate settings under their own table header")
    moved = sorted(set(gate) & _MOVED_TO_PLAN)
    if moved:
        plan_table = where.removeprefix("table ").removesuffix("gate") + "plan"
        raise fail(f"has plan keys: {', '.join(moved)}", hint=f"move them to the [{plan_table}] table")
    unknown = sorted(set(gate) - _KEYS)
    if unknown:
        raise fail(f"has unknown keys: {', '.join(unknown)}", hint=f"known keys: {', '.join(sorted(_KEYS))}")
    for key in _SHARES:
        if key in gate and not _is_share(gate[key]):
            raise fail(f"{key} = {gate[key]!r} is not a number from 0 to 1", hint="e.g. 0.25")
    for key in ("model", "baseline"):
        if key in gate and not isinstance(gate[key], str):
            raise fail(f"{key} = {gate[key]!r} is not a string", hint='quote it: key = "value"')
    forgetting = gate.get("max-forgetting")
    if forgetting is not None and not (
        isinstance(forgetting, int | float) and not isinstance(forgetting, bool) and 0 <= forgetting < math.inf
    ):
        raise fail(f"max-forgetting = {forgetting!r} is not a number of nats, 0 or more", hint="e.g. 0.05")
    groups = gate.get("max-group-risk", {})
    if not isinstance(groups, dict) or not all(_is_share(v) for v in groups.values()):
        raise fail("max-group-risk must map group names to numbers from 0 to 1", hint='{ Hangul = 0.02, "*" = 0.1 }')
    corpus = gate.get("corpus", [])
    corpus = [corpus] if isinstance(corpus, str) else corpus
    if not isinstance(corpus, list) or not all(isinstance(c, str) and c for c in corpus):
        raise fail(f"corpus = {gate['corpus']!r} is not a path or a list of paths", hint='corpus = "data/train"')
    baseline = gate.get("baseline")
    return Config(
        path=path,
        corpus=tuple(_beside(path, c) for c in corpus),
        model=gate.get("model"),
        max_risk=gate.get("max-risk"),
        max_forgetting=gate.get("max-forgetting"),
        max_starved_share=gate.get("max-starved-share"),
        max_group_risk={str(k): float(v) for k, v in groups.items()},
        baseline=(path.parent / baseline) if baseline else None,
        max_risk_increase=gate.get("max-risk-increase"),
        max_skipped_share=gate.get("max-skipped-share"),
    )


def _parse_plan(path: Path, where: str, table: dict) -> dict[str, object]:
    """The plan settings of the table, checked, with a TrainingArguments path made relative to this file."""
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: {where} is not a table", hint="write the plan under its own table header")
    settings = {key.replace("-", "_"): value for key, value in table.items()}
    try:
        check_settings(settings, f"{path}: {where}", spell=_dashed)
    except PlanError as exc:
        raise ConfigError(exc.message, hint=exc.hint) from exc
    if "training_args" in settings:
        settings["training_args"] = str(path.parent / settings["training_args"])
    return settings


def _beside(config: Path, corpus: str) -> str:
    """A corpus path of the configuration file, relative to it, as a path from the working directory
    (relative where it can be, as reports name their inputs); URLs and dataset streams as they are."""
    from vocabrisk.corpus.hf_stream import is_stream  # the corpus readers, only for a file that names a corpus
    from vocabrisk.corpus.remote import is_url

    if is_url(corpus) or is_stream(corpus) or corpus == "-":
        return corpus
    path = config.parent / corpus
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive (Windows): no relative path leads there
        return str(path)


def _is_share(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and 0 <= value <= 1
