"""Find and read a model's output-embedding matrix (lm_head), and nothing else.

Only safetensors headers are parsed to find the head; the matrix itself is memory-mapped
from its shard, so reading the head of a 70B checkpoint costs the head's size, not the
model's. Pickle checkpoints (`.bin`, `.pt`) can run code when loaded and are not read: such
a folder is profiled with its tokenizer and a tokenizer prior, and the note says how to
convert the weights to safetensors for the head prior.
"""

from __future__ import annotations

import json
import struct
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np

from vocabrisk.errors import ModelError
from vocabrisk.model.resolve import ModelFiles

# Names differ across families; suffixes cover prefixes such as `model.` or `language_model.`.
HEAD_SUFFIXES = ("lm_head.weight", "embed_out.weight", "output_layer.weight")
HEAD_EXACT = ("output.weight",)
EMBEDDING_SUFFIXES = (
    "embed_tokens.weight",
    "wte.weight",
    "embed_in.weight",
    "word_embeddings.weight",
    "tok_embeddings.weight",
)
FINAL_NORM_SUFFIXES = ("ln_f.weight", "model.norm.weight", "final_layer_norm.weight", "final_layernorm.weight")
ENCODER_TYPES = {
    "bert",
    "roberta",
    "distilbert",
    "albert",
    "electra",
    "deberta",
    "deberta-v2",
    "xlm-roberta",
    "mpnet",
    "camembert",
    "modernbert",
}

_NUMPY_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64}
_DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2}


@dataclass(frozen=True)
class HeadInfo:
    """Where the head lives and what shape it has; `tied` when it is the input embedding."""

    tensor: str
    file: str  # path of the safetensors (or GGUF) file holding it
    rows: int
    hidden: int
    dtype: str  # F32, F16, BF16, F64; for GGUF heads also a quantization type (Q4_1, Q8_0, ...)
    tied: bool
    data_offset: int  # absolute byte offset of the matrix in `file`
    final_norm_rms: float | None = None  # typical hidden-state coordinate size, when a final norm is found
    final_norm_bias: dict | None = None  # the final LayerNorm's bias: the part of every hidden state no context changes

    @property
    def nbytes(self) -> int:
        if self.dtype not in _DTYPE_BYTES:
            from vocabrisk.model.gguf import quantized_nbytes

            return quantized_nbytes(self.dtype, self.rows, self.hidden)
        return self.rows * self.hidden * _DTYPE_BYTES[self.dtype]

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> HeadInfo:
        """The head as `to_dict` wrote it (a saved profile's profile.json)."""
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


def read_safetensors_header(path: Path) -> tuple[dict, int]:
    """The JSON header of a safetensors file and the offset where its data starts.

    The format is 8 bytes (little-endian length) + JSON; reading it directly gives the byte
    offsets needed to memory-map one tensor, and bf16, which numpy cannot load through the
    safetensors API.
    """
    try:
        with path.open("rb") as fh:
            (length,) = struct.unpack("<Q", fh.read(8))
            if length > 100_000_000:
                raise ValueError("header length is implausible")
            header = json.loads(fh.read(length))
        end = 8 + length + max([_data_end(name, entry) for name, entry in _entries(header)], default=0)
        size = path.stat().st_size
    except (OSError, struct.error, ValueError) as exc:
        raise ModelError(f"{path}: not a readable safetensors file ({exc})", hint=REDOWNLOAD) from exc
    if size < end:
        raise ModelError(
            f"{path}: truncated: its header describes {end:,} bytes of tensors but the file has {size:,}",
            hint=f"the download was cut short or the file is corrupt; {REDOWNLOAD}",
        )
    return header, 8 + length


REDOWNLOAD = "re-download the weights (for a hub model: `hf download REPO_ID --force-download`)"


def _entries(header: object) -> list[tuple[str, dict]]:
    if not isinstance(header, dict):
        raise ValueError("the header is not a JSON object")
    return [(name, entry) for name, entry in header.items() if name != "__metadata__"]


