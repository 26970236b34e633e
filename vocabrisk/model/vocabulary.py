"""What a tokenizer's vocabulary is, read from its `tokenizer.json`.

The `tokenizers` runtime (especially its 1.0 engine) exposes almost nothing about the
vocabulary, so the id → piece table, the special and added tokens, the pipeline kind and
the fingerprint come straight from the file that defines them. What each token stands for
(its bytes, text, display form; whether it is special, reserved or a byte piece) is worked
out for the whole vocabulary at once, and cached per tokenizer by `vocabrisk.model.facts`.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from json.encoder import encode_basestring
from pathlib import Path

import numpy as np

from vocabrisk.errors import ModelError

_VISIBLE = {" ": "␣", "\n": "\\n", "\t": "\\t", "\r": "\\r"}
_RESERVED_PIECE = re.compile(r"^\[unused\d+\]$|^<unused\d+>$")
_PLACEHOLDER = re.compile(r"^\[[A-Z][A-Z_]*\]+$")
_BYTE_FALLBACK = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")


def _bytes_to_unicode() -> dict[str, int]:
    """GPT-2's byte ↔ printable-character table, inverted: character → byte."""
    printable = (
        list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    )
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars, strict=True)}


def _byte_values() -> np.ndarray:
    """GPT-2's table as an array over code points: the byte each character stands for, 256 for a
    character outside the table (the last entry stands for every code point beyond it)."""
    table = _bytes_to_unicode()
    values = np.full(max(map(ord, table)) + 2, 256, dtype=np.int64)
    values[[ord(c) for c in table]] = list(table.values())
    return values


_BYTE_VALUES = _byte_values()
BYTE_CHARS = {b: c for c, b in _bytes_to_unicode().items()}  # byte → the character a byte-level piece writes it as
UTF8_BYTES = (*range(0xC0), *range(0xC2, 0xF5))  # the bytes UTF-8 text can hold: never C0, C1, F5-FF


def missing_bytes(spec: dict) -> tuple[int, ...]:
    """The bytes of UTF-8 text that a byte-level BPE vocabulary (a parsed tokenizer.json) has no token
    for; none for other vocabularies. SmolLM2's lacks 0x04, 0x06, 0x13, 0x14, 0x16, 0x1D, 0xF1 and 0xF2:
    tokenizers 0.2x drops such a byte from the ids without a word, 1.0 refuses the vocabulary."""
    model = spec.get("model") or {}
    vocab = model.get("vocab")
    byte_level = _contains_type(spec.get("pre_tokenizer"), "ByteLevel")
    if model.get("type", "BPE") != "BPE" or not isinstance(vocab, dict) or not byte_level:
        return ()
    return tuple(b for b in UTF8_BYTES if BYTE_CHARS[b] not in vocab)


def _contains_type(node: object, type_name: str) -> bool:
    """Whether a pipeline component (possibly a Sequence of them) includes `type_name`."""
    if isinstance(node, dict):
        if node.get("type") == type_name:
            return True
        return any(_contains_type(v, type_name) for v in node.values())
    if isinstance(node, list):
        return any(_contains_type(v, type_name) for v in node)
    return False


@dataclass(frozen=True)
class AddedToken:
    id: int
    content: str
    special: bool


