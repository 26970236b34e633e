"""The vocabulary-deficiency profile: a corpus's token counts against one model, plus metadata.

A profile is what later stages read (risk, rank, diff, gate, report), so it is saved as a
folder that loads back without rescanning:

- `tokens.parquet`: one row per token id (`token_id`, `token`, `group`, `special`, `count`, `prior`,
  `reference_count`: the reference corpus's counts where the prior came from one);
- `profile.json`: everything needed to reproduce and compare it (tokenizer fingerprint,
  model and head, counting policy, read options, sources, skips, tool version);
- `old_text.npz`, where the prior came from text: the token ids of up to 20k tokens of that
  text, document by document, which the forecast reads contexts from (`vocabrisk.risk.forecast`).

profile.json states its format (`format_version`) and lists the other files with their sizes
(`files`): a profile copied without one of them is refused, naming the file, instead of
forecasting without it. Format 1 profiles (no list) still load, and say what they lack
(`Profile.notes`). Saving replaces these three files only; anything else in the folder stays.

Profiles of the same tokenizer and policy add, which is how shards and workers merge.
"""

from __future__ import annotations

import json
import zipfile
import zlib
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from vocabrisk._version import __version__
from vocabrisk.corpus.skips import MAX_SKIP_EXAMPLES, SkipTally
from vocabrisk.counting.counts import TokenCounts
from vocabrisk.errors import ProfileError, require
from vocabrisk.model.groups import UNUSED
from vocabrisk.model.head import HeadInfo
from vocabrisk.prior.old_text import OldText
from vocabrisk.profile.token_table import COLUMNS, TokenTable, numpy_column
from vocabrisk.storage.outputs import OutputError, check_writable, json_text, output_error, replace_files

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd
    import polars as pl

PROFILE_JSON = "profile.json"
TOKENS_PARQUET = "tokens.parquet"
OLD_TEXT_NPZ = "old_text.npz"
PROFILE_FILES = (PROFILE_JSON, TOKENS_PARQUET, OLD_TEXT_NPZ)  # a profile's own files: what saving replaces
FORMAT_VERSION = 2  # 2: profile.json lists the other files (`files`); format 1 did not
READABLE_FORMATS = (1, 2)


