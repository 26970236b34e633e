"""The vocabulary-deficiency profile: a corpus's token counts against one model, plus metadata.

A profile is what later stages read (risk, rank, diff, gate, report), so it is saved as a
folder that loads back without rescanning:

- `tokens.parquet`: one row per token id (`token_id`, `token`, `group`, `special`, `count`, `prior`,
  `reference_count`: the reference corpus's counts where the prior came from one);
- `profile.json`: everything needed to reproduce and compare it (tokenizer fingerprint,
  model and head, counting policy, read options, sources, skips, tool version);
- `old_text.npz`, where the prior came from text: the token ids of up to 20k tokens of that
  text, document by document, which the forecast reads contexts from (`vocabrisk.forecast`).

Profiles of the same tokenizer and policy add, which is how shards and workers merge.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from vocabrisk._version import __version__
from vocabrisk.counting.counts import TokenCounts
from vocabrisk.errors import ProfileError
from vocabrisk.forecast import OldText
from vocabrisk.outputs import atomic_folder
from vocabrisk.skips import SkipTally

PROFILE_JSON = "profile.json"
TOKENS_PARQUET = "tokens.parquet"
OLD_TEXT_NPZ = "old_text.npz"
FORMAT_VERSION = 1


@dataclass
class Profile:
    counts: TokenCounts
    tokens: list[str]  # readable form of each token id
    groups: np.ndarray  # group name of each token id (object array of str)
    special: np.ndarray  # bool per token id: special tokens are not vocabulary a corpus can cover
    prior: np.ndarray  # how much the base model relies on each token (sums to 1)
    prior_source: str  # how the prior was made, e.g. "tokenizer" or "reference: PATH"
    reference_counts: np.ndarray | None  # the reference corpus's own counts, when the prior came from one
    tokenizer: dict  # fingerprint, path, model_type, vocab_size
    model: dict  # name, head (dict or None), head_note
    policy: dict
    read_options: dict
    sources: list[dict] = field(default_factory=list)  # path, format, size, documents, skipped
    skips: SkipTally = field(default_factory=SkipTally)  # files, records and bytes left out
    skipped_examples: list[dict] = field(default_factory=list)
    tool_version: str = __version__
    old_text: OldText | None = None  # the reference's token ids, where the prior came from text

    # ---- what the profile says -------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        return int(self.counts.counts.size)

    @property
    def documents(self) -> int:
        return self.counts.documents

    @property
    def text_bytes(self) -> int:
        return self.counts.text_bytes

    @property
    def total_tokens(self) -> int:
        return self.counts.tokens

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
            "summary": self.skips.describe(),
            "examples": self.skipped_examples,
        }

    @property
    def coverable(self) -> np.ndarray:
        """Rows a corpus can reach through text: not special tokens, not unused ids."""
        return ~self.special & (self.groups != "unused ids")

    @property
    def shares(self) -> np.ndarray:
        total = self.total_tokens
        return self.counts.counts / total if total else np.zeros(self.vocab_size)

    def used_rows(self) -> int:
        return int(((self.counts.counts > 0) & self.coverable).sum())

    def absent_rows(self) -> np.ndarray:
        return (self.counts.counts == 0) & self.coverable

    # ---- combining -------------------------------------------------------------------
    def __add__(self, other: Profile) -> Profile:
        self.check_compatible(other)
        return Profile(
            counts=self.counts + other.counts,
            tokens=self.tokens,
            groups=self.groups,
            special=self.special,
            prior=self.prior,
            prior_source=self.prior_source,
            reference_counts=self.reference_counts,
            tokenizer=self.tokenizer,
            model=self.model,
            policy=self.policy,
            read_options=self.read_options,
            sources=self.sources + other.sources,
            skips=self.skips + other.skips,
            skipped_examples=(self.skipped_examples + other.skipped_examples)[:MAX_SKIP_EXAMPLES],
            old_text=self.old_text,
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
                hint="rescan with the same --bos/--eos options",
            )

    # ---- persistence -----------------------------------------------------------------
    def metadata(self) -> dict:
        return {
            "format_version": FORMAT_VERSION,
            "tool_version": self.tool_version,
            "tokenizer": self.tokenizer,
            "model": self.model,
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

    def save(self, folder: Path | str, overwrite: bool = True) -> Path:
        """Write the profile folder atomically: a reader never sees a half-written profile.

        An existing profile there is replaced, unless `overwrite` is False (then ProfileError).
        """
        folder = Path(folder)
        if not overwrite and is_profile(folder):
            raise ProfileError(f"{folder}: a saved profile is already there", hint="add --force to replace it")
        if folder.exists() and not is_profile(folder) and any(folder.iterdir()):
            raise ProfileError(
                f"{folder}: exists and is not a vocabrisk profile; refusing to overwrite it",
                hint="choose an empty or new --out folder",
            )
        with atomic_folder(folder) as staging:
            import pyarrow as pa  # here, not at import: commands that save no profile start faster
            import pyarrow.parquet as pq

            table = pa.table(
                {
                    "token_id": pa.array(np.arange(self.vocab_size), pa.int64()),
                    "token": pa.array(self.tokens, pa.string()),
                    "group": pa.array(list(self.groups), pa.string()),
                    "special": pa.array(self.special, pa.bool_()),
                    "count": pa.array(self.counts.counts, pa.int64()),
                    "prior": pa.array(self.prior, pa.float64()),
                    "reference_count": pa.array(
                        self.reference_counts if self.reference_counts is not None else [None] * self.vocab_size,
                        pa.int64(),
                    ),
                }
            )
            pq.write_table(table, staging / TOKENS_PARQUET)
            if self.old_text is not None:
                np.savez_compressed(
                    staging / OLD_TEXT_NPZ, ids=self.old_text.ids.astype(np.uint32), starts=self.old_text.starts
                )
            (staging / PROFILE_JSON).write_text(json.dumps(self.metadata(), indent=2, ensure_ascii=False) + "\n")
        return folder

    @classmethod
    def load(cls, folder: Path | str) -> Profile:
        folder = Path(folder)
        meta_path, table_path = folder / PROFILE_JSON, folder / TOKENS_PARQUET
        if not meta_path.exists() or not table_path.exists():
            raise ProfileError(
                f"{folder}: not a vocabrisk profile (needs {PROFILE_JSON} and {TOKENS_PARQUET})",
                hint="create one with `vocabrisk scan CORPUS --model MODEL --out DIR`",
            )
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            table = pq.read_table(table_path)
            column = {name: table.column(name) for name in table.column_names}
            counts = column["count"].to_numpy().astype(np.int64)
            references = column["reference_count"]
            reference_counts = None if references.null_count == len(references) else references.to_numpy()
            arrays = {  # column by column, without a Python object per number
                "tokens": column["token"].to_pylist(),
                "groups": column["group"].to_numpy(zero_copy_only=False).astype(object),
                "special": column["special"].to_numpy(zero_copy_only=False).astype(bool),
                "prior": column["prior"].to_numpy().astype(np.float64),
                "reference_counts": None if reference_counts is None else reference_counts.astype(np.int64),
            }
            old_text = None
            if (folder / OLD_TEXT_NPZ).exists():
                with np.load(folder / OLD_TEXT_NPZ) as saved:
                    old_text = OldText(saved["ids"].astype(np.int64), saved["starts"].astype(np.int64))
        except (OSError, ValueError, KeyError, pa.ArrowException) as exc:
            raise ProfileError(f"{folder}: profile is corrupt ({exc})", hint="scan the corpus again") from exc
        if meta.get("format_version") != FORMAT_VERSION:
            raise ProfileError(
                f"{folder}: profile format {meta.get('format_version')} is not {FORMAT_VERSION}",
                hint="rescan with this version of vocabrisk",
            )
        return cls(
            counts=TokenCounts(counts, documents=meta["documents"], text_bytes=meta["text_bytes"]),
            **arrays,
            prior_source=meta["prior_source"],
            tokenizer=meta["tokenizer"],
            model=meta["model"],
            policy=meta["policy"],
            read_options=meta["read_options"],
            sources=meta["sources"],
            skips=SkipTally.from_dict(meta.get("skips") or {"records": meta["skipped"]}),
            skipped_examples=meta["skipped_examples"],
            tool_version=meta["tool_version"],
            old_text=old_text,
        )


MAX_SKIP_EXAMPLES = 20


def is_profile(path: Path | str) -> bool:
    path = Path(path)
    return path.is_dir() and (path / PROFILE_JSON).exists()
