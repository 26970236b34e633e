"""Errors a user can act on.

Every error raised for bad input or a bad model names what was wrong, where (file and
line or record when known) and what to do. The CLI prints them without a traceback and
exits with status 2. An optional dependency that is missing is one of them too (`require`).
"""

from __future__ import annotations

import importlib
from types import ModuleType


class VocabriskError(Exception):
    """Base class: a message for the user, plus an optional hint on what to do."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


class InputError(VocabriskError):
    """A corpus input could not be found, opened or parsed."""


class ModelError(VocabriskError):
    """A model could not be resolved or its tokenizer or head could not be read."""


class ProfileError(VocabriskError):
    """A saved profile is missing, corrupt or incompatible with the operation."""


class UsageError(VocabriskError):
    """The command was asked for something it cannot do as given: a flag missing, malformed or in conflict.

    `option` names the one flag at fault, where there is one; the CLI prints these as click's usage errors.
    """

    def __init__(self, message: str, option: str | None = None):
        super().__init__(message)
        self.option = option


class PlanError(VocabriskError):
    """A training plan, or a file describing one, says something vocabrisk cannot use."""


class MissingExtra(VocabriskError, ImportError):
    """A feature needs a package that is not installed; the hint names the extra that installs it.

    Also an ImportError, so code that tries an import and falls back still catches it: never a bare
    ModuleNotFoundError that leaves the user to guess which package and which extra.
    """


def require(module: str, extra: str, what: str, otherwise: str = "") -> ModuleType:
    """MODULE imported, or MissingExtra saying that WHAT needs it and `pip install 'vocabrisk[EXTRA]'` (or
    OTHERWISE, what else would do).

    >>> require("json", "report", "this doctest").__name__
    'json'
    >>> require("no_such_module_here", "report", "this doctest")
    Traceback (most recent call last):
    ...
    vocabrisk.errors.MissingExtra: this doctest needs no_such_module_here, which is not installed
      hint: pip install 'vocabrisk[report]'
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        install = f"pip install 'vocabrisk[{extra}]'"
        hint = f"{install}, or {otherwise}" if otherwise else install
        raise MissingExtra(f"{what} needs {exc.name or module}, which is not installed", hint=hint) from exc