@dataclass(frozen=True, eq=False)
class Profile:
    """A corpus's counts against one model: one entry per token id (`table`) and what they were made under.

    The table holds the `tokens.parquet` columns (`vocabrisk.profile.token_table`). A loaded profile reads it on
    first use, so a command that needs only the metadata (or fails on it) never reads the per-token data.
    """

    per_token: TokenTable | Path = field(repr=False)  # the table, or the Parquet file it is read from
    prior_source: str  # how the prior was made, e.g. "tokenizer" or "reference: PATH"
    tokenizer: dict  # fingerprint, path, model_type, vocab_size
    model: dict  # name, head (HeadInfo or None), head_note, encoder
    policy: dict
    read_options: dict
    documents: int
    text_bytes: int
    total_tokens: int
    sources: list[dict] = field(default_factory=list)  # path, format, size, documents, skipped
    skips: SkipTally = field(default_factory=SkipTally)  # files, records and bytes left out
    skipped_examples: list[dict] = field(default_factory=list)
    tool_version: str = __version__
    old_text: OldText | None = None  # the reference's token ids, where the prior came from text
    # What a reader should know of how it was made, which reports show: what a loaded profile lacks that would
    # change its numbers, an accelerated engine that disagreed with the reference (`tokenizer["engine_note"]`)
    notes: tuple[str, ...] = ()

    @classmethod
    def from_arrays(
        cls,
        *,
        counts: TokenCounts,
        tokens: Sequence[str] | np.ndarray,  # readable form of each token id
        groups: np.ndarray,  # group name of each token id
        special: np.ndarray,  # bool per token id: special tokens are not vocabulary a corpus can cover
        prior: np.ndarray,  # how much the base model relies on each token (sums to 1)
        reference_counts: np.ndarray | None,  # the reference corpus's own counts, when the prior came from one
        model: dict,
        **metadata,
    ) -> Profile:
        """A profile from the counting stage's arrays, one entry per token id (what `scan` assembles)."""
        table = TokenTable.of(tokens, groups, special, counts.counts, prior, reference_counts)
        return cls(
            table,
            model=model,
            documents=counts.documents,
            text_bytes=counts.text_bytes,
            total_tokens=counts.tokens,
            **metadata,
        )

    # ---- the per-token data ----------------------------------------------------------
    @cached_property
    def table(self) -> TokenTable:
        """One entry per token id in each column: token, group, special, count, prior, reference_count."""
        if not isinstance(self.per_token, Path):
            return self.per_token
        import pyarrow as pa

        try:
            return TokenTable.read_parquet(self.per_token)
        except (OSError, ValueError, pa.ArrowException) as exc:
            raise ProfileError(
                f"{self.per_token.parent}: profile is corrupt ({exc})", hint="scan the corpus again"
            ) from exc

    def to_polars(self) -> pl.DataFrame:
        """The per-token table (the `tokens.parquet` columns) as a polars DataFrame, to explore in a notebook.

        >>> import polars as pl, vocabrisk
        >>> profile = vocabrisk.scan(["sample_corpora/korean-notes.txt"], "demo")
        >>> df = profile.to_polars()
        >>> df.columns
        ['token_id', 'token', 'group', 'special', 'count', 'prior', 'reference_count']
        >>> df.group_by("group").agg(pl.col("count").sum()).sort("count", descending=True).row(0)
        ('Hangul', 11512)
        """
        return self.table.to_polars()

    def to_pandas(self) -> pd.DataFrame:
        """The per-token table as a pandas DataFrame, indexed by token id.

        >>> import vocabrisk
        >>> df = vocabrisk.scan(["sample_corpora/korean-notes.txt"], "demo").to_pandas()
        >>> df.groupby("group")["count"].sum().idxmax()
        'Hangul'
        """
        require("pandas", "pandas", "Profile.to_pandas()")
        return self.to_polars().to_pandas().set_index("token_id")

    def column(self, name: str) -> np.ndarray | None:
        """One column of the table as a numpy array, by its `tokens.parquet` name (None: `reference_count`
        where the prior came from no reference)."""
        return self.table.column(name)

    @property
    def counts(self) -> TokenCounts:
        return TokenCounts(self.table.count, documents=self.documents, text_bytes=self.text_bytes)

    @cached_property
    def tokens(self) -> list[str]:
        """The readable form of each token id."""
        return self.table.token.tolist()

    @property
    def groups(self) -> np.ndarray:
        return self.table.group

    @property
    def special(self) -> np.ndarray:
        return self.table.special

    @property
    def prior(self) -> np.ndarray:
        return self.table.prior

    @property
    def reference_counts(self) -> np.ndarray | None:
        """The reference corpus's counts, where the prior came from one."""
        return self.table.reference_count

    # ---- what the profile says -------------------------------------------------------
    @property
    def head(self) -> HeadInfo | None:
        return self.model.get("head")

    @cached_property
    def calibration_key(self) -> str:
        """Which model's saved calibration applies (`vocabrisk.model.identity.model_key`): computed where the
        model's files were read, and kept in profile.json, which records the head's file by name only."""
        from vocabrisk.model.identity import model_key

        return self.model.get("calibration_key") or model_key(self.model, self.tokenizer)

    @property
    def weights_key(self) -> str | None:
        """Which weights the model had when counted (`vocabrisk.model.identity.weights_key`); None in profiles saved
        before it was recorded."""
        return self.model.get("weights_key")

    @property
    def vocab_size(self) -> int:
        return self.table.size

    @property
    def skipped(self) -> int:
        """Files and records left out."""
        return self.skips.total

    @property
    def skipped_share(self) -> float:
        """The share of the input's bytes left out (skipped bytes over skipped plus counted)."""
        return self.skips.share(self.text_bytes)

    def skip_report(self) -> dict:
        """What was left out, as every report shows it."""
        return {
            **self.skips.to_dict(),
            "share": self.skipped_share,
            "summary": self.skips.text,
            "examples": self.skipped_examples,
        }

    @cached_property
    def coverable(self) -> np.ndarray:
        """Rows a corpus can reach through text: not special tokens, not unused ids."""
        return ~self.special & (self.groups != UNUSED)

    @property
    def shares(self) -> np.ndarray:
        total = self.total_tokens
        return self.table.count / total if total else np.zeros(self.vocab_size)

    def used_rows(self) -> int:
        return int(((self.table.count > 0) & self.coverable).sum())

    def absent_rows(self) -> np.ndarray:
        return (self.table.count == 0) & self.coverable

    # ---- combining -------------------------------------------------------------------
    def __add__(self, other: Profile) -> Profile:
        if not isinstance(other, Profile):
            return NotImplemented
        self.check_compatible(other)
        counts = self.counts + other.counts
        return replace(
            self,
            per_token=replace(self.table, count=counts.counts),
            tokenizer=_merged_tokenizer(self.tokenizer, other.tokenizer),
            documents=counts.documents,
            text_bytes=counts.text_bytes,
            total_tokens=self.total_tokens + other.total_tokens,
            sources=self.sources + other.sources,
            skips=self.skips + other.skips,
            skipped_examples=(self.skipped_examples + other.skipped_examples)[:MAX_SKIP_EXAMPLES],
            notes=tuple(dict.fromkeys(self.notes + other.notes)),
        )

    def check_compatible(self, other: Profile) -> None:
        if self.tokenizer["fingerprint"] != other.tokenizer["fingerprint"]:
            raise ProfileError(
                "profiles were counted with different tokenizers "
                f"({self.tokenizer.get('name')} vs {other.tokenizer.get('name')})",
                hint="scan both corpora with the same --model",
            )
        if self.policy != other.policy:
            raise ProfileError(
                f"profiles were counted under different special-token policies ({self.policy} vs {other.policy})",
                hint="rescan with the same --special-tokens/--eos options",
            )

    # ---- persistence -----------------------------------------------------------------
    def model_dict(self) -> dict:
        """The model's facts as plain data, the head among them, with no path of the machine that scanned.

        The model is recorded by its name as given (`demo`, a hub id, the path the user typed), the
        tokenizer by its fingerprint, the head's file (and its final norm's) by its name in the model, and
        the calibration that applies by its key.
        """
        model = {**self.model, "head": None, "calibration_key": self.calibration_key}
        if not self.head:
            return model
        head = self.head.to_dict()
        head["file"] = Path(head["file"]).name
        if head.get("final_norm_bias"):
            head["final_norm_bias"] = {**head["final_norm_bias"], "file": Path(head["final_norm_bias"]["file"]).name}
        return {**model, "head": head}

    def metadata(self) -> dict:
        return {
            "format_version": FORMAT_VERSION,
            "tool_version": self.tool_version,
            "tokenizer": self.tokenizer,
            "model": self.model_dict(),
            "policy": self.policy,
            "prior_source": self.prior_source,
            "read_options": self.read_options,
            "documents": self.documents,
            "text_bytes": self.text_bytes,
            "tokens": self.total_tokens,
            "vocab_size": self.vocab_size,
            "used_rows": self.used_rows(),
            "absent_rows": int(self.absent_rows().sum()),
            "skipped": self.skipped,
            "skips": self.skips.to_dict(),
            "skipped_examples": self.skipped_examples,
            "sources": self.sources,
        }

    def save(self, folder: Path | str, force: bool = False) -> Path:
        """Write the profile's files into FOLDER, each whole (a reader never sees a half-written profile).

        A profile already there is replaced only with `force` (the command line's --force); a folder holding
        anything else is refused. Only the profile's own files are replaced: a NOTES.md or .gitkeep stays.
        """
        folder = Path(folder)
        check_profile_target(folder, force)
        try:
            with replace_files(folder, PROFILE_FILES, index=PROFILE_JSON) as staging:
                self.table.write_parquet(staging / TOKENS_PARQUET)
                if self.old_text is not None:
                    np.savez_compressed(
                        staging / OLD_TEXT_NPZ, ids=self.old_text.ids.astype(np.uint32), starts=self.old_text.starts
                    )
                files = {n: (staging / n).stat().st_size for n in PROFILE_FILES[1:] if (staging / n).exists()}
                meta = {**self.metadata(), "files": files}
                text = json_text(meta, indent=2, ensure_ascii=False) + "\n"
                (staging / PROFILE_JSON).write_text(text, encoding="utf-8")
        except OSError as exc:  # a full disk, a folder made read-only since the check: the old profile stays
            raise output_error(folder, "profile", exc) from exc
        return folder

    @classmethod
    def load(cls, folder: Path | str) -> Profile:
        """The profile saved in FOLDER; ProfileError naming the file and what is wrong with it, if anything is."""
        folder = Path(folder)
        if folder.is_file() and (folder.parent / PROFILE_JSON).is_file():
            folder = folder.parent  # one of the profile's own files (profile.json, tokens.parquet) names its folder
        meta_path = folder / PROFILE_JSON
        if not meta_path.is_file():
            raise ProfileError(
                f"{folder}: not a vocabrisk profile (no {PROFILE_JSON})",
                hint="create one with `vocabrisk scan CORPUS --model MODEL --out DIR`",
            )
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise _corrupt(folder, f"{PROFILE_JSON} is not readable JSON: {exc}") from exc
        if not isinstance(meta, dict):
            raise _corrupt(folder, f"{PROFILE_JSON} holds a JSON {type(meta).__name__}, not a profile's object")
        files, notes = _listed_files(folder, meta)
        _check_fields(folder, meta)  # not read: repetition (saved before v6), contexts (before v7)
        try:
            missing = set(COLUMNS) - set(pq.read_schema(folder / TOKENS_PARQUET).names)  # the footer: rows on first use
            if missing:
                raise ValueError(f"{TOKENS_PARQUET} lacks the columns {', '.join(sorted(missing))}")
            _check_counts(folder, meta)
            old_text = None
            if OLD_TEXT_NPZ in files:
                with np.load(folder / OLD_TEXT_NPZ) as saved:
                    old_text = OldText(saved["ids"].astype(np.int64), saved["starts"].astype(np.int64))
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error, pa.ArrowException) as exc:
            raise _corrupt(folder, str(exc)) from exc
        try:
            head = meta["model"].get("head")
            return cls(
                folder / TOKENS_PARQUET,
                prior_source=meta["prior_source"],
                tokenizer=meta["tokenizer"],
                model={**meta["model"], "head": HeadInfo.from_dict(head) if head else None},
                policy=meta["policy"],
                read_options=meta["read_options"],
                documents=meta["documents"],
                text_bytes=meta["text_bytes"],
                total_tokens=meta["tokens"],
                sources=meta["sources"],
                skips=SkipTally.from_dict(meta.get("skips") or {"records": meta["skipped"]}),
                skipped_examples=meta["skipped_examples"],
                tool_version=meta["tool_version"],
                old_text=old_text,
                notes=(*notes, *_engine_notes(meta["tokenizer"])),
            )
        except KeyError as exc:
            raise _corrupt(folder, f"{PROFILE_JSON} has no field {exc.args[0]!r}") from exc
        except (AttributeError, TypeError, ValueError) as exc:
            raise _corrupt(folder, f"{PROFILE_JSON} has a field of the wrong kind ({exc})") from exc


