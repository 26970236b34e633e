"""The datatrove steps: a pipeline's documents counted as they flow, a partial per task, merged into the
profile `vocabrisk scan` gives for the same files, byte for byte, whatever the number of tasks and their order.

Real corpora from ../shared/data (skipped where absent), cut to a few hundred kB and written as JSON Lines
(datatrove has no reader of whole text files), and a CSV file read where it lies, through datatrove's own
readers, writers and executors.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 reads TOML through the backport
    import tomli as tomllib

pytest.importorskip("datatrove")
pytest.importorskip("orjson", reason="datatrove's JsonlReader reads with orjson")

from datatrove.data import Document
from datatrove.executor import LocalPipelineExecutor
from datatrove.io import get_datafolder
from datatrove.pipeline.readers import CSVReader, JsonlReader
from datatrove.pipeline.writers import JsonlWriter
from helpers import assert_same_profile

import vocabrisk
from vocabrisk import InputError, ModelError, SpecialTokenPolicy, TokenCounts
from vocabrisk.cli.commands import main
from vocabrisk.corpus.pieces import MAX_UNCUT_CHARS
from vocabrisk.counting.executors.checkpoint import write_counts
from vocabrisk.integrations.datatrove import ProfileCounter, ProfileMerger, merge_profile
from vocabrisk.integrations.partials import merge_partials

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_corpora"
BIN = str(Path(sys.executable).parent)  # where this environment's `vocabrisk` and datatrove's scripts live


@pytest.fixture(scope="module")
def corpus(shared_data, tmp_path_factory) -> Path:
    """Five JSON Lines files from five real corpora: one gzip-compressed, two in a folder whose name begins
    a file's beside it (a scan lists them first; datatrove after it), one a single document long enough
    to be counted in pieces."""
    root = tmp_path_factory.mktemp("corpus")
    corpora = shared_data / "corpora"
    (root / "code").mkdir()
    files = {
        "de-grimm.jsonl": paragraphs(corpora / "de-grimm" / "de-grimm.txt", 40_000),
        "en-shakespeare.jsonl.gz": paragraphs(corpora / "en-shakespeare" / "input.txt", 40_000),
        "code/lua.jsonl": paragraphs(corpora / "code-lua" / "lua_src_c.txt", 30_000),
        "code/sql.jsonl": paragraphs(corpora / "sql-postgres-regress" / "postgres15_regress_sql.txt", 30_000),
        "code-python.jsonl": paragraphs(corpora / "code-python-django" / "django_db_models_forms_py.txt", 30_000),
        "ja-manpages.jsonl": [(corpora / "ja-manpages" / "ja-manpages.txt").read_text(encoding="utf-8")[:600_000]],
    }
    for name, texts in files.items():
        lines = "".join(
            json.dumps({"text": t, "id": f"{name}#{i}"}, ensure_ascii=False) + "\n" for i, t in enumerate(texts)
        )
        data = lines.encode("utf-8")
        (root / name).write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return root


def paragraphs(path: Path, chars: int) -> list[str]:
    return [p for p in path.read_text(encoding="utf-8")[:chars].split("\n\n") if p.strip()]


@pytest.fixture(scope="module")
def scanned(corpus, tmp_path_factory) -> Path:
    """`vocabrisk scan` of the corpus folder, as a user runs it, saved."""
    out = tmp_path_factory.mktemp("scanned") / "profile"
    result = CliRunner().invoke(main, ["scan", str(corpus), "--model", "demo", "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    return out


def executor(pipeline: list, tasks: int, workers: int, logs: Path, depends=None) -> LocalPipelineExecutor:
    return LocalPipelineExecutor(pipeline, tasks=tasks, workers=workers, logging_dir=str(logs), depends=depends)


def test_a_four_task_pipeline_gives_the_profile_vocabrisk_scan_gives_and_passes_documents_on(corpus, scanned, tmp_path):
    count = executor(
        [
            JsonlReader(str(corpus)),
            ProfileCounter(str(tmp_path / "partials"), model="demo"),
            JsonlWriter(str(tmp_path / "out"), compression=None),
        ],
        tasks=4,
        workers=2,
        logs=tmp_path / "logs" / "count",
    )
    merge = executor(
        [ProfileMerger(str(tmp_path / "partials"), str(tmp_path / "profile"))], 1, 1, tmp_path / "logs" / "merge", count
    )
    merge.run()
    assert sorted(p.name for p in (tmp_path / "partials").iterdir()) == [f"0000{rank}.npz" for rank in range(4)]
    assert_same_profile(tmp_path / "profile", scanned)
    meta = json.loads((tmp_path / "profile" / "profile.json").read_text())
    assert [Path(s["path"]).relative_to(corpus).as_posix() for s in meta["sources"]] == [
        "code/lua.jsonl",
        "code/sql.jsonl",
        "code-python.jsonl",
        "de-grimm.jsonl",
        "en-shakespeare.jsonl.gz",
        "ja-manpages.jsonl",
    ]
    assert meta["sources"][4]["compression"] == "gzip" and meta["documents"] > 300

    def documents(records) -> list[tuple]:
        return sorted((d["id"], d["text"], json.dumps(d["metadata"], sort_keys=True)) for d in records)

    written = [json.loads(line) for path in (tmp_path / "out").iterdir() for line in path.read_text().splitlines()]
    read = [{"id": d.id, "text": d.text, "metadata": d.metadata} for d in JsonlReader(str(corpus)).run()]
    assert documents(written) == documents(read)  # every document, untouched, metadata and all


def test_the_number_of_tasks_their_order_and_a_remote_folder_do_not_change_the_profile(corpus, scanned, tmp_path):
    partials = f"memory://{tmp_path.name}/partials"  # an fsspec filesystem, not a local folder: the remote path
    counting = [JsonlReader(str(corpus)), ProfileCounter(partials, model="demo")]
    executor(counting, tasks=7, workers=1, logs=tmp_path / "logs").run()  # more tasks than files: some count nothing
    folder = get_datafolder(partials)
    assert len(folder.list_files()) == 7
    merge_profile(partials).save(tmp_path / "seven")
    assert_same_profile(tmp_path / "seven", scanned)

    blobs = [(name, folder.open(name, "rb").read()) for name in folder.list_files()]
    random.Random(3).shuffle(blobs)
    merge_partials(blobs).save(tmp_path / "shuffled")
    assert_same_profile(tmp_path / "shuffled", scanned)

    one = tmp_path / "one"
    executor([JsonlReader(str(corpus)), ProfileCounter(str(one), model="demo")], 1, 1, tmp_path / "logs-one").run()
    executor([ProfileMerger(str(one), f"memory://{tmp_path.name}/profile")], 1, 1, tmp_path / "logs-merge").run()
    saved = get_datafolder(f"memory://{tmp_path.name}/profile")
    for name in ("profile.json", "tokens.parquet", "old_text.npz"):
        (tmp_path / "uploaded").mkdir(exist_ok=True)
        (tmp_path / "uploaded" / name).write_bytes(saved.open(name, "rb").read())
    assert_same_profile(tmp_path / "uploaded", scanned)


def test_a_csv_file_read_where_it_lies_with_a_real_tokenizer(shared_data, tmp_path):
    folder = shared_data / "corpora" / "ko-chatbot"
    gpt2 = str(shared_data / "tokenizers" / "gpt2")
    counting = [
        CSVReader(str(folder), text_key="Q", glob_pattern="*.csv"),
        ProfileCounter(str(tmp_path / "partials"), model=gpt2, text_field="Q"),
    ]
    executor(counting, tasks=2, workers=1, logs=tmp_path / "logs").run()
    merge_profile(tmp_path / "partials").save(tmp_path / "profile")
    path = str(folder / "ChatbotData.csv")
    scan = ["scan", path, "--model", gpt2, "--text-field", "Q", "--out", str(tmp_path / "scanned"), "-q"]
    assert CliRunner().invoke(main, scan).exit_code == 0
    for name in ("profile.json", "tokens.parquet"):  # a tokenizer alone: no old text, no old_text.npz
        assert (tmp_path / "profile" / name).read_bytes() == (tmp_path / "scanned" / name).read_bytes(), name
    meta = json.loads((tmp_path / "profile" / "profile.json").read_text())
    assert meta["read_options"]["text_fields"] == ["Q"] and meta["documents"] > 10_000


def test_documents_it_cannot_count_are_skipped_as_a_scan_skips_them_and_still_passed_on(shared_data, tmp_path):
    texts = paragraphs(shared_data / "corpora" / "fr-manpages" / "fr-manpages.txt", 20_000)
    values = [*texts[:5], 42, "", "x" * (MAX_UNCUT_CHARS + 10), *texts[5:]]  # no place to cut the x's
    documents = [Document(text=v, id=f"doc-{i}", metadata={"file_path": "in-memory"}) for i, v in enumerate(values)]
    step = ProfileCounter(str(tmp_path / "partials"), model="demo")
    passed = list(step.run(iter(documents), rank=0, world_size=1))
    assert passed == documents and all(a is b for a, b in zip(passed, documents, strict=True))
    ours = merge_profile(tmp_path / "partials")
    theirs = vocabrisk.scan([values], "demo")  # the same values as a corpus in memory
    assert ours.counts == theirs.counts and ours.documents == len(texts)
    assert ours.skips == theirs.skips and ours.skips.records == 2
    reasons = [(e["locator"], e["reason"]) for e in ours.skipped_examples]
    assert reasons == [("document doc-5", "value is int, not a string"), ("document doc-7", reasons[1][1])]
    assert reasons[1][1] == theirs.skipped_examples[1]["reason"] and "cut" in reasons[1][1]
    assert ours.sources[0]["path"] == "in-memory" and ours.sources[0]["skipped"] == 2


def partials_of_a_run(folder: Path, texts: list[str], world_size: int, **counter) -> None:
    """WORLD_SIZE tasks' partials in FOLDER, task r counting every world_size-th text from r."""
    for rank in range(world_size):
        step = ProfileCounter(str(folder), **{"model": "demo", **counter})
        documents = (Document(text=t, id=str(i)) for i, t in enumerate(texts) if i % world_size == rank)
        list(step.run(documents, rank=rank, world_size=world_size))


