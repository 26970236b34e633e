"""Write report files whole or not at all.

A CI step that uploads a report, or a browser that reloads one, must never read half a
file: text goes to a temporary file beside the target and is renamed over it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from vocabrisk.errors import VocabriskError
from vocabrisk.outputs import umask_mode


def write_text_atomic(path: Path | str, text: str) -> Path:
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, staging = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _cannot_write(path, exc) from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as file:
            file.write(text)
        os.chmod(staging, umask_mode())
        os.replace(staging, path)
    except OSError as exc:
        Path(staging).unlink(missing_ok=True)
        raise _cannot_write(path, exc) from exc
    except BaseException:
        Path(staging).unlink(missing_ok=True)
        raise
    return path


def _cannot_write(path: Path, exc: OSError) -> VocabriskError:
    return VocabriskError(f"{path}: cannot write the report ({exc.strerror or exc})", hint="choose a writable path")