def _check_counts(folder: Path, meta: dict) -> None:
    """tokens.parquet's counts must add up to the tokens profile.json says were counted: a profile whose
    counts were changed (or zeroed) since its scan would make every report say something untrue."""
    import pyarrow.parquet as pq

    column = pq.ParquetFile(folder / TOKENS_PARQUET).read(columns=["count"]).column("count")  # read_table: pandas
    if column.null_count:
        return  # the table's first use names the missing values (`token_table`)
    counts = numpy_column(column)
    total, least = int(counts.sum()), (int(counts.min()) if len(counts) else None)
    said = meta.get("tokens")
    if least is not None and least < 0:
        raise ValueError(f"{TOKENS_PARQUET} holds a negative count ({least})")
    if isinstance(said, int) and total != said:
        raise ValueError(
            f"{TOKENS_PARQUET}'s counts add up to {total:,} tokens where {PROFILE_JSON} says {said:,} were counted: "
            "one of them was changed after the scan"
        )


def _merged_tokenizer(first: dict, other: dict) -> dict:
    """The tokenizer entry of two profiles added: the same tokenizer (`check_compatible`), counted by the
    engines of either (the counts of every engine are the same; `vocabrisk.counting.engines`)."""
    engines = [part for t in (first, other) for part in str(t.get("engine") or "").split(" + ") if part]
    notes = [t["engine_note"] for t in (first, other) if t.get("engine_note")]
    merged = {**first, "engine": " + ".join(dict.fromkeys(engines))} if engines else dict(first)
    merged.pop("engine_note", None)
    return {**merged, "engine_note": " ".join(dict.fromkeys(notes))} if notes else merged


