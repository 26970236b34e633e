"""The model's tokenizer, loaded once per process, on either `tokenizers` API, and in fastokens.

A byte-level vocabulary without a token for every byte UTF-8 text can hold (SmolLM2's lacks eight) is
loaded with the tokens it lacks added past its last id: 1.0 refuses such a vocabulary as it is, and
0.2x (and fastokens) drop those bytes from the ids without a word. Every engine then gives the same
ids for any text, and an id past the vocabulary marks text the model cannot read
(`vocabrisk.counting.counter`). Which engine counts is `vocabrisk.counting.engines`'s choice.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import sys
import tempfile
from pathlib import Path

from vocabrisk.errors import ModelError
from vocabrisk.model.vocabulary import BYTE_CHARS, UTF8_BYTES, missing_bytes, read_tokenizer_file

# By sha256 of the file: its tokenizer, shared by every encoder of the process, and the bytes it lacks (kept
# when the tokenizer is released: `release_tokenizer`).
_TOKENIZERS: dict[str, object] = {}
_LACKING: dict[str, tuple[int, ...]] = {}
_FASTOKENS: dict[str, object] = {}  # the same, in fastokens


def tokenizers_version() -> str:
    """The installed `tokenizers`, for reports and benchmarks ("engine" in their output)."""
    import tokenizers

    return f"tokenizers {tokenizers.__version__}"


def fastokens_version() -> str | None:
    """The installed fastokens, as reports name it ("fastokens 0.3.5"); None where it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"fastokens {version('fastokens')}"
    except PackageNotFoundError:
        return None


def is_fast_api() -> bool:
    """Whether the installed `tokenizers` has the 1.0 API, the fast path."""
    from tokenizers import Tokenizer

    return not hasattr(Tokenizer, "no_truncation")


def load_tokenizer(tokenizer_json: Path | str):
    """The file's `tokenizers.Tokenizer`, loaded once per process for each content (seconds for a large
    vocabulary).

    `tokenizers` is imported here, by the commands that count, not by those that only read profiles.
    """
    return _loaded(tokenizer_json)[0]


def lacking_bytes(tokenizer_json: Path | str) -> tuple[int, ...]:
    """The bytes the file's byte-level vocabulary has no token for: its tokenizer encodes the one at
    position i of this tuple as the id `vocabulary size + i`."""
    digest = read_tokenizer_file(tokenizer_json)[1]
    return _LACKING[digest] if digest in _LACKING else _loaded(tokenizer_json)[1]


def release_tokenizer(tokenizer_json: Path | str) -> None:
    """Forget the file's `tokenizers.Tokenizer` (the bytes it lacks stay known): for a scan on which the
    accelerator counts alone, so that the reference's ~100 MB at a 150k vocabulary is not held beside it. The
    next `load_tokenizer` loads it again."""
    _TOKENIZERS.pop(read_tokenizer_file(tokenizer_json)[1], None)
    give_back_memory()


def give_back_memory() -> None:
    """Return the pages freed memory leaves mapped to the system (glibc's `malloc_trim`, every arena; 10-20 ms):
    without it a released tokenizer still counts in the process's resident memory."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):  # glibc's; other C libraries lack it
            ctypes.CDLL(None).malloc_trim(0)


def _loaded(tokenizer_json: Path | str) -> tuple[object, tuple[int, ...]]:
    content, digest = read_tokenizer_file(tokenizer_json)
    if digest not in _TOKENIZERS:
        try:
            _TOKENIZERS[digest], _LACKING[digest] = _load(str(tokenizer_json), content)
        except Exception as exc:  # 0.2x raises a bare Exception for a file it cannot parse
            raise ModelError(
                f"{tokenizer_json}: {tokenizers_version()} cannot load this tokenizer file ({exc})",
                hint="re-download it with the model, or re-save it with `tokenizers` or `transformers`",
            ) from exc
    return _TOKENIZERS[digest], _LACKING[digest]


def _load(path: str, content: bytes) -> tuple[object, tuple[int, ...]]:
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(path)
    except ValueError:  # 1.0 refuses a byte-level vocabulary that lacks a byte (among other faults)
        spec = _parsed(content)
        if not missing_bytes(spec):
            raise
    else:  # 1.0 loads a vocabulary only whole; 0.2x is asked which bytes it has
        if is_fast_api() or not _may_lack_bytes(tokenizer, content):
            return tokenizer, ()
        spec = _parsed(content)
        if not missing_bytes(spec):
            return tokenizer, ()
    missing = missing_bytes(spec)
    with tempfile.TemporaryDirectory(prefix="vocabrisk-") as folder:
        completed = Path(folder, "tokenizer.json")
        completed.write_text(json.dumps(_with_bytes(spec, missing), ensure_ascii=False), encoding="utf-8")
        return Tokenizer.from_file(str(completed)), missing


def _parsed(content: bytes) -> dict:
    """The file as JSON; {} where it is none (the tokenizer's own error is then the one reported)."""
    with contextlib.suppress(ValueError):
        spec = json.loads(content)
        if isinstance(spec, dict):
            return spec
    return {}


def _may_lack_bytes(tokenizer, content: bytes) -> bool:
    """Whether a tokenizer loaded by 0.2x is byte-level BPE without a token for some byte (cheaply:
    the file is parsed only then)."""
    model = tokenizer.model
    if b'"ByteLevel"' not in content or type(model).__name__ != "BPE":
        return False
    return any(model.token_to_id(BYTE_CHARS[b]) is None for b in UTF8_BYTES)


def _with_bytes(spec: dict, missing: tuple[int, ...]) -> dict:
    """The tokenizer with a token for each missing byte, numbered on from its last id."""
    vocab = dict(spec["model"]["vocab"])
    size = 1 + max([*vocab.values(), *(int(t["id"]) for t in spec.get("added_tokens") or [])])
    vocab.update({BYTE_CHARS[b]: size + i for i, b in enumerate(missing)})
    return {**spec, "model": {**spec["model"], "vocab": vocab}}


def load_fastokens(tokenizer_json: Path | str):
    """The file's `fastokens.Tokenizer`, loaded once per process for each content, with the bytes the
    vocabulary lacks added as for `tokenizers` (so that its ids are the same), truncation and padding off.

    ImportError where fastokens is not installed; ValueError where it refuses the file (a component it
    does not implement).
    """
    content, digest = read_tokenizer_file(tokenizer_json)
    if digest not in _FASTOKENS:
        import fastokens

        missing = lacking_bytes(tokenizer_json)  # as the reference found them, so that both give the same ids
        if missing:
            spec = _with_bytes(_parsed(content), missing)
            tokenizer = fastokens.Tokenizer.from_json_str(json.dumps(spec, ensure_ascii=False))
        else:
            tokenizer = fastokens.Tokenizer.from_file(str(tokenizer_json))
        tokenizer.no_truncation()
        tokenizer.no_padding()
        _FASTOKENS[digest] = tokenizer
    return _FASTOKENS[digest]


def release_tokenizers() -> None:
    """Forget every tokenizer loaded for counting (both engines'); a later count loads them again."""
    _TOKENIZERS.clear()
    _LACKING.clear()
    _FASTOKENS.clear()


def preload_tokenizer(tokenizer_json: Path | str) -> None:
    """Load the file's tokenizer ahead of counting, while this process has nothing else to do. A file
    it cannot load is passed over: counting loads it again, and reports the error there."""
    with contextlib.suppress(Exception):
        load_tokenizer(tokenizer_json)
