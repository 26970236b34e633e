"""Every output format of the CLI on the sample corpora, written to a folder; or two such folders compared.

A refactor that moves code must not move a byte of output. Run this before and after:

    python scripts/snapshot_outputs.py write /tmp/before      # on the old tree
    python scripts/snapshot_outputs.py write /tmp/after       # on the new one
    python scripts/snapshot_outputs.py compare /tmp/before /tmp/after

It drives the `vocabrisk` command of the running interpreter (the CLI is the stable surface across
refactors) with the demo model: scans of each sample corpus (JSON, profile folders with their Parquet
table), rank and diff in every format, reports in HTML and Markdown, and a gate writing every CI format.
Values that differ between any two runs of the same code (timings, the folder of the run) are
normalised before comparing; everything else must be identical, byte for byte.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
CORPORA = sorted(p.name for p in (ROOT / "sample_corpora").iterdir())
# Fields whose value is a timing or a moment, wherever they appear in JSON, and the calibration key, which
# hashes where the model's files are (the demo model's are in the tree being snapshot).
VOLATILE_KEYS = {"seconds", "elapsed", "elapsed_s", "created", "created_at", "duration_s", "calibration_key"}


def commands() -> list[tuple[str, list[str]]]:
    corpora = [str(ROOT / "sample_corpora" / name) for name in CORPORA]
    profiles = [f"profile-{name}" for name in CORPORA]  # relative: the folder of the run is the working one
    runs = [
        (f"scan-{name}.json", ["scan", corpus, "--quiet", "--format", "json", "--out", profile])
        for name, corpus, profile in zip(CORPORA, corpora, profiles, strict=True)
    ]
    runs += [
        ("scan-all.txt", ["scan", *corpora, "--quiet", "--steps", "200"]),
        ("rank.txt", ["rank", *profiles, "--steps", "300"]),
        ("rank.json", ["rank", *profiles, "--format", "json"]),
        ("rank.md", ["rank", *profiles, "--format", "markdown"]),
        ("diff.txt", ["diff", profiles[0], profiles[1]]),
        ("diff.json", ["diff", profiles[0], profiles[1], "--format", "json"]),
        ("report.txt", ["report", profiles[2], "--html", "report.html",
                        "--markdown", "report.md"]),
        ("gate.txt", ["gate", profiles[3], "--max-risk", "0.01", "--max-starved-share", "0.5",
                      "--report", "junit=gate.junit.xml", "--report", "sarif=gate.sarif",
                      "--report", "json=gate.json", "--report", "markdown=gate.md"]),
        ("gate-pass.json", ["gate", profiles[0], "--max-risk", "0.99", "--format", "json"]),
        ("gate-github.txt", ["gate", profiles[1], "--max-risk", "0.01", "--format", "github"]),
        ("bad-input.txt", ["scan", "no-such-corpus"]),
    ]  # fmt: skip
    return runs


PACKAGE_FILE = "package.txt"  # where the snapshot's vocabrisk was imported from
PASSED_ON = {k: v for k, v in os.environ.items() if k == "PYTHONPATH"}  # which tree to snapshot


def write(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=False)
    home = Path(tempfile.mkdtemp(prefix="vocabrisk-snapshot-"))  # a cold cache, outside what is compared
    where = [sys.executable, "-c", "import pathlib, vocabrisk; print(pathlib.Path(vocabrisk.__file__).parent)"]
    package = subprocess.run(where, capture_output=True, text=True, env=PASSED_ON, check=True).stdout.strip()
    (out / PACKAGE_FILE).write_text(package)
    for name, args in commands():
        done = subprocess.run(
            [sys.executable, "-c", "from vocabrisk.cli import main; main()", *args],
            capture_output=True,
            text=True,
            cwd=out,
            env={**PASSED_ON, "COLUMNS": "120", "NO_COLOR": "1", "PATH": "/usr/bin:/bin", "HOME": str(home)},
        )
        (out / name).write_text(f"exit {done.returncode}\n--- stdout\n{done.stdout}--- stderr\n{done.stderr}")


def normalised(path: Path, root: Path) -> object:
    if path.suffix == ".parquet":
        table = pq.read_table(path)
        return {"schema": str(table.schema), "rows": table.to_pylist()}
    text = path.read_text(encoding="utf-8", errors="replace").replace(str(root), "<RUN>")
    text = text.replace((root / PACKAGE_FILE).read_text(), "<PACKAGE>")
    text = re.sub(r"\d+(\.\d+)? ?(s|seconds|ms)\b", "<TIME>", text)
    text = re.sub(r"\d[\d.,]* ?[MK]?B/s", "<RATE>", text)
    if path.suffix == ".json":
        try:
            return _drop_volatile(json.loads(text))
        except json.JSONDecodeError:
            pass
    return text


def _drop_volatile(value):
    if isinstance(value, dict):
        return {k: ("<VOLATILE>" if k in VOLATILE_KEYS else _drop_volatile(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_drop_volatile(v) for v in value]
    return value


def compare(before: Path, after: Path) -> int:
    names = {p.relative_to(before) for p in before.rglob("*") if p.is_file()}
    names |= {p.relative_to(after) for p in after.rglob("*") if p.is_file()}
    names.discard(Path(PACKAGE_FILE))
    differ = []
    for name in sorted(names):
        a, b = before / name, after / name
        if not (a.is_file() and b.is_file()):
            differ.append(f"{name}: only in {'before' if a.is_file() else 'after'}")
        elif normalised(a, before) != normalised(b, after):
            differ.append(f"{name}: differs")
    print("\n".join(differ) or f"{len(names)} files, all identical")
    return 1 if differ else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("write").add_argument("out", type=Path)
    both = sub.add_parser("compare")
    both.add_argument("before", type=Path)
    both.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "write":
        write(args.out.resolve())
    else:
        sys.exit(compare(args.before.resolve(), args.after.resolve()))
