"""A plan as flags and the configuration file state it: their names, their checks, and how they layer.

Flags win over a TrainingArguments file, which wins over the `[plan]` table of the configuration file, which
wins over the defaults (`resolve_plan`).
"""

from __future__ import annotations

from pathlib import Path

from vocabrisk.errors import PlanError
from vocabrisk.risk.plan import CHECKS, WHOLE, Check, TrainingPlan, training_arguments_fields

# A flag (`--adam-beta2`) or configuration key (`adam-beta2`) → the TrainingPlan field it sets.
SETTINGS = {
    "tokens_per_step": "tokens_per_step",
    "steps": "steps",
    "epochs": "epochs",
    "lr": "learning_rate",
    "warmup_steps": "warmup_steps",
    "lr_schedule": "lr_schedule",
    "adam_beta1": "beta1",
    "adam_beta2": "beta2",
    "adam_eps": "eps",
    "weight_decay": "weight_decay",
    "trains": "trains",
    "head_eps": "head_eps",
}
# Settings that say where a TrainingArguments JSON is and what it does not say.
SOURCE_SETTINGS = {
    "training_args": Check("a path to a TrainingArguments JSON", '"training_args.json"', (str, Path)),
    "seq_len": Check("a positive whole number", "2048", WHOLE, low=1),
    "world_size": Check("a positive whole number", "8", WHOLE, low=1),
}


def check_settings(settings: dict, where: str, spell=lambda name: f"--{name.replace('_', '-')}") -> None:
    """Raise PlanError, naming WHERE and the setting as SPELL writes it, for a value no plan can take."""
    unknown = sorted(set(settings) - set(SETTINGS) - set(SOURCE_SETTINGS))
    if unknown:
        known = ", ".join(spell(name) for name in [*SETTINGS, *SOURCE_SETTINGS])
        raise PlanError(f"{where}: unknown settings {', '.join(map(spell, unknown))}", hint=f"known: {known}")
    for name, value in settings.items():
        check = SOURCE_SETTINGS.get(name) or CHECKS[SETTINGS[name]]
        if not check.holds(value):
            raise PlanError(f"{where}: {spell(name)} = {value!r} is not {check.meaning}",
                            hint=f"e.g. {spell(name)} = {check.example}")  # fmt: skip
    if "steps" in settings and "epochs" in settings:
        raise PlanError(f"{where}: both {spell('steps')} and {spell('epochs')} are given", hint="give one of them")


def resolve_plan(flags: dict, configured: dict | None = None) -> TrainingPlan:
    """The plan stated by FLAGS, over a TrainingArguments file, over the configuration file, over defaults.

    FLAGS and CONFIGURED map setting names (SETTINGS, SOURCE_SETTINGS) to the values stated, nothing
    else; CONFIGURED has been checked when the file was read. The TrainingArguments file is the one
    --training-args names, else the configuration's. A layer that states the length (steps or epochs)
    replaces the length of the layers below it.
    """
    configured = configured or {}
    check_settings(flags, "the command line")
    source = {name: flags.get(name, configured.get(name)) for name in SOURCE_SETTINGS}
    flag_fields = {SETTINGS[name]: value for name, value in flags.items() if name in SETTINGS}
    if source["training_args"] is None:
        stray = [f"--{name.replace('_', '-')}" for name in ("seq_len", "world_size") if source[name] is not None]
        if stray:
            raise PlanError(
                f"{' and '.join(stray)} only apply to a TrainingArguments file",
                hint="add --training-args FILE, or give the tokens per step with --tokens-per-step",
            )
        file_fields = {}
    else:
        file_fields = training_arguments_fields(
            source["training_args"], source["seq_len"], source["world_size"] or 1, ignore=frozenset(flag_fields)
        )
    merged: dict = {}
    for layer in ({SETTINGS[n]: v for n, v in configured.items() if n in SETTINGS}, file_fields, flag_fields):
        if layer.keys() & {"steps", "epochs"}:
            merged.pop("steps", None)
            merged.pop("epochs", None)
        merged.update(layer)
    return TrainingPlan(**merged)