def _engine_notes(tokenizer: dict) -> tuple[str, ...]:
    note = tokenizer.get("engine_note")
    return (note,) if isinstance(note, str) and note else ()


# What readers of profile.json rely on: each field's JSON type, and for the objects the keys they read.
_FIELDS: dict[str, Any] = {  # field -> the JSON type it must have
    "tool_version": str, "prior_source": str, "tokenizer": dict, "model": dict, "policy": dict, "read_options": dict,
    "documents": int, "text_bytes": int, "tokens": int, "sources": list, "skipped_examples": list,
}  # fmt: skip
_KEYS = {"tokenizer": {"fingerprint": str, "model_type": str}, "model": {"name": str}}
_ITEM_KEYS = {"sources": ("path",), "skipped_examples": ("source", "locator", "reason")}
_JSON_TYPES = {str: "a string", int: "a whole number", dict: "an object", list: "a list"}


def _check_fields(folder: Path, meta: dict) -> None:
    """ProfileError naming the first field of profile.json that is missing or of the wrong kind."""
    for name, kind in _FIELDS.items():
        value = meta.get(name)
        if not isinstance(value, kind) or isinstance(value, bool) or (kind is int and value < 0):
            what = "has no field" if name not in meta else f"has {value!r} for"
            raise _corrupt(folder, f"{PROFILE_JSON} {what} {name!r}, which must be {_JSON_TYPES[kind]}")
        for key, key_kind in _KEYS.get(name, {}).items():
            if not isinstance(value.get(key), key_kind):
                raise _corrupt(folder, f"{PROFILE_JSON}'s {name} has no {key!r} ({_JSON_TYPES[key_kind]})")
        keys = _ITEM_KEYS.get(name)
        if keys and not all(isinstance(i, dict) and all(isinstance(i.get(k), str) for k in keys) for i in value):
            raise _corrupt(folder, f"{PROFILE_JSON}'s {name} must be objects with {', '.join(keys)} (strings)")


