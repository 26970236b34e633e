"""Model folders whose files are cut short or corrupted (a download stopped half-way, a disk error):
each one is a ModelError naming the file and what to do, never a traceback. The GGUF cases are in
tests/model/test_gguf.py, beside the writer of small GGUF files. CI runs 25 cases each; for a longer run:

    VOCABRISK_FUZZ_EXAMPLES=500 python -m pytest tests/model/test_fuzz_models.py
"""

from __future__ import annotations

import os
import re
import shutil

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors.numpy import save_file

from vocabrisk.cli.commands import main
from vocabrisk.errors import ModelError
from vocabrisk.model import locate_head, read_head, resolve_model
from vocabrisk.model.loaded import load_model
from vocabrisk.model.resolve import DEMO_MODEL_DIR

EXAMPLES = int(os.environ.get("VOCABRISK_FUZZ_EXAMPLES", "25"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
edits = st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), max_size=6)


def model_folder(tmp_path, name: str):
    """The demo model's tokenizer and config, with a small head of its vocabulary's size."""
    folder = tmp_path / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    for file in ("tokenizer.json", "tokenizer_config.json", "config.json"):
        shutil.copy(DEMO_MODEL_DIR / file, folder / file)
    head = np.random.default_rng(0).standard_normal((4096, 8)).astype(np.float32)
    save_file({"lm_head.weight": head, "transformer.ln_f.weight": np.ones(8, np.float32)}, folder / "model.safetensors")
    return folder


def damaged(data: bytes, cut: int, changes: list[tuple[int, int]], near: int) -> bytes:
    """`data` cut by `cut` bytes from its end, with bytes changed, most of them within `near` of its start."""
    out = bytearray(data[: max(len(data) - cut, 0)] if cut else data)
    for position, value in changes:
        if out:
            out[position % min(len(out), near if position % 2 else len(out))] = value
    return bytes(out)


def read_all(name: str) -> None:
    """What a scan reads of a model: its files, vocabulary, tokenizer and head."""
    loaded = load_model(name, counted_here=True)
    from vocabrisk.model.tokenizer import load_tokenizer

    load_tokenizer(loaded.files.tokenizer_json)
    if loaded.head is not None:
        read_head(loaded.head, slice(0, 10))


@FUZZ
@given(st.integers(0, 200_000), edits)
def test_damaged_safetensors_is_a_model_error(tmp_path, cut, changes):
    folder = model_folder(tmp_path, "model")
    path = folder / "model.safetensors"
    path.write_bytes(damaged(path.read_bytes(), cut, changes, near=300))
    try:
        read_all(str(folder))
    except ModelError as error:
        assert str(path) in str(error) or str(folder) in str(error)


@FUZZ
@given(st.integers(0, 300_000), edits)
def test_damaged_tokenizer_json_is_a_model_error(tmp_path, cut, changes):
    folder = model_folder(tmp_path, "model")
    path = folder / "tokenizer.json"
    path.write_bytes(damaged(path.read_bytes(), cut, changes, near=3000))
    try:
        read_all(str(folder))
    except ModelError as error:
        assert str(path) in str(error) and error.hint


def scan_cli(folder):
    corpus = str(DEMO_MODEL_DIR / "reference.txt.gz")
    return CliRunner().invoke(main, ["scan", corpus, "--model", str(folder)], env={"COLUMNS": "500"})


def test_a_truncated_safetensors_names_the_file_sizes_and_what_to_do(tmp_path):
    folder = model_folder(tmp_path, "model")
    path = folder / "model.safetensors"
    whole = path.stat().st_size
    os.truncate(path, whole - 1000)
    with pytest.raises(ModelError, match=f"truncated: its header describes {whole:,} bytes .* has {whole - 1000:,}"):
        locate_head(resolve_model(str(folder)))
    result = scan_cli(folder)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert str(path) in result.output and "re-download" in result.output


def test_a_corrupt_tokenizer_json_names_the_file_the_position_and_what_to_do(tmp_path):
    folder = model_folder(tmp_path, "model")
    path = folder / "tokenizer.json"
    path.write_bytes(path.read_bytes()[:128096])
    result = scan_cli(folder)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert str(path) in result.output and "re-download" in result.output
    assert re.search(r"not a valid tokenizer file: .* line \d+ column \d+", result.output)
