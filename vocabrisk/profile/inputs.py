"""What the inputs of a command are: a saved profile, read as it was saved, or a corpus to count.

Every command that takes inputs (scan, rank, gate, a --reference or --mix corpus) decides it
here, the same way: one folder holding a saved profile is that profile; anything else (files,
folders, globs, URLs, stdin) is a corpus.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from vocabrisk.errors import InputError
from vocabrisk.profile.profile import Profile, is_profile


def saved_profile(inputs: str | Sequence[str]) -> str | None:
    """The folder of the saved profile INPUTS name, or None when they name a corpus."""
    paths = [inputs] if isinstance(inputs, str) else list(inputs)
    return paths[0] if len(paths) == 1 and is_profile(paths[0]) else None


def refuse_profiles(inputs: object) -> None:
    """Raise InputError when a corpus's INPUTS name a saved profile's folder: its files are no corpus."""
    given = inputs if isinstance(inputs, (list, tuple)) else [inputs]
    for path in given:
        if isinstance(path, (str, os.PathLike)) and is_profile(path):
            raise InputError(
                f"{os.fspath(path)} is a saved vocabrisk profile, not a corpus to count",
                hint="a saved profile is read on its own (vocabrisk gate PROFILE, vocabrisk report PROFILE) or as"
                " the one --baseline, --mix or --reference value, and in Python with Profile.load(PROFILE);"
                " to count the corpus it was made from, pass that corpus's files",
            )


def profile_or_corpus(inputs: str | Sequence[str], count: Callable[..., Profile]) -> Profile:
    """The saved profile INPUTS name, loaded and not rescanned; else COUNT(INPUTS), the corpus counted."""
    folder = saved_profile(inputs)
    return Profile.load(folder) if folder else count(inputs)
