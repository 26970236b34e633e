"""Models kept as GGUF files (llama.cpp, Ollama, LM Studio): tokenizer and head from one file.

A GGUF file holds the tokenizer as metadata (tokens, merges, token types, special ids, the
name of the pre-tokenizer) and the weights as tensors, usually quantized. From it we build:

- a `tokenizer.json` that counts exactly like the model's original one: the vocabulary and
  merges are the original's, special and user-defined tokens become added tokens, and the
  pre-tokenizer is the one llama.cpp's pre-tokenizer name stands for. Only pre-tokenizers
  whose `tokenizers` equivalent is known are accepted; any other is refused rather than
  counted approximately. It is written, with a small tokenizer_config.json and config.json, to
  a folder of the user's cache (`vocabrisk.storage.cache`) named by the GGUF file's content, and read
  from there like any model folder.
- the head: `output.weight`, or `token_embd.weight` when the head is tied, located by its
  byte offset in the file. F32/F16/BF16 heads are memory-mapped as safetensors heads are;
  quantized ones are de-quantized (with the `gguf` package) a block of rows at a time, so
  that memory stays near the float32 size of the rows asked for, never the model's.

Needs the optional `gguf` package: `pip install 'vocabrisk[gguf]'`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import shutil
import tempfile
from pathlib import Path

import numpy as np

from vocabrisk._version import __version__
from vocabrisk.errors import ModelError, require
from vocabrisk.storage.cache import cache_folder
from vocabrisk.storage.outputs import atomic_file

SUFFIX = ".gguf"
DEQUANTIZE_ROWS = 2048  # rows de-quantized at a time: their float32 copy plus gguf's temporaries
HASH_CHUNK = 8 << 20
RECORD = "gguf.json"  # beside the tokenizer files: the config and where the head is

# llama.cpp's token types (gguf.TokenType)
_CONTROL, _USER_DEFINED = 3, 4

# The Hugging Face equivalent of each llama.cpp pre-tokenizer name (tokenizer.ggml.pre) for
# byte-level BPE vocabularies (tokenizer.ggml.model "gpt2"). Each one listed is checked
# token for token against the original tokenizer in tests/model/test_gguf.py.
_BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
_DIGITS_THEN_BYTE_LEVEL = {
    "type": "Sequence",
    "pretokenizers": [{"type": "Digits", "individual_digits": True}, _BYTE_LEVEL],
}
PRE_TOKENIZERS = {
    "gpt2": _BYTE_LEVEL,  # GPT-2 and models trained with its pre-tokenizer
    "default": _BYTE_LEVEL,
    # llama.cpp: "\p{N}" then GPT-2's expression; Hugging Face: Digits(individual) + ByteLevel
    "smollm": _DIGITS_THEN_BYTE_LEVEL,
    "starcoder": _DIGITS_THEN_BYTE_LEVEL,
    "refact": _DIGITS_THEN_BYTE_LEVEL,
    "codeshell": _DIGITS_THEN_BYTE_LEVEL,
}


def is_gguf(path: Path) -> bool:
    return path.suffix.lower() == SUFFIX and path.is_file()


def find_in_folder(folder: Path) -> Path | None:
    """The one GGUF file of a folder with no tokenizer.json, or None when it has none."""
    found = sorted(p for p in folder.glob(f"*{SUFFIX}") if p.is_file())
    if len(found) > 1:
        raise ModelError(
            f"{folder}: holds {len(found)} GGUF files ({', '.join(p.name for p in found[:4])}...)",
            hint="pass the one to read, as --model FOLDER/NAME.gguf",
        )
    return found[0] if found else None


def _reader(path: Path):
    gguf = require("gguf", "gguf", f"{path}: reading GGUF files")
    try:
        return gguf.GGUFReader(path, "r")
    except (OSError, ValueError, KeyError, IndexError) as exc:
        raise ModelError(f"{path}: not a readable GGUF file ({type(exc).__name__}: {exc})", hint=_REDOWNLOAD) from exc


_REDOWNLOAD = "check the file is complete (re-download it); vocabrisk reads GGUF version 2 and 3"


def _field(reader, key: str, default=None):
    field = reader.fields.get(key)
    return default if field is None else field.contents()


def prepare(path: Path) -> tuple[Path, dict]:
    """The model folder written from the GGUF's tokenizer, and its config."""
    record = _converted(path)
    return Path(record["folder"]), record["config"]


def locate_head(path: Path) -> tuple[dict | None, str | None]:
    """Where the head is in the file, as the fields of `HeadInfo` plus the final norm's
    vectors under "norm"; (None, why) when it has none."""
    record = _converted(path)
    return record["head"], record["note"]


def parameter_count(path: Path) -> int:
    """How many weights the GGUF file holds: its tensors' elements, from the header."""
    return sum(int(tensor.n_elements) for tensor in _reader(path).tensors)


