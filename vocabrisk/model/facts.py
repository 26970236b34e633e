"""What a scan needs to know about a vocabulary, computed once per tokenizer and cached.

Reading a 150k-token `tokenizer.json` in Python, grouping its tokens, making their readable
forms, the tokenizer prior and the fingerprint take a second or more; none of it depends on
the corpus. `load_facts` keys them by a hash of the file's bytes (milliseconds to take) and
keeps them in the user's cache folder (`vocabrisk.storage.cache`), so that a scan, or each candidate
of a `rank`, pays only for loading its tokenizer into the counting engine and for counting.
"""

from __future__ import annotations

import contextlib
import gc
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from functools import cached_property
from pathlib import Path

import numpy as np

from vocabrisk.errors import ModelError
from vocabrisk.model.forked import run_beside
from vocabrisk.model.groups import token_groups
from vocabrisk.model.priors import tokenizer_prior
from vocabrisk.model.vocabulary import AddedToken, Vocabulary, load_vocabulary, read_tokenizer_file
from vocabrisk.storage import cache

CACHE_KIND = "vocabulary"
# The readable forms are stored joined by NUL, which splits back faster than JSON parses (150k forms:
# 18 against 29 ms); they escape what cannot be printed, so none holds it (else the entry is refused
# for its length, and the facts computed again).
READABLE_SEPARATOR = "\0"
_LOADED: dict[str, VocabularyFacts] = {}  # by file digest: one computation or cache read per process
# Smaller files' facts are computed in this process: a child gained nothing measurable for bert-base's
# 0.5 MB (30k tokens), and saved ~0.2 s for gpt2's 3.5 MB, 0.9 s for a 150k-token BPE's 11 MB.
FORK_MIN_BYTES = 1_000_000


@dataclass(frozen=True, eq=False)
class VocabularyFacts:
    """The corpus-independent facts of one tokenizer, per token id where they are arrays."""

    fingerprint: str  # hash of the encoding pipeline (see `vocabrisk.model.vocabulary`)
    model_type: str
    truncation: dict | None  # as configured in the file; counting always disables it
    padding: dict | None
    added: tuple[AddedToken, ...]
    size: int
    readable: np.ndarray  # display form of each token (object array of str)
    groups: np.ndarray  # group name of each token (object array of str)
    special_mask: np.ndarray  # bool: special tokens
    tokenizer_prior: np.ndarray  # the data-free prior from the tokenizer alone (`vocabrisk.model.priors`)
    pieces_json: bytes = field(repr=False)  # the vocabulary's strings by id, decoded only if `id_of` needs them

    def __post_init__(self) -> None:
        for array in (self.readable, self.groups, self.special_mask, self.tokenizer_prior):
            array.setflags(write=False)  # shared by every profile of this tokenizer in the process

    @classmethod
    def of(cls, vocab: Vocabulary) -> VocabularyFacts:
        as_they_are = ("fingerprint", "model_type", "truncation", "padding", "added", "size", "special_mask")
        return cls(
            **{name: getattr(vocab, name) for name in as_they_are},
            readable=np.array(vocab.readables, dtype=object),
            groups=token_groups(vocab),
            tokenizer_prior=tokenizer_prior(vocab),
            pieces_json=json.dumps(vocab.pieces, ensure_ascii=False).encode("utf-8"),
        )

    def id_of(self, content: str) -> int | None:
        """The id of an added token, else of the first piece, with this exact content."""
        for token in self.added:
            if token.content == content:
                return token.id
        return self._piece_ids.get(content)

    @cached_property
    def _piece_ids(self) -> dict[str, int]:
        ids: dict[str, int] = {}
        for token_id, piece in enumerate(json.loads(self.pieces_json)):
            if piece is not None:
                ids.setdefault(piece, token_id)
        return ids

    # ---- the cache entry -------------------------------------------------------------
    def to_arrays(self) -> dict[str, np.ndarray]:
        names = sorted(set(self.groups))
        meta = {
            "fingerprint": self.fingerprint,
            "model_type": self.model_type,
            "truncation": self.truncation,
            "padding": self.padding,
            "added": [[t.id, t.content, t.special] for t in self.added],
            "group_names": names,
        }
        codes = {name: code for code, name in enumerate(names)}
        return {
            "meta": _json_bytes(meta),
            "pieces": np.frombuffer(self.pieces_json, dtype=np.uint8),
            "readable": np.frombuffer(READABLE_SEPARATOR.join(self.readable).encode("utf-8"), dtype=np.uint8),
            "group_codes": np.array([codes[g] for g in self.groups], dtype=np.uint16),
            "special_mask": self.special_mask,
            "tokenizer_prior": self.tokenizer_prior,
        }

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> VocabularyFacts:
        meta = json.loads(arrays["meta"].tobytes())
        readable = arrays["readable"].tobytes().decode("utf-8").split(READABLE_SEPARATOR)
        if len(readable) != arrays["special_mask"].size:
            raise ValueError("the readable forms do not match the vocabulary's size")
        return cls(
            fingerprint=meta["fingerprint"],
            model_type=meta["model_type"],
            truncation=meta["truncation"],
            padding=meta["padding"],
            added=tuple(AddedToken(int(i), str(content), bool(special)) for i, content, special in meta["added"]),
            size=int(arrays["special_mask"].size),
            readable=np.array(readable, dtype=object),
            groups=np.array(meta["group_names"], dtype=object)[arrays["group_codes"]],
            special_mask=arrays["special_mask"].astype(bool),
            tokenizer_prior=arrays["tokenizer_prior"].astype(np.float64),
            pieces_json=arrays["pieces"].tobytes(),
        )

    def same_as(self, other: VocabularyFacts) -> bool:
        """Whether every fact is equal (arrays element by element)."""
        return all(_equal(getattr(self, f.name), getattr(other, f.name)) for f in fields(self))


