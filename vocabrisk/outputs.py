"""Where results go: checked before a long run starts, created with the user's permissions.

A scan can run for hours; finding only at its end that `--out` is read-only, or that it
would silently replace the baseline a gate compares with, wastes the run. So every output
path is checked first, by creating and removing a probe file where the output will go (the
only test that holds for root, network file systems and read-only mounts alike). Folders and
files are created with the modes the umask gives, like any other tool's output, not the
private 0700/0600 of temporary files they are staged in.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from vocabrisk.errors import VocabriskError


class OutputError(VocabriskError):
    """An output path cannot be written, or writing it would destroy something."""


def umask_mode(base: int = 0o666) -> int:
    """`base` (0o666 for files, 0o777 for folders) less the process's umask."""
    mask = os.umask(0)
    os.umask(mask)
    return base & ~mask


def check_writable(path: Path | str, what: str = "report", folder: bool = False) -> None:
    """Raise OutputError unless a file (or `folder`) can be created at `path`, missing parents too."""
    path = Path(path)
    if path.is_dir() and not folder:
        raise OutputError(f"{path}: is a folder; the {what} is a file", hint="name a file path")
    parent = path.parent
    while not parent.exists():
        if parent == parent.parent:
            break
        parent = parent.parent
    try:
        if not parent.is_dir():
            raise NotADirectoryError(20, "not a folder", str(parent))
        fd, probe = tempfile.mkstemp(prefix=".vocabrisk-probe-", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputError(
            f"{path}: cannot write the {what} here ({exc.strerror or exc}: {parent})",
            hint="choose a writable path, or fix the folder's permissions",
        ) from exc


def check_profile_target(folder: Path | str, force: bool) -> None:
    """Refuse, before any input is read, to write a profile where it cannot go or would replace one.

    An existing profile (a gate's baseline, say) is replaced only with `force`; a folder
    holding anything else is never replaced.
    """
    from vocabrisk.profile import is_profile

    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"{folder}: exists and is a file, not a profile folder", hint="choose another --out")
    if is_profile(folder) and not force:
        raise OutputError(
            f"{folder}: a saved profile is already there; refusing to overwrite it",
            hint="add --force to replace it, or choose another --out",
        )
    if folder.is_dir() and not is_profile(folder) and any(folder.iterdir()):
        raise OutputError(
            f"{folder}: exists and is not a vocabrisk profile; refusing to overwrite it",
            hint="choose an empty or new --out folder",
        )
    check_writable(folder, "profile folder", folder=True)
