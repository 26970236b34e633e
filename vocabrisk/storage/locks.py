"""One writer per output: a second command writing the same --out or --checkpoint is refused, not mixed in.

The lock is filelock's OS lock on a file named after the output's absolute path, kept in the
machine's temporary folder rather than beside the output (no litter in a user's folder). An
OS lock ends with its process, however that ends, so a killed scan leaves no stale lock to clear.
It guards commands on one machine, whichever users run them (the folder is shared as /tmp is, each lock
file readable and writable by all); two machines writing one shared folder are not told apart (file
systems lock across machines unreliably).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from filelock import FileLock, Timeout

from vocabrisk.storage.outputs import OutputError


def lock_path(output: Path | str) -> Path:
    key = hashlib.blake2b(os.fsencode(Path(output).resolve()), digest_size=12).hexdigest()
    return Path(tempfile.gettempdir()) / "vocabrisk-locks" / f"{key}.lock"


def hold(output: Path | str, what: str) -> FileLock:
    """Take OUTPUT's lock for this process, or OutputError if another command holds it; release() it when done."""
    path = lock_path(output)
    try:
        _shared_folder(path.parent)
        lock = FileLock(path, timeout=0, mode=0o666)  # every user's commands can take it, and so wait on one another
        lock.acquire()
    except Timeout:
        raise OutputError(
            f"{output}: another vocabrisk command is writing this {what} now; refusing to write it too",
            hint="wait until that command ends, or choose another path",
        ) from None
    except OSError as exc:
        raise OutputError(
            f"{output}: cannot take the lock that keeps a second command from writing this {what} "
            f"({exc.strerror or exc}: {path})",
            hint=f"make {path.parent} writable by all (chmod 1777, as /tmp is), or set TMPDIR to a folder of yours",
        ) from exc
    return lock


def _shared_folder(folder: Path) -> None:
    """FOLDER, made if missing and, where this user owns it, shared as /tmp is: any user adds locks, none removes
    another's."""
    folder.mkdir(parents=True, exist_ok=True)
    if folder.stat().st_mode & 0o1777 != 0o1777 and folder.stat().st_uid == os.geteuid():
        folder.chmod(0o1777)
