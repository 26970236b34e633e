"""The user's cache folder: facts that cost seconds to compute and never change for one input.

Entries live under `$XDG_CACHE_HOME/vocabrisk` (default `~/.cache/vocabrisk`), one file per
key, and each records the vocabrisk version that wrote it: a file from another version is
a miss, recomputed and replaced. Files are written beside their final name and renamed over
it, so a process never reads half of one, and processes writing the same entry at once each
leave a whole file. A cache that cannot be read or written (a read-only home, a full disk)
only costs the time to compute again: it never fails a command.
"""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import numpy as np

from vocabrisk._version import __version__
from vocabrisk.storage.outputs import atomic_file

VERSION_KEY = "__vocabrisk_version__"


def cache_folder() -> Path:
    """Where vocabrisk caches, honouring XDG_CACHE_HOME."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "vocabrisk"


def entry_path(kind: str, key: str) -> Path:
    return cache_folder() / kind / f"{key}.npz"


def load_arrays(kind: str, key: str) -> dict[str, np.ndarray] | None:
    """The arrays stored under `key` by this vocabrisk version, or None (absent, stale or unreadable)."""
    return entry_arrays(entry_path(kind, key))


def store_arrays(kind: str, key: str, arrays: dict[str, np.ndarray]) -> Path | None:
    """Save `arrays` under `key`, atomically; None where the cache folder is not writable."""
    return store_entry(kind, key, entry_bytes(arrays))


def entry_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """`arrays` as the bytes of a cache entry of this version (a process that made them can hand them over)."""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays, **{VERSION_KEY: np.array(__version__)})
    return buffer.getvalue()


def entry_arrays(entry: Path | bytes) -> dict[str, np.ndarray] | None:
    """The arrays of a cache entry (a file, or its bytes) written by this version, else None."""
    try:
        with np.load(io.BytesIO(entry) if isinstance(entry, bytes) else entry, allow_pickle=False) as stored:
            arrays = {name: stored[name] for name in stored.files}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile):  # absent, truncated, not an npz
        return None
    version = arrays.pop(VERSION_KEY, None)
    return arrays if version is not None and str(version) == __version__ else None


def store_entry(kind: str, key: str, entry: bytes) -> Path | None:
    """Save an entry's bytes under `key`, atomically; None where the cache folder is not writable."""
    path = entry_path(kind, key)
    try:
        with atomic_file(path) as file:
            file.write(entry)
    except OSError:
        return None
    return path