@dataclass(frozen=True)
class Vocabulary:
    """The pieces of a tokenizer, by id, and what its pipeline does to text."""

    path: Path
    model_type: str  # "BPE" | "Unigram" | "WordPiece" | "WordLevel"
    pieces: tuple[str | None, ...]  # index = token id; None for ids no piece maps to
    added: tuple[AddedToken, ...]
    scores: tuple[float, ...] | None  # Unigram log-probabilities, else None
    merge_ranks: dict[int, int] | None  # BPE: token id → index of the merge that makes it
    byte_level: bool
    metaspace: str | None  # the replacement character for spaces, if any ("▁")
    continuing_prefix: str | None  # WordPiece's "##"
    fingerprint: str
    truncation: dict | None  # as configured in the file; counting always disables it
    padding: dict | None

    @property
    def size(self) -> int:
        return len(self.pieces)

    @cached_property
    def special_ids(self) -> frozenset[int]:
        return frozenset(t.id for t in self.added if t.special)

    @cached_property
    def added_ids(self) -> frozenset[int]:
        return frozenset(t.id for t in self.added)

    def _mask(self, ids) -> np.ndarray:
        mask = np.zeros(self.size, dtype=bool)
        mask[list(ids)] = True
        return mask

    @cached_property
    def special_mask(self) -> np.ndarray:
        return self._mask(self.special_ids)

    @cached_property
    def added_mask(self) -> np.ndarray:
        return self._mask(self.added_ids)

    @cached_property
    def reserved_mask(self) -> np.ndarray:
        """Ids no text maps to: holes in the id range, placeholders such as BERT's `[unused7]`, and
        bracketed names such as `[PRON]` that are not added tokens (no text can produce them, since
        the pre-tokenizer splits brackets off)."""
        added = self.added_ids
        return self._mask(
            i
            for i, p in enumerate(self.pieces)
            if p is None
            or (p[:1] in ("[", "<") and (_RESERVED_PIECE.match(p) or (_PLACEHOLDER.match(p) and i not in added)))
        )

    @cached_property
    def byte_fallback_mask(self) -> np.ndarray:
        """SentencePiece byte-fallback pieces such as `<0xE3>`."""
        if self.byte_level:
            return np.zeros(self.size, dtype=bool)
        return self._mask(i for i, p in enumerate(self.pieces) if p and p[:3] == "<0x" and _BYTE_FALLBACK.match(p))

    @cached_property
    def surfaces(self) -> tuple[bytes | None, ...]:
        """The bytes each token stands for in text, or None for special tokens and holes.

        Byte-level pieces are mapped back through GPT-2's byte table, byte-fallback pieces
        (`<0xE3>`) become their byte, and the metaspace character becomes a space, so
        that tokens of every tokenizer can be grouped by the script of their text. Added
        tokens stand for their own text.
        """
        pieces = [piece or "" for piece in self.pieces]
        found = _byte_level_bytes(pieces) if self.byte_level else self._plain_bytes(pieces)
        for token in self.added:
            found[token.id] = self.pieces[token.id].encode("utf-8")
        for token_id in [*self.special_ids, *self._holes]:
            found[token_id] = None
        return tuple(found)

    @cached_property
    def _holes(self) -> list[int]:
        """Ids no piece maps to."""
        return [i for i, piece in enumerate(self.pieces) if piece is None] if None in self.pieces else []

    def _plain_bytes(self, pieces: list[str]) -> list[bytes]:
        """Each piece's UTF-8 without WordPiece's continuing prefix and with the metaspace character
        as a space; a byte-fallback piece's byte."""
        prefix = self.continuing_prefix
        if prefix:
            pieces = [p[len(prefix) :] if p.startswith(prefix) and p != prefix else p for p in pieces]
        if self.metaspace:
            pieces = [p.replace(self.metaspace, " ") for p in pieces]
        found = list(map(str.encode, pieces))
        for token_id in np.flatnonzero(self.byte_fallback_mask).tolist():
            found[token_id] = bytes([int(_BYTE_FALLBACK.match(self.pieces[token_id]).group(1), 16)])
        return found

    @cached_property
    def texts(self) -> tuple[str | None, ...]:
        """Each token's surface as text; None for special tokens, holes, and bytes that are no whole
        UTF-8 character (a byte piece such as `<0xE3>`, or a byte-level piece cut mid-character)."""
        return tuple(map(_utf8_or_none, self.surfaces))

    @cached_property
    def readables(self) -> tuple[str, ...]:
        """A short display form of every token: special tokens as is, text with visible whitespace."""
        readable = _visible([text or "" for text in self.texts])
        for token_id in [i for i, text in enumerate(self.texts) if text is None]:
            piece, raw = self.pieces[token_id], self.surfaces[token_id]
            if piece is None:
                readable[token_id] = f"<unused {token_id}>"
            elif raw is None:
                readable[token_id] = piece
            else:
                readable[token_id] = "<bytes " + raw.hex(" ") + ">"
        return tuple(readable)