def test_a_merge_refuses_partials_that_are_not_every_task_of_one_run(shared_data, tmp_path):
    texts = paragraphs(shared_data / "corpora" / "en-austen-pride" / "pride-and-prejudice.txt", 20_000)
    run = tmp_path / "run"
    partials_of_a_run(run, texts, world_size=3)
    merged = merge_profile(run)
    assert merged.documents == len(texts) and merged.sources[0]["path"] == "<pipeline>"  # no reader named a file

    (run / "00001.npz").rename(tmp_path / "kept.npz")
    with pytest.raises(InputError, match=r"2 of 3 tasks' partials are there \(missing: 00001.npz\)"):
        merge_profile(run)
    partials_of_a_run(tmp_path / "other", texts, world_size=2)
    (tmp_path / "other" / "00001.npz").rename(run / "00001.npz")
    with pytest.raises(InputError, match="runs with 3 and 2 tasks") as error:
        merge_profile(run)
    assert "folder of their own" in error.value.hint
    partials_of_a_run(tmp_path / "same-model", texts[::2], world_size=3)  # one model, other data (issue 32)
    (tmp_path / "same-model" / "00001.npz").rename(run / "00001.npz")
    with pytest.raises(InputError, match=r"00001\.npz is another run's partial: its task wrote it to .*same-model"):
        merge_profile(run)
    moved = tmp_path / "moved"
    shutil.copytree(tmp_path / "same-model", moved)  # a whole run's folder, moved: still one run
    shutil.copy(run / "00001.npz", moved / "00001.npz")
    assert merge_profile(moved).documents == len(texts[::2])
    (run / "00001.npz").write_bytes((tmp_path / "kept.npz").read_bytes()[:300])  # cut short
    with pytest.raises(InputError, match=r"00001\.npz: not a whole partial profile"):
        merge_profile(run)
    (tmp_path / "kept.npz").rename(run / "00001.npz")
    with pytest.raises(ModelError, match="another tokenizer"):
        merge_profile(run, str(shared_data / "tokenizers" / "gpt2"))

    partials_of_a_run(tmp_path / "eos", texts, world_size=3, policy=SpecialTokenPolicy(append_eos=True))
    shutil.copy(run / "00001.npz", tmp_path / "eos" / "00001.npz")
    with pytest.raises(InputError, match=r"counted differently \(policy\)"):
        merge_profile(tmp_path / "eos")

    shutil.copy(run / "00000.npz", run / "00007.npz")  # task 0's partial twice
    with pytest.raises(InputError, match=r"00000\.npz and .*00007\.npz are both task 0's partial"):
        merge_profile(run)
    write_counts(run / "00007.npz", TokenCounts.zeros(4096), {"format": "a checkpoint"})
    with pytest.raises(InputError, match=r"00007\.npz: not a partial profile"):
        merge_profile(run)


