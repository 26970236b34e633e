"""Optional dependencies: imported where a feature needs one, and named with the extra that installs it.

A missing one is a `MissingExtra` (a VocabriskError, so the command line prints it plainly, and an
ImportError, so code that tries an import and falls back still catches it), never a bare
ModuleNotFoundError that leaves the user to guess which package and which extra.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from vocabrisk.errors import VocabriskError


class MissingExtra(VocabriskError, ImportError):
    """A feature needs a package that is not installed; the hint names the extra that installs it."""


def require(module: str, extra: str, what: str, otherwise: str = "") -> ModuleType:
    """MODULE imported, or MissingExtra saying that WHAT needs it and `pip install 'vocabrisk[EXTRA]'` (or
    OTHERWISE, what else would do).

    >>> require("json", "report", "this doctest").__name__
    'json'
    >>> require("no_such_module_here", "report", "this doctest")
    Traceback (most recent call last):
    ...
    vocabrisk.extras.MissingExtra: this doctest needs no_such_module_here, which is not installed
      hint: pip install 'vocabrisk[report]'
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        install = f"pip install 'vocabrisk[{extra}]'"
        hint = f"{install}, or {otherwise}" if otherwise else install
        raise MissingExtra(f"{what} needs {exc.name or module}, which is not installed", hint=hint) from exc