def load_facts(tokenizer_json: Path | str, meanwhile: Callable[[], object] | None = None) -> VocabularyFacts:
    """The facts of the tokenizer in this file: from this process, the cache, or computed (and cached).

    `meanwhile` is work this process can do before it needs the facts (loading the counting
    engine's tokenizer): where the facts of a large vocabulary must be computed, they are
    computed in a forked child while it runs (`vocabrisk.model.forked`), on a second core.
    """
    path = Path(tokenizer_json)
    try:
        content, key = read_tokenizer_file(path)
    except OSError as exc:
        raise ModelError(f"{path}: cannot read tokenizer file: {exc.strerror or exc}") from exc
    if key not in _LOADED:
        facts = _from_cache(key)
        if facts is None and meanwhile is not None and len(content) >= FORK_MIN_BYTES:
            entry = run_beside(lambda: _computed_entry(path, content, key), meanwhile)
            facts = _from_arrays(cache.entry_arrays(entry)) if entry is not None else None
        if facts is None:  # or the child failed: here, its error (a broken file) is raised as a ModelError
            facts = _computed(path, content)
            cache.store_arrays(CACHE_KIND, key, facts.to_arrays())
        _LOADED[key] = facts
    return _LOADED[key]


def _computed(path: Path, content: bytes) -> VocabularyFacts:
    with _collector_paused():
        return VocabularyFacts.of(load_vocabulary(path, content))


def _computed_entry(path: Path, content: bytes, key: str) -> bytes:
    """The facts as a cache entry, stored, in the child that computes them for its parent."""
    entry = cache.entry_bytes(_computed(path, content).to_arrays())
    cache.store_entry(CACHE_KIND, key, entry)
    return entry


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off while a vocabulary is parsed: the file's JSON makes a list per
    BPE merge, and each of the hundreds of collections they would set off walks all of them,
    for cycles that parsing never makes."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _from_cache(key: str) -> VocabularyFacts | None:
    return _from_arrays(cache.load_arrays(CACHE_KIND, key))


def _from_arrays(stored: dict[str, np.ndarray] | None) -> VocabularyFacts | None:
    if stored is None:
        return None
    try:
        return VocabularyFacts.from_arrays(stored)
    except (KeyError, ValueError, TypeError, IndexError):  # written by a broken or foreign process
        return None


def _json_bytes(value: object) -> np.ndarray:
    return np.frombuffer(json.dumps(value, ensure_ascii=False).encode("utf-8"), dtype=np.uint8)


def _equal(a: object, b: object) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and bool((a == b).all())
    return a == b
