"""Recognise folders written by Hugging Face `datasets.save_to_disk`.

A dataset folder has a state.json whose "_data_files" lists its .arrow files (Arrow IPC
stream files) in row order; a dataset dict folder has a dataset_dict.json whose
"splits" names one such dataset folder per split.
"""

from __future__ import annotations

import json
import os


def dataset_files(folder: str) -> list[str] | None:
    """Paths of the folder's arrow files in row order, or None if it is no dataset."""
    state = _load(os.path.join(folder, "state.json"))
    entries = state.get("_data_files") if isinstance(state, dict) else None
    if not isinstance(entries, list) or not entries:
        return None
    names = [entry.get("filename") if isinstance(entry, dict) else None for entry in entries]
    if not all(isinstance(name, str) and name.endswith(".arrow") for name in names):
        return None
    return [os.path.join(folder, name) for name in names]


def split_folders(folder: str) -> list[str] | None:
    """Paths of the split folders of a dataset dict folder, or None if it is none."""
    info = _load(os.path.join(folder, "dataset_dict.json"))
    splits = info.get("splits") if isinstance(info, dict) else None
    if not isinstance(splits, list) or not all(isinstance(s, str) for s in splits):
        return None
    return [os.path.join(folder, split) for split in splits]


def total_size(paths: list[str]) -> int:
    """Bytes on disk of the files that exist among `paths`."""
    return sum(os.path.getsize(path) for path in paths if os.path.isfile(path))


def _load(path: str) -> object:
    try:
        with open(path, "rb") as file:
            return json.load(file)
    except (OSError, ValueError):
        return None
