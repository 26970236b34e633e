"""Checkpoints of counted units: a scan killed at any point resumes where it stopped.

A checkpoint folder holds `scan.json`, what identifies the scan (tool and tokenizers
versions, tokenizer fingerprint, counting policy, read options and every source in order),
and one `shards/NNNNNNNN.npz` per counted unit of shards (`shards.units`: a large file alone,
small ones together), named by its first shard: the unit's counts, and each shard's stats.
Every file is written under a temporary name, flushed to disk and renamed into place, so a
kill leaves each file whole or absent. A resumed scan loads the shards that have a file and
counts the rest; since results merge by addition, it ends with the profile an uninterrupted
scan gives. A unit that failed is not written, so that resuming counts it again.
"""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from pathlib import Path
from typing import IO

import numpy as np

from vocabrisk.corpus import Skipped
from vocabrisk.corpus.skips import SkipTally
from vocabrisk.counting import TokenCounts
from vocabrisk.counting.executors.shards import Shard, ShardResult
from vocabrisk.errors import InputError
from vocabrisk.storage.outputs import atomic_file, output_error

SCAN_JSON = "scan.json"
SHARDS = "shards"
FORMAT_VERSION = 2  # 2: a file per unit of shards (1: per shard)
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
            made = not folder.exists()
            try:
                (folder / SHARDS).mkdir(parents=True, exist_ok=True)
                with atomic_file(existing, text=True, sync=True) as file:
                    file.write(json.dumps(identity, indent=1) + "\n")
            except OSError as exc:  # leave no folder that the next try would refuse as not a checkpoint's
                shutil.rmtree(folder if made else folder / SHARDS, ignore_errors=True)
                raise output_error(folder, "checkpoint", exc, then="run the scan again") from exc
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
            for result in self._load(path, int(match.group(1))):
                results[result.index] = result
        return results

    def save(self, results: list[ShardResult]) -> None:
        """The results of one unit, as one file: its counts (however they were split among the results) and
        each shard's stats."""
        counts = TokenCounts.zeros(self._vocab_size)
        for result in results:
            for part in (result.counts, result.pooled):
                if part is not None:
                    counts += part
        shards = [
            {
                "index": result.index,
                "source": self._paths[result.index],
                "documents": result.documents,
                "skips": result.skips.to_dict(),
                "skip_examples": [[s.source, s.locator, s.reason, s.size] for s in result.skip_examples],
                "engine": result.engine,
                "engine_note": result.engine_note,
            }
            for result in results
        ]
        path = self.folder / SHARDS / f"{results[0].index:08d}.npz"
        try:
            with atomic_file(path, sync=True) as file:
                write_counts(file, counts, {"shards": shards})
        except OSError as exc:  # the shards saved so far stay whole: a resumed scan starts from them
            raise output_error(self.folder, "checkpoint", exc, then="add --resume to go on from it") from exc

    def _load(self, path: Path, first: int) -> list[ShardResult]:
        """The unit's results, its counts on the first; none where the file is not whole or not this scan's."""
        try:
            counts, meta = read_counts(path)
            shards = meta["shards"]
            same = [s["index"] for s in shards][:1] == [first] and all(
                s["source"] == self._paths.get(s["index"]) for s in shards
            )
        except (*UNREADABLE, TypeError):
            return []  # unreadable: counted again
        if not same or counts.counts.shape != (self._vocab_size,):
            return []
        return [
            ShardResult(
                s["index"],
                None,
                SkipTally.from_dict(s["skips"]),
                [Skipped(*example) for example in s["skip_examples"]],
                documents=s["documents"],
                pooled=counts if number == 0 else None,
                engine=s["engine"],
                engine_note=s["engine_note"],
            )
            for number, s in enumerate(shards)
        ]

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
    """COUNTS and META (plain data) as one .npz."""
    totals = {"documents": counts.documents, "text_bytes": counts.text_bytes}
    np.savez_compressed(file, counts=counts.counts, meta=np.array(json.dumps({**meta, **totals})))


def read_counts(file: Path | IO[bytes]) -> tuple[TokenCounts, dict]:
    """The counts and metadata `write_counts` wrote; one of UNREADABLE where it did not write FILE whole."""
    with np.load(file, allow_pickle=False) as data:
        # a 3-gram sketch (before v6) and a 2-gram sample (`context_*`, before v7) are not read
        counts, meta = data["counts"], json.loads(str(data["meta"]))
    return TokenCounts(counts.astype(np.int64), meta["documents"], meta["text_bytes"]), meta


def _sources_change(earlier: list, now: list) -> str:
    for before, after in zip(earlier, now, strict=False):
        if before != after:
            return f": {before[0]} was {before[1:]}, now {after[0]} {after[1:]}"
    return f": {len(earlier)} inputs then, {len(now)} now"