def _data_end(name: str, entry: object) -> int:
    """Where a tensor's bytes end, after checking its header entry is one safetensors writes."""
    ok = isinstance(entry, dict) and isinstance(entry.get("dtype"), str) and isinstance(entry.get("shape"), list)
    offsets = entry.get("data_offsets") if ok else None
    numbers = [*entry["shape"], *offsets] if ok and isinstance(offsets, list) and len(offsets) == 2 else None
    if not numbers or not all(type(n) is int and n >= 0 for n in numbers) or offsets[0] > offsets[1]:
        raise ValueError(f"tensor {name!r} has no valid dtype, shape and data_offsets")
    return offsets[1]


def _weight_files(folder: Path) -> list[Path]:
    index = folder / "model.safetensors.index.json"
    if index.exists():
        try:
            weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
        except (OSError, KeyError, json.JSONDecodeError) as exc:
            raise ModelError(f"{index}: unreadable shard index ({exc})", hint="re-download the model") from exc
        return [folder / name for name in sorted(set(weight_map.values()))]
    return sorted(folder.glob("*.safetensors"))


def parameter_count(model: ModelFiles) -> int | None:
    """How many weights MODEL has, from its files' headers (no weight is read); None for a tokenizer alone or
    weights only as pickle, which nothing here loads."""
    if model.gguf is not None:
        from vocabrisk.model.gguf import parameter_count as gguf_parameters

        return gguf_parameters(model.gguf)
    files = _weight_files(model.folder)
    if not files:
        return None
    return sum(int(np.prod(entry["shape"], dtype=np.int64)) for _, entry, _ in _tensor_index(files).values())


def _find(names: list[str], exact: tuple[str, ...], suffixes: tuple[str, ...]) -> str | None:
    for name in names:
        if name in exact or name.endswith(suffixes):
            return name
    return None


CONVERT_TO_SAFETENSORS = (
    'python -c "import sys, transformers as t; m = t.AutoModelForCausalLM.from_pretrained(sys.argv[1]); '
    'm.save_pretrained(sys.argv[1], safe_serialization=True)" MODEL_DIR'
)


def is_encoder(config: dict | None) -> bool:
    """A BERT-style encoder: its output layer predicts masked tokens, not the next one."""
    config = config or {}
    return config.get("model_type") in ENCODER_TYPES and not any(
        a.endswith(("CausalLM", "LMHeadModel")) for a in config.get("architectures") or []
    )


def locate_head(model: ModelFiles) -> tuple[HeadInfo | None, str | None]:
    """Locate the head of a model folder. Returns (info, note); info is None with a note saying why."""
    if model.gguf is not None:
        return _locate_gguf_head(model.gguf)
    config = model.config or {}
    if is_encoder(config):
        return None, f"{config.get('model_type')} is an encoder with no causal output head"
    files = _weight_files(model.folder)
    if not files:
        pickles = [p.name for p in model.folder.glob("*.bin")] + [p.name for p in model.folder.glob("*.pt")]
        if pickles:
            return None, (
                f"weights only as pickle ({', '.join(pickles)}), which vocabrisk does not load (it can run code);"
                f" for the head prior, convert them to safetensors once: {CONVERT_TO_SAFETENSORS}"
            )
        return None, "no weights in the model folder (tokenizer only)"
    tensors = _tensor_index(files)
    head_name = _find(list(tensors), HEAD_EXACT, HEAD_SUFFIXES)
    tied = head_name is None
    if tied:
        head_name = _find(list(tensors), (), EMBEDDING_SUFFIXES)
        if head_name is None:
            return None, "no output head or input embedding tensor found in the weights; counts only"
        if config.get("tie_word_embeddings") is False:
            raise ModelError(
                f"{model.folder}: config says the head is not tied, but no head tensor is in the weights",
                hint="the checkpoint looks incomplete; re-download it",
            )
    path, entry, data_start = tensors[head_name]
    if len(entry["shape"]) != 2 or entry["dtype"] not in _DTYPE_BYTES:
        raise ModelError(
            f"{path}: tensor {head_name} has shape {entry['shape']} and dtype {entry['dtype']}",
            hint="vocabrisk reads 2-D F32/F16/BF16 heads; quantized checkpoints are not supported",
        )
    rows, hidden = entry["shape"]
    info = HeadInfo(
        tensor=head_name,
        file=str(path),
        rows=int(rows),
        hidden=int(hidden),
        dtype=entry["dtype"],
        tied=tied,
        data_offset=data_start + int(entry["data_offsets"][0]),
        final_norm_rms=_final_norm_rms(tensors),
        final_norm_bias=_final_norm(tensors, "bias"),
    )
    return info, None