def _byte_level_bytes(pieces: list[str]) -> list[bytes]:
    """Each piece's bytes through GPT-2's table, for all pieces at once; a piece with a character
    outside the table is its UTF-8 instead."""
    codes = np.frombuffer("".join(pieces).encode("utf-32-le"), dtype=np.uint32)
    values = _BYTE_VALUES[np.minimum(codes, _BYTE_VALUES.size - 1)]
    found = _cut(values.astype(np.uint8).tobytes(), pieces)
    lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
    outside = np.repeat(np.arange(len(pieces)), lengths)[values > 255]
    for token_id in np.unique(outside).tolist():
        found[token_id] = pieces[token_id].encode("utf-8")
    return found


def _visible(texts: list[str]) -> list[str]:
    """Each text with whitespace shown and unprintable characters escaped, for all texts at once.

    Whitespace (in most tokens of a byte-level vocabulary) is replaced in the texts joined by a
    character none of them holds, then split apart again; the rare texts with an unprintable
    character are translated one by one.
    """
    if not texts:
        return []
    joined = "".join(texts)
    codes = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
    count = np.bincount(codes) if codes.size else np.zeros(1, dtype=np.int64)
    table = _visible_table(map(chr, np.flatnonzero(count).tolist()))
    separator = chr(np.flatnonzero(np.append(count, 0) == 0)[0])
    shown = separator.join(texts)
    for char in _VISIBLE:
        if ord(char) in table:
            shown = shown.replace(char, table[ord(char)])
    shown = shown.split(separator)
    unprintable = np.zeros(count.size, dtype=bool)
    unprintable[[c for c in table if chr(c) not in _VISIBLE]] = True
    ends = np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)))
    for token_id in np.unique(np.searchsorted(ends, np.flatnonzero(unprintable[codes]), side="right")).tolist():
        shown[token_id] = texts[token_id].translate(table)
    return shown


def _cut(whole: str | bytes, parts: list, ends: np.ndarray | None = None) -> list:
    """`whole` cut back into one slice per part, at `ends` (default: the parts' own lengths)."""
    if ends is None:
        ends = np.cumsum(np.fromiter(map(len, parts), dtype=np.int64, count=len(parts)))
    stops = ends.tolist()
    return list(map(whole.__getitem__, map(slice, [0, *stops[:-1]], stops)))


def _utf8_or_none(raw: bytes | None) -> str | None:
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _visible_table(chars: Iterable[str]) -> dict[int, str]:
    """`str.translate` table showing whitespace and escaping what cannot be printed, for `chars`."""
    return {ord(c): _VISIBLE.get(c) or f"\\x{ord(c):02x}" for c in chars if c in _VISIBLE or not c.isprintable()}


def _fingerprint(spec: dict) -> str:
    """Hash of the encoding pipeline, ignoring truncation and padding (counting disables both)."""
    canonical = {k: v for k, v in spec.items() if k not in ("truncation", "padding")}
    digest = hashlib.sha256()
    for part in _canonical_json(canonical, ("model", "vocab")):
        digest.update(part.encode("utf-8"))
    return "sha256:" + digest.hexdigest()


def _canonical_json(value: object, vocab_path: tuple[str, ...] | None) -> Iterator[str]:
    """`json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))`, the text the
    fingerprint has always hashed, in parts (so that it is hashed without being joined) and
    written faster for the piece → id dict at `vocab_path`: the encoder sorts and writes a dict
    item by item, several times slower than sorting its keys and writing each key and id with
    the encoder's own string escaping."""
    if vocab_path == () and isinstance(value, dict) and all(type(i) is int for i in value.values()):
        keys = sorted(value)
        yield "{" + ",".join(map("{}:{}".format, map(encode_basestring, keys), map(value.__getitem__, keys))) + "}"
    elif not vocab_path or not isinstance(value, dict):
        yield json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    else:
        separator = "{"
        for key in sorted(value):
            yield separator + encode_basestring(key) + ":"
            yield from _canonical_json(value[key], vocab_path[1:] if key == vocab_path[0] else None)
            separator = ","
        yield "}" if separator == "," else "{}"


def _pieces_and_scores(model: dict) -> tuple[dict[int, str], list[float] | None]:
    vocab = model.get("vocab")
    if isinstance(vocab, list):  # Unigram: [[piece, score], ...] in id order
        return {i: entry[0] for i, entry in enumerate(vocab)}, [float(e[1]) for e in vocab]
    if isinstance(vocab, dict):
        return dict(zip(map(int, vocab.values()), vocab, strict=True)), None
    raise ModelError(
        "tokenizer.json has no readable model.vocab", hint="re-save it with `tokenizers` or `transformers`"
    )


