"""Errors a user can act on.

Every error raised for bad input or a bad model names what was wrong, where (file and
line or record when known) and what to do. The CLI prints them without a traceback and
exits with status 2.
"""

from __future__ import annotations


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
