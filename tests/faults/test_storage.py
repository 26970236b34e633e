"""An object store that fails part-way: the scan reads on where it stopped, or skips the file by name (issue 32).

`flaky://` is a real fsspec filesystem over local files whose reads fail on the calls a test plans
(a reset connection, as an S3 or HTTP read meets one), registered with fsspec as any backend is.
"""

from __future__ import annotations

import errno
import json
import time
from typing import ClassVar

import fsspec
import numpy as np
import pytest
from fsspec.implementations.local import LocalFileSystem
from helpers import SAMPLES, run_cli

from vocabrisk import scan
from vocabrisk.corpus import remote


def reset() -> Exception:
    return ConnectionResetError(errno.ECONNRESET, "Connection reset by peer")


class FlakyFile:
    """A local file whose read calls fail as the plan says: `fails`, a set of call numbers or "from N" (every
    call from N), each raising what `error()` gives."""

    def __init__(self, file, plan: dict):
        self._file, self._plan = file, plan

    def read(self, size=-1):
        self._plan["calls"] += 1
        call, fails = self._plan["calls"], self._plan["fails"]
        if (call in fails) if isinstance(fails, set) else call >= fails:
            raise self._plan["error"]()
        return self._file.read(size)

    def __getattr__(self, name):
        return getattr(self._file, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._file.close()


class Flaky(LocalFileSystem):
    protocol = ("flaky",)
    plan: ClassVar[dict] = {"calls": 0, "fails": set(), "error": reset}

    @classmethod
    def _strip_protocol(cls, path):
        return super()._strip_protocol(str(path).removeprefix("flaky://"))

    def unstrip_protocol(self, name):
        return f"flaky://{name}"

    def _open(self, path, mode="rb", **kwargs):
        return FlakyFile(super()._open(path, mode, **kwargs), self.plan)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """3 MB of JSON Lines: several reads of the 1 MiB buffer, so that a failure falls part-way."""
    lines = (SAMPLES / "python-code.jsonl").read_text(encoding="utf-8")
    path = tmp_path_factory.mktemp("store") / "code.jsonl"
    path.write_text(lines * (3_000_000 // len(lines.encode()) + 1), encoding="utf-8")
    return path


@pytest.fixture
def flaky(monkeypatch, corpus):
    fsspec.register_implementation("flaky", Flaky, clobber=True)
    monkeypatch.setattr(remote, "RETRY_SECONDS", 0.001)

    def plan(fails, error=reset) -> str:
        Flaky.plan.update(calls=0, fails=fails, error=error)
        return f"flaky://{corpus}"

    return plan


def stall() -> Exception:
    """A read that hangs until the store's client gives up on it: botocore and aiohttp raise an OSError."""
    time.sleep(0.2)
    return TimeoutError(errno.ETIMEDOUT, "Read timed out")


def cut_short() -> Exception:
    """A body that ends before its length, as aiohttp (fsspec's HTTP and GCS client) reports it: not an OSError."""
    aiohttp = pytest.importorskip("aiohttp")
    return aiohttp.ClientPayloadError("Response payload is not completed")


@pytest.mark.parametrize("error", [reset, stall, cut_short])
def test_a_read_that_fails_part_way_is_read_on_from_where_it_stopped(flaky, error):
    url = flaky({2, 3}, error)  # the second and third reads fail: twice after the first chunk
    profile = scan([url], "demo")
    local = scan([url.removeprefix("flaky://")], "demo")
    np.testing.assert_array_equal(profile.counts.counts, local.counts.counts)
    assert profile.documents == local.documents and not profile.skipped
    assert Flaky.plan["calls"] > 3  # it did fail, and went on


def test_a_read_that_keeps_failing_is_a_named_skip_the_gate_fails_on(flaky):
    url = flaky(2)  # every read from the second on fails: the first MiB is counted, the rest is skipped
    result = run_cli("gate", url, "--format", "json")
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    (check,) = [c for c in report["checks"] if c["rule"] == "max-skipped-share"]
    assert report["summary"]["documents"] > 0 and not check["passed"] and 0.5 < check["value"] < 0.8
    skipped = report["summary"]["skipped_examples"][0]
    assert skipped["source"] == url
    assert f"reading failed {remote.READ_ATTEMPTS} times from byte" in skipped["reason"]
    assert "Connection reset by peer" in skipped["reason"]
    assert "Traceback" not in result.output


def test_a_missing_object_is_not_retried(flaky):
    flaky(set())
    result = run_cli("scan", "flaky:///no/such/file.txt")
    assert result.exit_code == 2 and "input not found: flaky:///no/such/file.txt" in result.output