def _converted(path: Path) -> dict:
    try:
        status = path.stat()
    except OSError as exc:
        raise ModelError(f"{path}: cannot read the GGUF file ({exc.strerror})", hint="check the path") from exc
    path = path.resolve()
    record = json.loads(json.dumps(_converted_at(path, status.st_size, status.st_mtime_ns)))  # callers may change it
    if record["head"] is not None:  # kept without the file's name: the same content may lie under another
        for ref in [record["head"], *record["head"]["norm"].values()]:
            ref["file"] = str(path)
    return record


@functools.lru_cache(maxsize=8)
def _converted_at(path: Path, size: int, mtime_ns: int) -> dict:
    """Parsing a GGUF's metadata takes seconds (one Python object per token and merge), so what
    vocabrisk needs from a file (its tokenizer's folder and config, where its head is) is kept in
    the user's cache folder, in a folder named by the file's content and the vocabrisk version."""
    folder = _cache() / f"{_fingerprint(path, size, mtime_ns)}-{__version__}"
    with contextlib.suppress(OSError, ValueError, KeyError):
        record = json.loads((folder / RECORD).read_text(encoding="utf-8"))
        return {"folder": str(folder), **{key: record[key] for key in ("config", "head", "note")}}
    reader = _reader(path)
    try:
        files, config = _folder_files(reader, path)
        head, note = _head(reader)
    except (ValueError, TypeError, KeyError, IndexError) as exc:  # UnicodeDecodeError is a ValueError
        raise ModelError(
            f"{path}: the GGUF file's metadata is damaged ({type(exc).__name__}: {exc})", hint=_REDOWNLOAD
        ) from exc
    files[RECORD] = json.dumps({"config": config, "head": head, "note": note})
    return {"folder": str(_write_folder(folder, files)), "config": config, "head": head, "note": note}


def _cache() -> Path:
    return cache_folder() / "gguf"


def _fingerprint(path: Path, size: int, mtime_ns: int) -> str:
    """sha256 of the file's bytes, remembered under its path, size and modification time (hashing
    gigabytes takes seconds)."""
    known = _cache() / "files" / hashlib.sha256(f"{path}\0{size}\0{mtime_ns}".encode()).hexdigest()[:32]
    with contextlib.suppress(OSError, UnicodeDecodeError):
        digest = known.read_text(encoding="utf-8")
        if len(digest) == 64:
            return digest
    digest = hashlib.sha256()
    try:
        with path.open("rb") as file:
            while chunk := file.read(HASH_CHUNK):
                digest.update(chunk)
    except OSError as exc:
        raise ModelError(f"{path}: cannot read the GGUF file ({exc.strerror})", hint="check the path") from exc
    with contextlib.suppress(OSError), atomic_file(known, text=True) as file:
        file.write(digest.hexdigest())
    return digest.hexdigest()


def _write_folder(folder: Path, files: dict[str, str]) -> Path:
    """Write `files` as `folder`, whole or not at all: written beside it and renamed. Where the cache
    folder cannot be written, a temporary folder holds them (the next scan converts again)."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".partial-"))
    except OSError:
        folder = partial = Path(tempfile.mkdtemp(prefix="vocabrisk-gguf-"))
    for name, text in files.items():
        (partial / name).write_text(text, encoding="utf-8")
    if partial != folder:
        try:
            partial.rename(folder)
        except OSError:  # another process got there first: its folder is the same
            shutil.rmtree(partial, ignore_errors=True)
    return folder


def _folder_files(reader, path: Path) -> tuple[dict[str, str], dict]:
    """The model folder's files for the GGUF's tokenizer, by name, and its config."""
    spec = tokenizer_spec(reader, path)
    architecture = _field(reader, "general.architecture", "")
    names = {t.name for t in reader.tensors}
    tokens = spec["model"]["vocab"]
    by_id = {i: piece for piece, i in tokens.items()}
    special = {key: _field(reader, f"tokenizer.ggml.{key}_token_id") for key in ("bos", "eos")}
    config = {
        "model_type": architecture,
        "architectures": [f"{architecture} (GGUF)"],
        "tie_word_embeddings": "output.weight" not in names,
        "vocab_size": len(tokens),
        **{f"{key}_token_id": value for key, value in special.items() if value is not None},
    }
    tokenizer_config = {f"{key}_token": by_id.get(value) for key, value in special.items() if value is not None}
    files = {
        "tokenizer.json": json.dumps(spec, ensure_ascii=False),
        "tokenizer_config.json": json.dumps(tokenizer_config, ensure_ascii=False),
        "config.json": json.dumps(config, ensure_ascii=False),
    }
    return files, config


def tokenizer_spec(reader, path: Path) -> dict:
    """The tokenizer.json (as a dict) that the GGUF's tokenizer metadata describes."""
    kind = _field(reader, "tokenizer.ggml.model")
    pre = _field(reader, "tokenizer.ggml.pre", "default")
    if kind is None:
        raise ModelError(f"{path}: the GGUF file holds no tokenizer", hint="pass the model's own folder or hub id")
    if kind != "gpt2":
        raise ModelError(
            f"{path}: GGUF tokenizers of type '{kind}' are not supported yet (vocabrisk reads byte-level BPE ones)",
            hint="pass the original model's folder or hub id (with its tokenizer.json) instead",
        )
    if pre not in PRE_TOKENIZERS:
        raise ModelError(
            f"{path}: pre-tokenizer '{pre}' has no known exact equivalent, so counts could differ from the model's",
            hint=f"known: {', '.join(sorted(PRE_TOKENIZERS))}; pass the original model's folder or hub id instead",
        )
    tokens = _field(reader, "tokenizer.ggml.tokens")
    types = _field(reader, "tokenizer.ggml.token_type") or [1] * len(tokens)
    merges = _field(reader, "tokenizer.ggml.merges") or []
    added = [
        {
            "id": i,
            "content": token,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": kind_of == _USER_DEFINED,
            "special": kind_of == _CONTROL,
        }
        for i, (token, kind_of) in enumerate(zip(tokens, types, strict=True))
        if kind_of in (_CONTROL, _USER_DEFINED)
    ]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": PRE_TOKENIZERS[pre],
        "post_processor": _post_processor(reader, tokens),
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": {token: i for i, token in enumerate(tokens)},
            "merges": merges,
        },
    }


