"""A local worker process, started by the pool as a fresh interpreter running `main()`.

It is a fresh interpreter rather than a multiprocessing child, so it never re-imports the
caller's main script (which a spawned child does, and which fails in scripts without an
`if __name__ == "__main__"` guard) and never inherits a forked tokenizer thread pool.
It talks to the pool over the socket FD: the job first, then one unit of shards at a time; it
answers with progress messages and one outcome per unit, and exits when the pool closes
the socket or sends None.
"""

from __future__ import annotations

import contextlib
import signal
import sys
from multiprocessing.connection import Connection

from vocabrisk.counting.executors.work import count_in_worker


def serve(conn: Connection) -> None:
    job = conn.recv()
    pending_bytes = 0

    def on_bytes(count: int) -> None:
        nonlocal pending_bytes
        pending_bytes += count

    def on_batch(counts) -> None:
        nonlocal pending_bytes
        sent, pending_bytes = pending_bytes, 0
        conn.send(("progress", sent, counts.documents, counts.tokens))

    while True:
        try:
            unit = conn.recv()
        except EOFError:
            return
        if unit is None:
            return
        try:
            outcome = ("done", count_in_worker(job, unit, on_bytes, on_batch))
        except Exception as exc:  # reported to the pool, which retries the unit
            outcome = ("failed", f"{type(exc).__name__}: {exc}")
        conn.send(("progress", pending_bytes, 0, 0))  # the end of the unit, read after its last batch
        pending_bytes = 0
        conn.send(outcome)


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the pool's to handle; it ends the workers
    # A closed socket means the pool is gone: nothing is left to report to.
    with Connection(int(sys.argv[1])) as conn, contextlib.suppress(EOFError, BrokenPipeError, ConnectionResetError):
        serve(conn)