def _corrupt(folder: Path, what: str) -> ProfileError:
    return ProfileError(f"{folder}: profile is corrupt ({what})", hint="scan the corpus again")


def _listed_files(folder: Path, meta: dict) -> tuple[list[str], tuple[str, ...]]:
    """The files beside profile.json that make the profile, each checked there whole; and, for a format 1
    profile (which lists none), what it lacks that changes its numbers."""
    version = meta.get("format_version")
    if version not in READABLE_FORMATS:
        newer = isinstance(version, int) and not isinstance(version, bool) and version > FORMAT_VERSION
        raise ProfileError(
            f"{folder}: profile format {version!r} is not one this version of vocabrisk reads "
            f"({', '.join(map(str, READABLE_FORMATS))})",
            hint="upgrade vocabrisk to read it" if newer else "rescan with this version of vocabrisk",
        )
    if version == 1:
        files = [name for name in PROFILE_FILES[1:] if (folder / name).exists()]
        if TOKENS_PARQUET not in files:
            raise _missing(folder, TOKENS_PARQUET, "every profile has one")
        lacks = OLD_TEXT_NPZ not in files and str(meta.get("prior_source", "")).startswith("reference")
        return files, (_NO_OLD_TEXT,) if lacks else ()
    listed = meta.get("files")
    if not isinstance(listed, dict) or not all(isinstance(size, int) for size in listed.values()):
        raise _corrupt(folder, f"{PROFILE_JSON} has no list of the profile's files (`files`: name → bytes)")
    foreign = sorted(set(listed) - set(PROFILE_FILES[1:]))
    if foreign:
        raise _corrupt(folder, f"{PROFILE_JSON} lists files vocabrisk does not know: {', '.join(foreign)}")
    if TOKENS_PARQUET not in listed:
        raise _corrupt(folder, f"{PROFILE_JSON} does not list {TOKENS_PARQUET}")
    for name in PROFILE_FILES[1:]:
        path = folder / name
        if name not in listed:
            if path.exists():
                raise ProfileError(
                    f"{folder}: holds {name}, which its {PROFILE_JSON} does not list: it is not this profile's",
                    hint=f"remove {name}, or scan the corpus again",
                )
            continue
        if not path.is_file():
            raise _missing(folder, name, f"{PROFILE_JSON} lists it")
        size = path.stat().st_size
        if size != listed[name]:
            raise ProfileError(
                f"{folder}: {name} is {size:,} bytes where {PROFILE_JSON} says {listed[name]:,}: truncated, or "
                "replaced by another profile's",
                hint="copy the whole profile folder again, or scan the corpus again",
            )
    return list(listed), ()


