"""Turn what a user calls a model (`demo`, a folder, a GGUF file, a hub id) into local files.

Named models are resolved here and nowhere else. Hub ids are looked up in the local
Hugging Face cache first, so everything works offline once a model has been downloaded.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from vocabrisk.errors import ModelError
from vocabrisk.model import gguf

DEMO_MODEL_DIR = Path(__file__).resolve().parent.parent / "demo_model"

# Small files that describe a model; weights are fetched separately, and only the head.
_DESCRIPTION_FILES = [
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "model.safetensors.index.json",
]


@dataclass(frozen=True)
class ModelFiles:
    """A model as a local folder: where its tokenizer, config and weights are."""

    name: str  # as the user gave it
    folder: Path
    tokenizer_json: Path
    config: dict | None
    gguf: Path | None = None  # the GGUF file the folder's tokenizer files were written from

    def pretrained(self) -> tuple[Path, dict]:
        """The folder and options transformers' `from_pretrained` loads the weights from (it
        de-quantizes a GGUF file itself)."""
        if self.gguf is not None:
            return self.gguf.parent, {"gguf_file": self.gguf.name}
        return self.folder, {}

    def tokenizer_config(self) -> dict:
        path = self.folder / "tokenizer_config.json"
        if not path.exists():
            return {}
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return {}


def resolve_model(name: str) -> ModelFiles:
    """Find a model's files: `demo`, a local folder, or a hub id in the local cache."""
    if name == "demo":
        return _from_folder(name, DEMO_MODEL_DIR)
    path = Path(name).expanduser()
    if path.is_dir() and not (path / "tokenizer.json").exists():
        path = gguf.find_in_folder(path) or path
    if gguf.is_gguf(path):
        folder, config = gguf.prepare(path)
        return ModelFiles(name, folder, folder / "tokenizer.json", config, gguf=path)
    if path.is_dir():
        return _from_folder(name, path)
    if path.exists():
        raise ModelError(
            f"{name}: is a file; --model takes a folder with tokenizer.json (and config.json, weights) or a .gguf file",
            hint="pass the folder that contains the file",
        )
    if _looks_like_hub_id(name):
        return _from_folder(name, _hub_snapshot(name))
    raise ModelError(
        f"model '{name}' not found: no such folder, and not a Hugging Face hub id",
        hint="pass `demo`, a local model folder, or a hub id such as `gpt2` or `EleutherAI/pythia-160m`",
    )


def _looks_like_hub_id(name: str) -> bool:
    parts = name.split("/")
    return 1 <= len(parts) <= 2 and all(p and not p.startswith(".") for p in parts) and " " not in name


def _hub_snapshot(repo_id: str) -> Path:
    """The cached snapshot folder of a hub model; download its small files only if allowed."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    cache_dir = os.environ.get("HF_HUB_CACHE") or None  # read per call: the library reads it once at import
    try:
        return Path(snapshot_download(repo_id, cache_dir=cache_dir, local_files_only=True))
    except (LocalEntryNotFoundError, OSError, ValueError):
        pass
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes"):
        raise ModelError(
            f"model '{repo_id}' is not in the local Hugging Face cache and HF_HUB_OFFLINE is set",
            hint=f"download it where there is network (`hf download {repo_id}`) or pass a local folder",
        )
    try:
        return Path(snapshot_download(repo_id, cache_dir=cache_dir, allow_patterns=_DESCRIPTION_FILES))
    except (HfHubHTTPError, LocalEntryNotFoundError, OSError, ValueError) as exc:
        raise ModelError(
            f"model '{repo_id}' is not in the local Hugging Face cache and could not be downloaded "
            f"({type(exc).__name__})",
            hint=f"download it where there is network (`hf download {repo_id}`) or pass a local folder",
        ) from exc


def _from_folder(name: str, folder: Path) -> ModelFiles:
    tokenizer_json = folder / "tokenizer.json"
    if not tokenizer_json.exists():
        raise _no_tokenizer_json(folder)
    config = None
    config_path = folder / "config.json"
    if config_path.exists():
        try:
            config = json.loads(config_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ModelError(f"{config_path}: not valid JSON: {exc}", hint="restore the file from the model") from exc
    return ModelFiles(name=name, folder=folder, tokenizer_json=tokenizer_json, config=config)


def _no_tokenizer_json(folder: Path) -> ModelError:
    """A folder without tokenizer.json: say how to make one (transformers converts slow tokenizers)."""
    others = [n for n in ("tokenizer.model", "vocab.json", "vocab.txt", "spiece.model") if (folder / n).exists()]
    if not others:
        return ModelError(
            f"{folder}: no tokenizer.json in this folder",
            hint="pass a model folder with tokenizer files, or `demo`",
        )
    return ModelError(
        f"{folder}: has {', '.join(others)} but no tokenizer.json, which vocabrisk counts with",
        hint="create it once with transformers: "
        f"`AutoTokenizer.from_pretrained('{folder}').save_pretrained('{folder}')`",
    )
