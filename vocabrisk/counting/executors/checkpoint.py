"""Per-shard checkpoints: a scan killed at any point resumes where it stopped.

A checkpoint folder holds `scan.json`, what identifies the scan (tool and tokenizers
versions, tokenizer fingerprint, counting policy, read options and every source in order),
and one `shards/NNNNNNNN.npz` per counted shard, with its counts and stats. Every file is
written under a temporary name, flushed to disk and renamed into place, so a kill leaves
each file whole or absent. A resumed scan loads the shards that have a file and counts the
rest; since results merge by addition, it ends with the profile an uninterrupted scan gives.
A shard that failed is not written, so that resuming counts it again.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path
from typing import IO

import numpy as np

from vocabrisk.corpus import Skipped
from vocabrisk.corpus.skips import SkipTally
from vocabrisk.counting import TokenCounts
from vocabrisk.counting.executors.shards import Shard, ShardResult
from vocabrisk.errors import InputError
from vocabrisk.storage.outputs import atomic_file

SCAN_JSON = "scan.json"
SHARDS = "shards"
FORMAT_VERSION = 1
_SHARD_FILE = re.compile(r"^(\d{8})\.npz$")
_NEW_FOLDER_HINT = "choose another --checkpoint folder, or delete this one to start over"


class Checkpoint:
    """The checkpoint folder of one scan, opened for a fresh start or to resume."""

    def __init__(self, folder: Path, identity: dict, shards: list[Shard], vocab_size: int):
        self.folder = folder
        self.identity = identity
        self._paths = {shard.index: shard.source.path for shard in shards}
        self._vocab_size = vocab_size

    @classmethod
    def open(cls, folder: Path | str, identity: dict, shards: list[Shard], vocab_size: int, resume: bool) -> Checkpoint:
        """Start a checkpoint in an empty or new folder, or (with `resume`) continue one.

        Refuses to continue a different scan, and to start over in a folder that holds an
        earlier scan's checkpoints (without `resume`) or other files.
        """
        folder = Path(folder)
        identity = {"format_version": FORMAT_VERSION, **identity}
        checkpoint = cls(folder, identity, shards, vocab_size)
        existing = folder / SCAN_JSON
        if existing.exists():
            if not resume:
                raise InputError(
                    f"{folder} holds the checkpoints of an earlier scan",
                    hint=f"add --resume to continue it, or {_NEW_FOLDER_HINT}",
                )
            checkpoint._check_same_scan(existing)
        elif folder.exists() and any(folder.iterdir()):
            raise InputError(f"{folder}: exists and is not a checkpoint folder", hint=_NEW_FOLDER_HINT)
        else:
            (folder / SHARDS).mkdir(parents=True, exist_ok=True)
            with atomic_file(existing, text=True, sync=True) as file:
                file.write(json.dumps(identity, indent=1) + "\n")
        return checkpoint

    def done(self) -> dict[int, ShardResult]:
        """The results already written, by shard index; an unreadable file is left to recount."""
        results = {}
        for path in sorted((self.folder / SHARDS).iterdir()):
            match = _SHARD_FILE.match(path.name)
            if not match:
                if path.name.startswith("."):
                    path.unlink(missing_ok=True)  # a temporary file from a killed write
                continue
            result = self._load(path, int(match.group(1)))
            if result is not None:
                results[result.index] = result
        return results

    def save(self, result: ShardResult) -> None:
        meta = {
            "source": self._paths[result.index],
            "skips": result.skips.to_dict(),
            "skip_examples": [[s.source, s.locator, s.reason, s.size] for s in result.skip_examples],
            "engine": result.engine,
            "engine_note": result.engine_note,
        }
        path = self.folder / SHARDS / f"{result.index:08d}.npz"
        with atomic_file(path, sync=True) as file:
            write_counts(file, result.counts, meta)

    def _load(self, path: Path, index: int) -> ShardResult | None:
        try:
            counts, meta = read_counts(path)
        except UNREADABLE:
            return None  # unreadable, or saved by a version without the 3-gram sketch: counted again
        if meta.get("source") != self._paths.get(index) or counts.counts.shape != (self._vocab_size,):
            return None
        return ShardResult(
            index,
            counts,
            SkipTally.from_dict(meta["skips"]),
            [Skipped(*example) for example in meta["skip_examples"]],
            engine=meta.get("engine") or "",  # not saved before engines were a choice
            engine_note=meta.get("engine_note"),
        )

    def _check_same_scan(self, path: Path) -> None:
        try:
            earlier = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"{path}: unreadable checkpoint ({exc})", hint=_NEW_FOLDER_HINT) from exc
        if earlier == self.identity:
            return
        changed = [key for key in self.identity if earlier.get(key) != self.identity[key]]
        detail = ""
        if changed == ["sources"]:
            detail = _sources_change(earlier.get("sources") or [], self.identity["sources"])
        raise InputError(
            f"{self.folder} holds the checkpoints of a different scan ({', '.join(changed)} changed{detail})",
            hint=f"resume with the same inputs, model and options, or {_NEW_FOLDER_HINT}",
        )


# What `read_counts` raises for a file that is not whole, or not one `write_counts` wrote.
UNREADABLE = (OSError, ValueError, KeyError, zipfile.BadZipFile)


def write_counts(file: Path | IO[bytes], counts: TokenCounts, meta: dict) -> None:
    """COUNTS, with their 3-gram sketch, and META (plain data) as one .npz."""
    totals = {"documents": counts.documents, "text_bytes": counts.text_bytes, "trigrams": counts.trigrams}
    np.savez_compressed(
        file,
        counts=counts.counts,
        trigram_sketch=counts.trigram_sketch,
        meta=np.array(json.dumps({**meta, **totals})),
    )


def read_counts(file: Path | IO[bytes]) -> tuple[TokenCounts, dict]:
    """The counts and metadata `write_counts` wrote; one of UNREADABLE where it did not write FILE whole."""
    with np.load(file, allow_pickle=False) as data:
        counts, sketch, meta = data["counts"], data["trigram_sketch"], json.loads(str(data["meta"]))
    totals = (meta["documents"], meta["text_bytes"])
    return TokenCounts(counts.astype(np.int64), *totals, sketch.astype(np.int64), meta["trigrams"]), meta


def _sources_change(earlier: list, now: list) -> str:
    for before, after in zip(earlier, now, strict=False):
        if before != after:
            return f": {before[0]} was {before[1:]}, now {after[0]} {after[1:]}"
    return f": {len(earlier)} inputs then, {len(now)} now"
