"""What a tokenizer's vocabulary is, read from its `tokenizer.json`.

The `tokenizers` runtime (especially its 1.0 engine) exposes almost nothing about the
vocabulary, so the id → piece table, the special and added tokens, the pipeline kind and
the fingerprint come straight from the file that defines them. What each token stands for
(its bytes, text, display form; whether it is special, reserved or a byte piece) is worked
out for the whole vocabulary at once, and cached per tokenizer by `vocabrisk.facts`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass
from functools import cached_property
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


# Characters of GPT-2's table → their byte as a latin-1 character; the other characters below
# 256 → one latin-1 cannot encode, so that a piece with a character outside the table fails to encode.
_BYTE_LEVEL_TABLE = {ord(c): chr(b) for c, b in _bytes_to_unicode().items()}
_BYTE_LEVEL_TABLE.update({o: "\u0100" for o in range(256) if o not in _BYTE_LEVEL_TABLE})


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

    def id_of(self, content: str) -> int | None:
        for token in self.added:
            if token.content == content:
                return token.id
        try:
            return self.pieces.index(content)
        except ValueError:
            return None

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
        that tokens of every tokenizer can be grouped by the script of their text.
        """
        return tuple(self._surface(i, p) for i, p in enumerate(self.pieces))

    def _surface(self, token_id: int, piece: str | None) -> bytes | None:
        if piece is None or token_id in self.special_ids:
            return None
        if token_id in self.added_ids:
            return piece.encode("utf-8")
        if self.byte_level:
            try:  # every character in GPT-2's table becomes its byte; any other makes this fail
                return piece.translate(_BYTE_LEVEL_TABLE).encode("latin-1")
            except UnicodeEncodeError:
                return piece.encode("utf-8")
        if piece.startswith("<0x"):
            match = _BYTE_FALLBACK.match(piece)
            if match:
                return bytes([int(match.group(1), 16)])
        if self.continuing_prefix and piece.startswith(self.continuing_prefix) and piece != self.continuing_prefix:
            piece = piece[len(self.continuing_prefix) :]
        if self.metaspace:
            piece = piece.replace(self.metaspace, " ")
        return piece.encode("utf-8")

    @cached_property
    def texts(self) -> tuple[str | None, ...]:
        """Each token's surface as text; None for special tokens, holes, and bytes that are no whole
        UTF-8 character (a byte piece such as `<0xE3>`, or a byte-level piece cut mid-character)."""
        return tuple(_utf8_or_none(raw) for raw in self.surfaces)

    @cached_property
    def readables(self) -> tuple[str, ...]:
        """A short display form of every token: special tokens as is, text with visible whitespace."""
        visible = _visible_table(set("".join(t for t in self.texts if t)))
        rows = zip(self.pieces, self.surfaces, self.texts, strict=True)
        return tuple(_readable(token_id, *row, visible) for token_id, row in enumerate(rows))


def _readable(token_id: int, piece: str | None, raw: bytes | None, text: str | None, visible: dict) -> str:
    if piece is None:
        return f"<unused {token_id}>"
    if raw is None:
        return piece
    if text is None:
        return "<bytes " + raw.hex(" ") + ">"
    return text.translate(visible)


def _utf8_or_none(raw: bytes | None) -> str | None:
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _visible_table(chars: set[str]) -> dict[int, str]:
    """`str.translate` table showing whitespace and escaping what cannot be printed, for `chars`."""
    return {ord(c): _VISIBLE.get(c) or f"\\x{ord(c):02x}" for c in chars if c in _VISIBLE or not c.isprintable()}


def _fingerprint(spec: dict) -> str:
    """Hash of the encoding pipeline, ignoring truncation and padding (counting disables both)."""
    canonical = {k: v for k, v in spec.items() if k not in ("truncation", "padding")}
    blob = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _pieces_and_scores(model: dict) -> tuple[dict[int, str], list[float] | None]:
    vocab = model.get("vocab")
    if isinstance(vocab, list):  # Unigram: [[piece, score], ...] in id order
        return {i: entry[0] for i, entry in enumerate(vocab)}, [float(e[1]) for e in vocab]
    if isinstance(vocab, dict):
        return {int(i): piece for piece, i in vocab.items()}, None
    raise ModelError(
        "tokenizer.json has no readable model.vocab", hint="re-save it with `tokenizers` or `transformers`"
    )


def _merge_ranks(model: dict, piece_to_id: dict[str, int]) -> dict[int, int]:
    ranks: dict[int, int] = {}
    for rank, merge in enumerate(model.get("merges") or []):
        left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
        token_id = piece_to_id.get(left + right)
        if token_id is not None and token_id not in ranks:
            ranks[token_id] = rank
    return ranks


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
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(f"{tokenizer_json}: cannot read tokenizer file: {exc}") from exc
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
    pieces = tuple([by_id.get(i) for i in range(size)])
    merge_ranks = None
    if model_type == "BPE":
        merge_ranks = _merge_ranks(model, {p: i for i, p in by_id.items()})
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