def test_vocabrisk_imports_no_datatrove_and_names_the_extra_where_it_is_missing():
    check = (
        "import sys, vocabrisk, vocabrisk.integrations\n"
        "assert not [m for m in sys.modules if m.startswith('datatrove')], 'datatrove imported'\n"
        "sys.modules['datatrove'] = None  # as if it were not installed\n"
        "try:\n"
        "    import vocabrisk.integrations.datatrove\n"
        "except ImportError as error:\n"
        "    print(error, error.hint)\n"
    )
    result = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "needs datatrove" in result.stdout and "pip install 'vocabrisk[datatrove]'" in result.stdout


# ---- the README's examples run as written ---------------------------------------------------
def readme_blocks(language: str) -> list[str]:
    """The LANGUAGE code blocks of the README's datatrove section."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Profiling a datatrove pipeline\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.DOTALL)


def run_here(command: list[str] | str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """COMMAND as a shell runs it in CWD, with this environment's `vocabrisk` and `python` first on the PATH."""
    path = os.pathsep.join([*(env or {}).get("PATH", "").split(os.pathsep), BIN, os.environ["PATH"]]).lstrip(os.pathsep)
    environ = {**os.environ, **(env or {}), "PATH": path}
    shell = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", command] if isinstance(command, str) else command
    return subprocess.run(shell, cwd=cwd, env=environ, capture_output=True, text=True, timeout=300)