def _merge_ranks(model: dict, piece_to_id: dict[str, int]) -> dict[int, int]:
    """Token id → index of the first merge that makes it, for every token a merge makes."""
    merges = model.get("merges") or []
    # "a b" joins to "ab" (the first space is the separator); newer files store pairs.
    joined = [m.replace(" ", "", 1) if isinstance(m, str) else "".join(m) for m in merges]
    made = np.fromiter(map(piece_to_id.get, joined, itertools.repeat(-1)), dtype=np.int64, count=len(joined))
    ids, first = np.unique(made, return_index=True)  # first: the earliest merge making each id
    keep = ids >= 0
    return dict(zip(ids[keep].tolist(), first[keep].tolist(), strict=True))


def read_tokenizer_file(tokenizer_json: Path | str) -> tuple[bytes, str]:
    """A tokenizer file's bytes and their sha256, read once per process while the file is unchanged:
    the vocabulary facts, the count job and each `rank` candidate's scan all need them."""
    path = Path(tokenizer_json).resolve()
    status = path.stat()
    return _read_file(path, status.st_mtime_ns, status.st_size)


@functools.lru_cache(maxsize=4)
def _read_file(path: Path, mtime_ns: int, size: int) -> tuple[bytes, str]:
    content = path.read_bytes()
    return content, hashlib.sha256(content).hexdigest()


def load_vocabulary(tokenizer_json: Path, content: bytes | None = None) -> Vocabulary:
    """Read a `tokenizer.json` (or its `content`, already read) into a `Vocabulary`; raise `ModelError`
    with a hint on failure."""
    try:
        spec = json.loads(Path(tokenizer_json).read_bytes() if content is None else content)
    except OSError as exc:
        raise ModelError(f"{tokenizer_json}: cannot read tokenizer file: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(
            f"{tokenizer_json}: not a valid tokenizer file: {exc}", hint=f"the file is truncated or corrupt; {_RESAVE}"
        ) from exc
    if not isinstance(spec, dict):
        raise ModelError(f"{tokenizer_json}: not a tokenizer file (its JSON is no object)", hint=_RESAVE)
    try:
        return _vocabulary(Path(tokenizer_json), spec)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise ModelError(
            f"{tokenizer_json}: not a tokenizer file vocabrisk can read ({type(exc).__name__}: {exc})", hint=_RESAVE
        ) from exc


_RESAVE = "re-download it with the model, or re-save it with `tokenizers` or `transformers`"


def _vocabulary(tokenizer_json: Path, spec: dict) -> Vocabulary:
    model = spec.get("model") or {}
    model_type = model.get("type") or ("Unigram" if isinstance(model.get("vocab"), list) else None)
    if model_type is None:
        model_type = "WordPiece" if "continuing_subword_prefix" in model and "merges" not in model else "BPE"
    by_id, scores = _pieces_and_scores(model)
    added = tuple(
        AddedToken(int(t["id"]), t["content"], bool(t.get("special"))) for t in spec.get("added_tokens") or []
    )
    for token in added:
        by_id[token.id] = token.content
    size = max(by_id) + 1 if by_id else 0
    pieces = tuple(map(by_id.get, range(size)))
    merge_ranks = None
    if model_type == "BPE":
        merge_ranks = _merge_ranks(model, dict(zip(by_id.values(), by_id, strict=True)))
    metaspace = None
    for component in (spec.get("pre_tokenizer"), spec.get("normalizer"), spec.get("decoder")):
        text = json.dumps(component or {}, ensure_ascii=False)
        if "▁" in text:
            metaspace = "▁"
    return Vocabulary(
        path=Path(tokenizer_json),
        model_type=model_type,
        pieces=pieces,
        added=added,
        scores=tuple(scores) if scores is not None else None,
        merge_ranks=merge_ranks,
        byte_level=_contains_type(spec.get("pre_tokenizer"), "ByteLevel")
        or _contains_type(spec.get("decoder"), "ByteLevel"),
        metaspace=metaspace,
        continuing_prefix=model.get("continuing_subword_prefix") if model_type == "WordPiece" else None,
        fingerprint=_fingerprint(spec),
        truncation=spec.get("truncation"),
        padding=spec.get("padding"),
    )
