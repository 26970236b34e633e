"""Where results go: checked before a long run starts, written whole, created with the user's permissions.

A scan can run for hours; finding only at its end that `--out` is read-only, or that it
would silently replace the baseline a gate compares with, wastes the run. So every output
path is checked first, by creating and removing a probe file where the output will go (the
only test that holds for root, network file systems and read-only mounts alike). Folders and
files are created with the modes the umask gives, like any other tool's output, not the
private 0700/0600 of temporary files they are staged in.

Every file and folder vocabrisk writes for later reading (profiles, reports, checkpoints,
caches) is written whole or not at all: staged under a hidden temporary name beside its
target and renamed over it, so that a reader, a resumed scan or a killed process never meets
half of one (`atomic_file`, `write_atomic`, `replace_files`); several files one command writes together
(a gate's reports) are staged first and renamed only once all are whole (`write_all`).
"""

from __future__ import annotations

import errno
import json
import math
import os
import shutil
import tempfile
from collections.abc import Collection, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO

from vocabrisk.errors import VocabriskError


class OutputError(VocabriskError):
    """An output path cannot be written, or writing it would destroy something."""


NON_FINITE_WHY = (
    "JSON has no NaN or infinity (strict readers reject them): these numbers came out non-finite and are "
    "written as null"
)


def json_text(data: object, **options) -> str:
    """DATA as strict JSON (`json.dumps` with OPTIONS and allow_nan=False), every report's and profile's.

    A non-finite float becomes null, and where DATA is an object it says which under `non_finite`
    (`values`: path and value, `why`), so that no reader meets an invalid `NaN` nor a silent gap.

    >>> data = json.loads(json_text({"score": float("nan"), "rows": [1.5, float("inf")]}))
    >>> data["score"], data["rows"], data["non_finite"]["values"]
    (None, [1.5, None], {'score': 'nan', 'rows[1]': 'inf'})
    """
    try:  # the common case, every value finite: one pass in C (a 2 MB profile.json: 0.09 -> 0.05 s)
        return json.dumps(data, allow_nan=False, **options)
    except ValueError:  # "Out of range float values": find them, by path
        pass
    replaced: dict[str, str] = {}

    def clean(value: object, path: str) -> object:
        if isinstance(value, float) and not math.isfinite(value):
            replaced[path or "(the value)"] = str(value)
            return None
        if isinstance(value, dict):
            return {k: clean(v, f"{path}.{k}" if path else str(k)) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [clean(v, f"{path}[{i}]") for i, v in enumerate(value)]
        return value

    cleaned = clean(data, "")
    if replaced and isinstance(cleaned, dict):
        cleaned["non_finite"] = {"values": replaced, "why": NON_FINITE_WHY}
    return json.dumps(cleaned, allow_nan=False, **options)


def umask_mode(base: int = 0o666) -> int:
    """`base` (0o666 for files, 0o777 for folders) less the process's umask."""
    mask = os.umask(0)
    os.umask(mask)
    return base & ~mask


@contextmanager
def atomic_file(path: Path | str, text: bool = False, sync: bool = False) -> Iterator[IO]:
    """A file (binary, or UTF-8 `text` with "\\n" line ends) that appears at `path` only once whole.

    It is written under a hidden temporary name in the same folder (created if missing),
    flushed to disk with `sync` (for files a run resumes from after a crash), given the
    umask's mode and renamed over `path`; on any error the temporary file is removed and
    `path` is left as it was. OSError propagates.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, staging = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        opened = os.fdopen(fd, "w", encoding="utf-8", newline="\n") if text else os.fdopen(fd, "wb")
        with opened as file:
            yield file
            if sync:
                file.flush()
                os.fsync(file.fileno())
        os.chmod(staging, umask_mode())
        os.replace(staging, path)
    except BaseException:
        Path(staging).unlink(missing_ok=True)
        raise


_CAUSES = {  # errno -> what a user can do about it
    errno.ENOSPC: "free space on that disk, or choose a path on another",
    errno.EDQUOT: "free space within your quota, or choose a path on another disk",
    errno.EROFS: "the file system is read-only: choose a writable path",
    errno.EACCES: "choose a path you can write, or fix the folder's permissions",
    errno.EPERM: "choose a path you can write, or fix the folder's permissions",
}


def output_error(path: Path | str, what: str, exc: OSError, then: str | None = None) -> OutputError:
    """The OutputError for an OSError met writing WHAT at PATH: the path, the cause, what to do (and THEN).

    Nothing was replaced: outputs are staged and renamed whole (`atomic_file`, `replace_files`)."""
    cause = os.strerror(exc.errno) if exc.errno else exc.strerror or str(exc)  # not a library's own wording
    hint = _CAUSES.get(exc.errno or 0, "choose a writable path")
    return OutputError(
        f"{path}: cannot write the {what} ({cause}); nothing there was replaced",
        hint=f"{hint}; then {then}" if then else hint,
    )


def write_atomic(path: Path | str, content: str | bytes, what: str = "file") -> Path:
    """Write `content` to `path` whole or not at all (`atomic_file`); OutputError naming `what` if it cannot."""
    write_all({path: content}, what)
    return Path(path)


def write_all(contents: Mapping[Path | str, str | bytes], what: str = "file") -> None:
    """Write every file of CONTENTS, or none: each is staged (and flushed, so that a full disk shows here),
    and only once all are staged are they renamed into place. OutputError names the file that failed."""
    failed: Path | str | None = None
    try:
        with ExitStack() as stack:  # closing it renames the staged files: that needs no space
            for failed, content in contents.items():
                file = stack.enter_context(atomic_file(failed, text=isinstance(content, str)))
                file.write(content)
                file.flush()
            failed = None
    except OSError as exc:
        raise output_error(failed or exc.filename2 or next(iter(contents)), what, exc) from exc


@contextmanager
def replace_files(folder: Path | str, own: Collection[str], index: str) -> Iterator[Path]:
    """A staging folder whose files, once the block completes, replace FOLDER's OWN files; no other file is touched.

    The staging folder is hidden beside FOLDER, with the umask's mode. A new FOLDER is the staging folder renamed
    into place, whole. Into an existing one, INDEX (the file that makes the folder what it is, e.g. a profile's
    profile.json) is removed first, every other staged file renamed over its namesake (each rename atomic), the
    OWN files not staged this time deleted, and INDEX renamed in last: a reader finds the old files, no INDEX, or
    the new files, never the new INDEX beside old files. A user's own files there (notes, a .gitkeep) stay. On any
    error in the block the staging folder is deleted and FOLDER left as it was.
    """
    path = Path(folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        staging.chmod(umask_mode(0o777))
        yield staging
        if not path.exists():
            staging.rename(path)
            return
        staged = {p.name for p in staging.iterdir()}
        (path / index).unlink(missing_ok=True)
        for name in sorted(staged - {index}):
            os.replace(staging / name, path / name)
        for name in set(own) - staged:
            (path / name).unlink(missing_ok=True)
        os.replace(staging / index, path / index)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


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
    # an existing folder is written into (its files replaced), so it must take new files too
    for where in (parent, path) if folder and path.is_dir() else (parent,):
        try:
            if not where.is_dir():
                raise NotADirectoryError(20, "not a folder", str(where))
            fd, probe = tempfile.mkstemp(prefix=".vocabrisk-probe-", dir=where)
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            raise OutputError(
                f"{path}: cannot write the {what} here ({exc.strerror or exc}: {where})",
                hint="choose a writable path, or fix the folder's permissions",
            ) from exc
