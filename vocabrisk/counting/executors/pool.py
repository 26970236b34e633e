"""Count units of shards in worker processes on this machine, retrying a unit whose worker dies.

A small pool of our own rather than `concurrent.futures`: the parent must know which unit a
dead worker held (a ProcessPoolExecutor breaks as a whole and cannot say), so each worker
counts one unit at a time and the parent watches its socket, which reads as closed the
moment the worker dies, however it dies.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator, Sequence
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING

from vocabrisk.counting.executors.shards import ShardQueue, ShardResult, Unit, UserFailure
from vocabrisk.counting.executors.work import THREAD_VARIABLES, CountJob

if TYPE_CHECKING:
    from vocabrisk.counting.executors.progress import ScanProgress

_STOP_SECONDS = 5
# The worker imports vocabrisk from where this process does: it gets this process's sys.path.
_BOOT = "import sys; sys.path[:] = sys.argv[2:]; from vocabrisk.counting.executors.worker import main; main()"


def count_in_processes(
    job: CountJob, units: Sequence[Unit], workers: int, attempts: int, progress: ScanProgress | None
) -> Iterator[list[ShardResult]]:
    """The results of each of `units` as the workers finish them (in no fixed order)."""
    threads = max(1, (os.cpu_count() or 1) // workers)
    queue = ShardQueue(units, job.vocab_size, attempts)
    pool = [_Worker(job, threads) for _ in range(workers)]
    try:
        while queue.todo or any(worker.unit for worker in pool):
            for index, worker in enumerate(pool):
                if worker.unit is None and queue.todo:
                    if worker.dead:
                        worker = pool[index] = _Worker(job, threads)
                    worker.give(queue.todo.popleft())
            busy = [worker for worker in pool if worker.unit]
            ready = wait([worker.conn for worker in busy])
            for worker in busy:
                if worker.conn not in ready:
                    continue
                unit, outcome = worker.unit, worker.receive(progress)
                if outcome is None:
                    continue
                worker.unit = None
                if isinstance(outcome, list):
                    yield outcome
                elif isinstance(outcome, UserFailure):
                    raise outcome.error()
                elif given_up := queue.failed(unit, outcome):
                    yield given_up
    finally:
        for worker in pool:
            worker.stop()


class _Worker:
    """One `vocabrisk.counting.executors.worker` process, counting the units it is given one at a time."""

    def __init__(self, job: CountJob, threads: int):
        ours, theirs = socket.socketpair()
        with theirs:
            self.process = subprocess.Popen(
                [sys.executable, "-c", _BOOT, str(theirs.fileno()), *sys.path],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                env=_worker_env(threads),
            )
        self.conn = Connection(ours.detach())
        self.unit: Unit | None = None
        self.dead = False
        self._send(job)

    def give(self, unit: Unit) -> None:
        self.unit = unit
        self._send(unit)

    def receive(self, progress: ScanProgress | None) -> list[ShardResult] | UserFailure | str | None:
        """The outcome of the unit, once the worker has sent it: its results, a user error, or a
        failure as a string (an exception it raised, or its death). None: only progress so far."""
        try:
            while self.conn.poll():
                kind, *payload = self.conn.recv()
                if kind != "progress":
                    return payload[0]
                if progress:
                    raw_bytes, documents, tokens = payload
                    progress.advance(raw_bytes)
                    progress.counted(documents, tokens)
        except (EOFError, OSError):
            self.dead = True
            return _death(self.process.wait())
        return None

    def stop(self) -> None:
        """Let an idle worker exit; end one that is still counting (the scan was abandoned)."""
        if self.unit is None and not self.dead:
            self._send(None)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(_STOP_SECONDS)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.conn.close()

    def _send(self, message: object) -> None:
        with contextlib.suppress(OSError):  # a dead worker's socket reads as closed: receive() reports it
            self.conn.send(message)


def _worker_env(threads: int) -> dict[str, str]:
    """A share of the cores for the worker's engines, unless the user set their thread counts."""
    return {**os.environ, **{name: os.environ.get(name, str(threads)) for name in THREAD_VARIABLES}}


def _death(returncode: int) -> str:
    if returncode < 0:
        return f"its worker process was killed by {signal.Signals(-returncode).name}"
    return f"its worker process exited with status {returncode}"