def _post_processor(reader, tokens: list[str]) -> dict:
    """What encoding adds around a document: BOS/EOS where the GGUF says the model adds them."""
    bos, eos = (
        _field(reader, f"tokenizer.ggml.{key}_token_id") if _field(reader, f"tokenizer.ggml.add_{key}_token") else None
        for key in ("bos", "eos")
    )
    if bos is None and eos is None:
        return {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True}

    def template(sequence: str) -> list[dict]:
        before = [{"SpecialToken": {"id": tokens[bos], "type_id": 0}}] if bos is not None else []
        after = [{"SpecialToken": {"id": tokens[eos], "type_id": 0}}] if eos is not None else []
        return [*before, {"Sequence": {"id": sequence, "type_id": 0}}, *after]

    added = [i for i in (bos, eos) if i is not None]
    return {
        "type": "TemplateProcessing",
        "single": template("A"),
        "pair": template("A") + template("B"),
        "special_tokens": {tokens[i]: {"id": tokens[i], "ids": [i], "tokens": [tokens[i]]} for i in added},
    }


def _head(reader) -> tuple[dict | None, str | None]:
    """Where the head is, without the file's name (`locate_head` adds it)."""
    tensors = {t.name: t for t in reader.tensors}
    name = "output.weight" if "output.weight" in tensors else "token_embd.weight"
    tensor = tensors.get(name)
    if tensor is None:
        return None, "no output or token embedding tensor in the GGUF file (tokenizer only); counts only"
    hidden, rows = (int(n) for n in tensor.shape[:2])
    norm = {part: _vector_ref(tensors.get(f"output_norm.{part}")) for part in ("weight", "bias")}
    return {
        "tensor": name,
        "rows": rows,
        "hidden": hidden,
        "dtype": tensor.tensor_type.name,
        "tied": name != "output.weight",
        "data_offset": int(tensor.data_offset),
        "norm": {part: ref for part, ref in norm.items() if ref is not None},
    }, None


def _vector_ref(tensor) -> dict | None:
    """A 1-D float tensor as the dict `head.read_vector` takes, less its "file"."""
    if tensor is None or tensor.tensor_type.name not in ("F32", "F16") or len(tensor.shape) != 1:
        return None
    return {
        "name": tensor.name,
        "dtype": tensor.tensor_type.name,
        "shape": [int(tensor.shape[0])],
        "data_offset": int(tensor.data_offset),
    }


def quantized_nbytes(dtype: str, rows: int, hidden: int) -> int:
    import gguf

    block, size = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType[dtype]]
    return rows * (hidden // block) * size


def read_quantized(path: Path, dtype: str, offset: int, shape: tuple[int, int], rows: slice | None) -> np.ndarray:
    """Rows of a quantized matrix as float32, de-quantized `DEQUANTIZE_ROWS` rows at a time."""
    import gguf
    from gguf.quants import dequantize

    quant = gguf.GGMLQuantizationType[dtype]
    n_rows, hidden = shape
    raw = np.memmap(path, dtype=np.uint8, mode="r", offset=offset, shape=(n_rows, quantized_nbytes(dtype, 1, hidden)))
    wanted = np.arange(n_rows)[rows] if rows is not None else np.arange(n_rows)
    out = np.empty((wanted.size, hidden), dtype=np.float32)
    for start in range(0, wanted.size, DEQUANTIZE_ROWS):
        part = wanted[start : start + DEQUANTIZE_ROWS]
        contiguous = part.size and part[-1] - part[0] == part.size - 1
        block = raw[part[0] : part[-1] + 1] if contiguous else raw[part]
        out[start : start + part.size] = dequantize(np.asarray(block), quant)
    return out