def _locate_gguf_head(path: Path) -> tuple[HeadInfo | None, str | None]:
    from vocabrisk.model import gguf

    found, note = gguf.locate_head(path)
    if found is None:
        return None, note
    norm = found.pop("norm")
    weight = norm.get("weight")
    return HeadInfo(**found, final_norm_rms=_rms(weight) if weight else None, final_norm_bias=norm.get("bias")), None


def _tensor_index(files: list[Path]) -> dict[str, tuple[Path, dict, int]]:
    """Every tensor of a checkpoint: name → (file, header entry, where that file's data starts)."""
    index = {}
    for path in files:
        header, data_start = read_safetensors_header(path)
        for name, entry in _entries(header):
            index[name] = (path, entry, data_start)
    return index


def _final_norm(tensors: dict[str, tuple[Path, dict, int]], part: str) -> dict | None:
    """Where the final norm's `weight` or `bias` vector is, as a dict `read_vector` takes."""
    weight = _find(list(tensors), (), FINAL_NORM_SUFFIXES)
    name = weight[: -len("weight")] + part if weight else None
    if name not in tensors:
        return None
    path, entry, data_start = tensors[name]
    if len(entry["shape"]) != 1 or entry["dtype"] not in _DTYPE_BYTES:
        return None
    return {
        "name": name,
        "file": str(path),
        "dtype": entry["dtype"],
        "shape": [int(entry["shape"][0])],
        "data_offset": data_start + int(entry["data_offsets"][0]),
    }


def _final_norm_rms(tensors: dict[str, tuple[Path, dict, int]]) -> float | None:
    """RMS of the final norm's gain: the typical size of a hidden-state coordinate the head sees."""
    ref = _final_norm(tensors, "weight")
    return None if ref is None else _rms(ref)


def _rms(ref: dict) -> float:
    return float(np.sqrt(np.mean(read_vector(ref).astype(np.float64) ** 2)))


def read_vector(ref: dict) -> np.ndarray:
    """A small tensor recorded as a dict by `locate_head` (e.g. `final_norm_bias`), as float32."""
    return _load(Path(ref["file"]), ref["dtype"], ref["data_offset"], tuple(ref["shape"]))


def read_head(info: HeadInfo, rows: slice | None = None) -> np.ndarray:
    """The head matrix (or a slice of rows) as float32, memory-mapped from its shard."""
    return _load(Path(info.file), info.dtype, info.data_offset, (info.rows, info.hidden), rows)


def _load(path: Path, dtype: str, offset: int, shape: tuple[int, ...], rows: slice | None = None) -> np.ndarray:
    if dtype not in _DTYPE_BYTES:  # a quantized GGUF tensor (Q4_1, Q8_0, ...)
        from vocabrisk.model.gguf import read_quantized

        return read_quantized(path, dtype, offset, shape, rows)
    raw_dtype = np.uint16 if dtype == "BF16" else _NUMPY_DTYPES[dtype]
    mapped = np.memmap(path, dtype=raw_dtype, mode="r", offset=offset, shape=shape)
    block = mapped[rows] if rows is not None else mapped
    if dtype == "BF16":
        return (block.astype(np.uint32) << 16).view(np.float32)
    return np.asarray(block, dtype=np.float32)