@pytest.fixture
def in_a_clone(tmp_path) -> Path:
    """A folder holding data/raw, JSON Lines files of the sample corpora, where the README's examples run."""
    raw = tmp_path / "data" / "raw"
    raw.mkdir(parents=True)
    code = (SAMPLES / "python-code.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (raw / "code-1.jsonl").write_text("".join(code[: len(code) // 2]), encoding="utf-8")
    (raw / "code-2.jsonl").write_text("".join(code[len(code) // 2 :]), encoding="utf-8")
    prose = sorted((SAMPLES / "english-prose").iterdir())
    records = [json.dumps({"text": p.read_text(encoding="utf-8"), "id": p.name}) + "\n" for p in prose]
    (raw / "prose.jsonl.gz").write_bytes(gzip.compress("".join(records).encode("utf-8")))
    return tmp_path


def same_as_a_scan(folder: Path, profile: Path) -> None:
    """PROFILE is the saved profile `vocabrisk scan` gives for data/raw, named as datatrove names it."""
    out = str(folder / "scanned")
    result = run_here(
        ["vocabrisk", "scan", str(folder / "data" / "raw"), "--model", "demo", "--out", out, "-q"], folder
    )
    assert result.returncode == 0, result.stderr
    assert_same_profile(profile, folder / "scanned")


def test_the_readme_pipeline_runs_as_written_and_its_profile_is_gated(in_a_clone):
    install, gate = readme_blocks("bash")
    assert install.strip() == "pip install 'vocabrisk[datatrove]'"
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(dependency.startswith("datatrove") for dependency in extras["datatrove"])
    local, _ = readme_blocks("python")
    (in_a_clone / "build.py").write_text(local)
    result = run_here(gate, in_a_clone)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PASSED" in result.stdout
    assert len(list((in_a_clone / "out" / "partials").iterdir())) == 4
    assert len(list((in_a_clone / "out" / "corpus").iterdir())) == 3  # each file's documents, passed on
    same_as_a_scan(in_a_clone, in_a_clone / "out" / "profile")


SLURM_STANDINS = {
    # sbatch SCRIPT: run each task of the job's array here, in turn (a job depending on an earlier one is
    # submitted after it, so after it ran), log the job and say it was submitted, as sbatch does.
    "sbatch": """#!/usr/bin/env bash
set -euo pipefail
script="${!#}"
for arg in "${@:1:$#-1}"; do
    case "$arg" in --export=ALL,*) export "${arg#--export=ALL,}" ;; esac
done
id=$(( $(wc -l < "$SLURM_STANDIN_LOG") + 1 ))
name=$(sed -n 's/^#SBATCH --job-name=//p' "$script")
last=$(sed -n 's/^#SBATCH --array=0-\\([0-9]*\\).*/\\1/p' "$script")
echo "$id $name ${*:1:$#-1}" >> "$SLURM_STANDIN_LOG"
for task in $(seq 0 "${last:-0}"); do
    SLURM_ARRAY_TASK_ID=$task SLURM_JOB_ID=$id SLURM_NODELIST=localhost bash "$script" >&2
done
echo "Submitted batch job $id"
""",
    "srun": """#!/usr/bin/env bash
while [[ $# -gt 0 && $1 == -* ]]; do case $1 in -n|-N) shift 2 ;; *) shift ;; esac; done
exec "$@"
""",
    "scontrol": """#!/usr/bin/env bash
echo "${3:-localhost}"  # scontrol show hostnames NODELIST
""",
}


def test_the_readme_slurm_example_submits_both_jobs_and_they_make_the_same_profile(in_a_clone):
    local, slurm = readme_blocks("python")
    steps = local.split("build = LocalPipelineExecutor", 1)[0]
    (in_a_clone / "submit.py").write_text(steps + slurm)
    bin_folder = in_a_clone / "slurm-bin"
    bin_folder.mkdir()
    for name, script in SLURM_STANDINS.items():
        (bin_folder / name).write_text(script)
        (bin_folder / name).chmod(0o755)
    log = in_a_clone / "jobs.log"
    log.touch()
    result = run_here(
        [sys.executable, "submit.py"], in_a_clone, {"PATH": str(bin_folder), "SLURM_STANDIN_LOG": str(log)}
    )
    assert result.returncode == 0, result.stderr[-3000:]
    jobs = log.read_text().splitlines()
    assert len(jobs) == 4, jobs  # counting, its stats, the merge, its stats
    assert "--dependency=afterok:1" in jobs[2]  # the merge waits for the counting job
    assert len(list((in_a_clone / "out" / "partials").iterdir())) == 4
    same_as_a_scan(in_a_clone, in_a_clone / "out" / "profile")
