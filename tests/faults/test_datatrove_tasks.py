"""A datatrove task killed mid-run and run again, and a merge run twice: the profile a scan gives (issue 32).

The counting pipeline runs in a process of its own, as a Slurm or local job does; one of its tasks sends
itself SIGKILL part-way through its documents (no handler, no cleanup: what the OOM killer or a preempted
node does). Running the same pipeline again, datatrove reruns only the tasks it has not marked completed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import SAMPLES, assert_same_profile, digest, run_cli

pytest.importorskip("datatrove")
pytest.importorskip("orjson", reason="datatrove's JsonlReader reads with orjson")

from vocabrisk.integrations.datatrove import ProfileMerger
from vocabrisk.storage.outputs import OutputError

PIPELINE = textwrap.dedent("""
    import os, signal, sys
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.base import PipelineStep
    from datatrove.pipeline.readers import JsonlReader
    from vocabrisk.integrations.datatrove import ProfileCounter

    corpus, partials, logs, marker = sys.argv[1:]

    class KilledOnce(PipelineStep):
        name = "killed once"

        def run(self, data, rank=0, world_size=1):
            for number, document in enumerate(data):
                if rank == 1 and number == 5 and not os.path.exists(marker):
                    open(marker, "w").close()
                    os.kill(os.getpid(), signal.SIGKILL)
                yield document

    steps = [JsonlReader(corpus), KilledOnce(), ProfileCounter(partials, model="demo")]
    LocalPipelineExecutor(steps, tasks=3, workers=1, logging_dir=logs).run()
""")


def run_job(job: list[str], log: Path) -> tuple[int, str]:
    """Run JOB as a scheduler does, in a process group of its own, and end the group with it: datatrove's
    manager process outlives a killed executor, as it does on a cluster until the job's cgroup is killed."""
    with open(log, "wb") as output:
        process = subprocess.Popen(job, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = process.wait(timeout=300)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
    return code, log.read_text(errors="replace")


@pytest.fixture
def corpus(tmp_path):
    """The Python sample cut into three JSON Lines files: one per task."""
    lines = (SAMPLES / "python-code.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    folder = tmp_path / "corpus"
    folder.mkdir()
    for part in range(3):
        (folder / f"part-{part}.jsonl").write_text("".join(lines[part::3]), encoding="utf-8")
    return folder


def test_a_task_killed_mid_run_and_run_again_gives_the_scans_profile(corpus, tmp_path):
    assert run_cli("scan", str(corpus), "--out", str(tmp_path / "scanned"), "-q").exit_code == 0
    partials, logs = tmp_path / "partials", tmp_path / "logs"
    job = [sys.executable, "-c", PIPELINE, str(corpus), str(partials), str(logs), str(tmp_path / "killed")]
    code, said = run_job(job, tmp_path / "first.log")
    assert code == -signal.SIGKILL, said
    assert sorted(p.name for p in partials.iterdir()) == ["00000.npz"]  # task 1 died before writing: no cut file
    code, said = run_job(job, tmp_path / "again.log")
    assert code == 0, said
    assert "Skipping 1 already completed tasks" in said  # task 0 is not counted twice
    merge(partials, tmp_path / "merged")
    assert_same_profile(tmp_path / "merged", tmp_path / "scanned")


def merge(partials, out, force: bool = False) -> None:
    list(ProfileMerger(str(partials), str(out), force=force).run())


def test_a_merge_run_twice_refuses_to_replace_its_profile_unless_forced_and_then_saves_the_same(corpus, tmp_path):
    partials = tmp_path / "partials"
    job = [sys.executable, "-c", PIPELINE, str(corpus), str(partials), str(tmp_path / "logs"), str(tmp_path / "x")]
    (tmp_path / "x").touch()  # no task is killed
    assert run_job(job, tmp_path / "job.log")[0] == 0
    merge(partials, tmp_path / "profile")
    shutil.copytree(tmp_path / "profile", tmp_path / "first")
    first = digest(tmp_path / "profile")
    with pytest.raises(OutputError, match="a saved profile is already there; refusing to overwrite it"):
        merge(partials, tmp_path / "profile")
    assert digest(tmp_path / "profile") == first  # untouched
    merge(partials, tmp_path / "profile", force=True)
    assert_same_profile(tmp_path / "profile", tmp_path / "first")


def test_a_task_that_meets_a_full_disk_leaves_no_partial_cut_short(corpus, tmp_path, small_disk):
    assert run_cli("scan", str(corpus), "--out", str(tmp_path / "scanned"), "-q").exit_code == 0
    partials = small_disk.root / "partials"
    job = [sys.executable, "-c", PIPELINE, str(corpus), str(partials), str(tmp_path / "logs"), str(tmp_path / "x")]
    (tmp_path / "x").touch()  # no task is killed
    small_disk.fill(leave=1024)  # room for part of a partial (a few KB since v7 counts no 2-grams), not a whole one
    code, said = run_job(job, tmp_path / "full.log")
    assert code != 0 and "cannot write the partial profile (No space left on device)" in said, said
    assert not [p.name for p in partials.rglob("*") if p.is_file()]  # no partial of the task that failed, nor litter
    small_disk.empty()
    code, said = run_job(job, tmp_path / "again.log")
    assert code == 0, said
    merge(partials, tmp_path / "merged")
    assert_same_profile(tmp_path / "merged", tmp_path / "scanned")
