"""Work done in a forked child while this process does something else: a second core for a second job.

A thread cannot overlap Python work with `tokenizers`' `Tokenizer.from_file`, which holds
the GIL for the whole load (seconds for a 150k-token vocabulary). A forked child can, and
starts in milliseconds with everything this process has imported, where a fresh interpreter
would spend half a second importing numpy and vocabrisk again. It is used only where forking
is safe: on Linux (macOS system libraries, numpy's Accelerate among them, are not safe to use
in a forked child; Windows cannot fork), where this process runs no other Python thread (whose
locks the child could inherit held), and before `tokenizers` is imported (its thread pool
warns in a forked child).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable


def can_fork() -> bool:
    return sys.platform.startswith("linux") and threading.active_count() == 1 and "tokenizers" not in sys.modules


def run_beside(work: Callable[[], bytes], meanwhile: Callable[[], object]) -> bytes | None:
    """`work()` run in a forked child while `meanwhile()` runs here: the bytes it returned, or None
    where no child could be forked (`meanwhile` then has not run) or the child failed in any way
    (the caller then does the work itself, and meets its error as it would have).

    An exception of `meanwhile` propagates, once the child is stopped.
    """
    if not can_fork():
        return None
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns, so that nothing of the parent's runs twice
        os.close(read_end)
        status = 1
        try:
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(work())
            status = 0
        finally:
            os._exit(status)  # skips the parent's atexit handlers and unflushed output
    os.close(write_end)
    done = False
    try:
        meanwhile()
        with os.fdopen(read_end, "rb") as pipe:
            read_end = None
            result = pipe.read()
        done = True
    finally:
        if read_end is not None:
            os.close(read_end)
        if not done:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    return result if os.waitstatus_to_exitcode(status) == 0 else None
