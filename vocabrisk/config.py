"""Gate settings from `[tool.vocabrisk.gate]` in pyproject.toml, or `[gate]` in vocabrisk.toml.

A data pipeline keeps its limits next to its code, so the same `vocabrisk gate data/` runs
unchanged on a laptop, in pre-commit and in CI. The nearest file from the working directory
upwards wins (a pyproject.toml counts only when it has a `[tool.vocabrisk]` table, as ruff
does it); flags on the command line override what the file says.

    [tool.vocabrisk.gate]
    model = "gpt2"
    max-risk = 0.30
    max-starved-share = 0.90
    baseline = ".vocabrisk/baseline"      # relative to this file
    max-risk-increase = 0.01
    max-skipped-share = 0.001              # default 0: any skipped file or record fails
    steps = 2000

    [tool.vocabrisk.gate.max-group-risk]
    Hangul = 0.02
    "*" = 0.15                             # every other group
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

from vocabrisk.errors import VocabriskError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 reads TOML through the backport
    import tomli as tomllib

CONFIG_FILE = "vocabrisk.toml"
PYPROJECT = "pyproject.toml"

_SHARES = ("max-risk", "max-starved-share", "max-risk-increase", "max-skipped-share")
_KEYS = frozenset({*_SHARES, "beta2", "model", "baseline", "max-group-risk", "tokens-per-step", "steps"})


class ConfigError(VocabriskError):
    """A configuration file is unreadable or says something vocabrisk cannot use."""


@dataclass(frozen=True)
class GateConfig:
    """What a configuration file asks of the gate; every field is optional."""

    path: Path | None = None
    model: str | None = None
    max_risk: float | None = None
    max_starved_share: float | None = None
    max_group_risk: dict[str, float] = field(default_factory=dict)
    baseline: Path | None = None
    max_risk_increase: float | None = None
    max_skipped_share: float | None = None
    plan: dict[str, float | int] = field(default_factory=dict)  # TrainingPlan field → value


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


def load_config(path: Path | None = None, start: Path | None = None) -> GateConfig:
    """Read PATH, or the nearest configuration file from START (the working directory); none is fine."""
    path = path or find_config(start or Path.cwd())
    if path is None:
        return GateConfig()
    data = _read(path)
    table = data.get("tool", {}).get("vocabrisk", {}) if path.name == PYPROJECT else data
    where = "table tool.vocabrisk.gate" if path.name == PYPROJECT else "table gate"
    return _parse(path, where, table.get("gate", {}))


def _read(path: Path) -> dict:
    try:
        with path.open("rb") as file:
            return tomllib.load(file)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}", hint="fix the file, or pass --config FILE") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}", hint="pass --config FILE") from exc


def _parse(path: Path, where: str, gate: dict) -> GateConfig:
    def fail(message: str, hint: str) -> ConfigError:
        return ConfigError(f"{path}: {where} {message}", hint=hint)

    if not isinstance(gate, dict):
        raise fail("is not a table", hint="write the gate settings under their own table header")
    unknown = sorted(set(gate) - _KEYS)
    if unknown:
        raise fail(f"has unknown keys: {', '.join(unknown)}", hint=f"known keys: {', '.join(sorted(_KEYS))}")
    for key in _SHARES:
        if key in gate and not _is_share(gate[key]):
            raise fail(f"{key} = {gate[key]!r} is not a number from 0 to 1", hint="e.g. 0.25")
    if "beta2" in gate and not (_is_share(gate["beta2"]) and gate["beta2"] < 1):
        raise fail(f"beta2 = {gate['beta2']!r} is not a number from 0 up to (not including) 1", hint="e.g. 0.999")
    for key in ("tokens-per-step", "steps"):
        if key in gate and not (isinstance(gate[key], int) and not isinstance(gate[key], bool) and gate[key] > 0):
            raise fail(f"{key} = {gate[key]!r} is not a positive whole number", hint="e.g. 2000")
    for key in ("model", "baseline"):
        if key in gate and not isinstance(gate[key], str):
            raise fail(f"{key} = {gate[key]!r} is not a string", hint='quote it: key = "value"')
    groups = gate.get("max-group-risk", {})
    if not isinstance(groups, dict) or not all(_is_share(v) for v in groups.values()):
        raise fail("max-group-risk must map group names to numbers from 0 to 1", hint='{ Hangul = 0.02, "*" = 0.1 }')
    baseline = gate.get("baseline")
    return GateConfig(
        path=path,
        model=gate.get("model"),
        max_risk=gate.get("max-risk"),
        max_starved_share=gate.get("max-starved-share"),
        max_group_risk={str(k): float(v) for k, v in groups.items()},
        baseline=(path.parent / baseline) if baseline else None,
        max_risk_increase=gate.get("max-risk-increase"),
        max_skipped_share=gate.get("max-skipped-share"),
        plan={
            name: gate[key]
            for key, name in (("tokens-per-step", "tokens_per_step"), ("steps", "steps"), ("beta2", "beta2"))
            if key in gate
        },
    )


def _is_share(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and 0 <= value <= 1
