"""Work done in a forked child beside this process's own: its result, its failures, and the parent's."""

from __future__ import annotations

import os
import sys
import threading
import time

import pytest

from vocabrisk.model import forked

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="the platform cannot fork")


@pytest.fixture
def forkable(monkeypatch):
    """Forking allowed although the test process has imported tokenizers (its warning is harmless here)."""
    monkeypatch.setattr(forked, "can_fork", lambda: True)


@needs_fork
def test_the_child_s_bytes_come_back_once_the_parent_s_work_is_done(forkable):
    done = []
    result = forked.run_beside(lambda: str(os.getpid()).encode() * 100_000, lambda: done.append(os.getpid()))
    child = int(result[: len(result) // 100_000])
    assert done == [os.getpid()] and child != os.getpid()
    assert len(result) == len(str(child)) * 100_000  # more than a pipe holds: read while the child writes


@needs_fork
def test_a_failing_child_gives_none_and_the_caller_does_the_work(forkable):
    def fails() -> bytes:
        raise ValueError("in the child")

    assert forked.run_beside(fails, lambda: None) is None


@needs_fork
def test_the_parent_s_error_propagates_and_stops_the_child(forkable):
    def sleeps() -> bytes:
        time.sleep(60)
        return b""

    def fails() -> None:
        raise KeyError("in the parent")

    started = time.perf_counter()
    with pytest.raises(KeyError, match="in the parent"):
        forked.run_beside(sleeps, fails)
    assert time.perf_counter() - started < 30  # the child is killed, not waited for


def test_without_fork_nothing_runs(monkeypatch):
    monkeypatch.setattr(forked, "can_fork", lambda: False)
    ran = []
    assert forked.run_beside(lambda: b"x", lambda: ran.append(1)) is None
    assert ran == []


def test_forking_is_refused_where_it_is_unsafe(monkeypatch):
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setitem(sys.modules, "tokenizers", object())
    assert not forked.can_fork()  # its thread pool would warn in the child
    monkeypatch.delitem(sys.modules, "tokenizers")
    assert forked.can_fork() == sys.platform.startswith("linux")
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    assert not forked.can_fork()  # another thread's locks could be held in the child