def _missing(folder: Path, name: str, why: str) -> ProfileError:
    return ProfileError(
        f"{folder}: {name} is missing ({why}); a profile is its folder, every file of it",
        hint="copy the whole profile folder, or scan the corpus again",
    )


_NO_OLD_TEXT = (
    f"this profile (format 1, saved without a list of its files) has no {OLD_TEXT_NPZ}, though its prior came "
    "from text: the forecast reads no old text and stands the global prior in for its contexts, which can "
    "change it several-fold from the scan's; rescan to keep the old text"
)


def is_profile(path: Path | str) -> bool:
    path = Path(path)
    return path.is_dir() and (path / PROFILE_JSON).exists()


def check_profile_target(folder: Path | str, force: bool) -> None:
    """Refuse, before any input is read, to write a profile where it cannot go or would replace one.

    An existing profile (a gate's baseline, say) is replaced only with `force`; a folder holding
    anything else is never written into, though hidden files alone (a .gitkeep) leave it empty.
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"{folder}: exists and is a file, not a profile folder", hint="choose another --out")
    if is_profile(folder) and not force:
        raise OutputError(
            f"{folder}: a saved profile is already there; refusing to overwrite it",
            hint="add --force (Profile.save(..., force=True)) to replace it, or choose another --out",
        )
    if folder.is_dir() and not is_profile(folder) and any(not p.name.startswith(".") for p in folder.iterdir()):
        raise OutputError(
            f"{folder}: exists and is not a vocabrisk profile; refusing to write into it",
            hint="choose an empty or new --out folder",
        )
    check_writable(folder, "profile folder", folder=True)
