"""Models resolve from `demo`, folders and the offline hub cache; the head is found and read lazily."""

from __future__ import annotations

import json
import os
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from vocabrisk import scan
from vocabrisk.errors import ModelError
from vocabrisk.model import load_vocabulary, locate_head, read_head, resolve_model
from vocabrisk.model.head import parameter_count
from vocabrisk.model.resolve import DEMO_MODEL_DIR


def save_bf16(path: Path, tensors: dict[str, np.ndarray]) -> None:
    """Write float32 arrays as a BF16 safetensors file (numpy has no bfloat16 to hand to safetensors)."""
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        raw = (np.ascontiguousarray(array, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16).tobytes()
        header[name] = {"dtype": "BF16", "shape": list(array.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    encoded = json.dumps(header).encode()
    encoded += b" " * (-len(encoded) % 8)
    path.write_bytes(struct.pack("<Q", len(encoded)) + encoded + b"".join(blobs))


def model_folder(tmp_path: Path, shared_data: Path, tokenizer: str, config: dict, weights: dict | None) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copy(shared_data / "tokenizers" / tokenizer / "tokenizer.json", folder / "tokenizer.json")
    (folder / "config.json").write_text(json.dumps(config))
    if weights is not None:
        save_file(weights, str(folder / "model.safetensors"))
    return folder


def test_demo_model_resolves_offline_with_an_untied_head():
    files = resolve_model("demo")
    assert files.folder == DEMO_MODEL_DIR
    head, note = locate_head(files)
    assert head is not None and note is None
    assert head.tensor == "lm_head.weight" and not head.tied
    assert head.rows == load_vocabulary(files.tokenizer_json).size


def test_tokenizer_only_folder_gives_counts_without_head(shared_data):
    files = resolve_model(str(shared_data / "tokenizers" / "gpt2"))
    head, note = locate_head(files)
    assert head is None
    assert "tokenizer only" in note
    assert parameter_count(files) is None  # nothing for `--old-loss auto` to run


def test_encoder_checkpoint_has_no_causal_head(shared_data):
    files = resolve_model(str(shared_data / "tokenizers" / "bert-base-uncased"))
    head, note = locate_head(files)
    assert head is None and "encoder" in note


def test_untied_head_is_read_by_name(tmp_path, shared_data):
    rng = np.random.default_rng(0)
    head = rng.normal(size=(50257, 8)).astype(np.float32)
    folder = model_folder(
        tmp_path,
        shared_data,
        "gpt2",
        {"model_type": "gpt2", "tie_word_embeddings": False},
        {"transformer.wte.weight": rng.normal(size=(50257, 8)).astype(np.float32), "lm_head.weight": head},
    )
    info, _ = locate_head(resolve_model(str(folder)))
    assert (info.tensor, info.tied, info.rows, info.hidden) == ("lm_head.weight", False, 50257, 8)
    np.testing.assert_array_equal(read_head(info), head)
    np.testing.assert_array_equal(read_head(info, slice(10, 20)), head[10:20])


def test_tied_embeddings_are_detected(tmp_path, shared_data):
    embedding = np.ones((32000, 4), dtype=np.float16)
    folder = model_folder(
        tmp_path, shared_data, "llama2", {"model_type": "llama"}, {"model.embed_tokens.weight": embedding}
    )
    info, _ = locate_head(resolve_model(str(folder)))
    assert info.tied and info.tensor == "model.embed_tokens.weight" and info.dtype == "F16"
    assert read_head(info).dtype == np.float32


def test_config_saying_untied_without_head_tensor_is_an_error(tmp_path, shared_data):
    folder = model_folder(
        tmp_path,
        shared_data,
        "llama2",
        {"model_type": "llama", "tie_word_embeddings": False},
        {"model.embed_tokens.weight": np.ones((32000, 4), dtype=np.float32)},
    )
    with pytest.raises(ModelError, match="not tied"):
        locate_head(resolve_model(str(folder)))


def test_sharded_bf16_neox_head_is_found_through_the_index(tmp_path, shared_data):
    rng = np.random.default_rng(1)
    head = rng.normal(size=(50277, 16)).astype(np.float32)
    folder = model_folder(tmp_path, shared_data, "gpt-neox-20b", {"model_type": "gpt_neox"}, None)
    save_bf16(folder / "model-00001-of-00002.safetensors", {"gpt_neox.embed_in.weight": head * 2})
    save_bf16(folder / "model-00002-of-00002.safetensors", {"embed_out.weight": head})
    (folder / "model.safetensors.index.json").write_text(
        json.dumps(
            {
                "weight_map": {
                    "gpt_neox.embed_in.weight": "model-00001-of-00002.safetensors",
                    "embed_out.weight": "model-00002-of-00002.safetensors",
                }
            }
        )
    )
    info, _ = locate_head(resolve_model(str(folder)))
    assert info.tensor == "embed_out.weight" and not info.tied and info.dtype == "BF16"
    truncated = (head.view(np.uint32) >> 16 << 16).view(np.float32)
    np.testing.assert_array_equal(read_head(info), truncated)


def test_pickle_checkpoints_are_not_loaded_but_the_tokenizer_is_used(tmp_path, shared_data):
    folder = model_folder(tmp_path, shared_data, "gpt2", {"model_type": "gpt2"}, None)
    (folder / "pytorch_model.bin").write_bytes(b"not loaded: loading pickle can run code")
    info, note = locate_head(resolve_model(str(folder)))
    assert info is None and "pytorch_model.bin" in note and "safe_serialization=True" in note
    assert parameter_count(resolve_model(str(folder))) is None  # so `--old-loss auto` never loads the pickle
    corpus = str(shared_data / "corpora" / "en-shakespeare" / "input.txt")
    for prior in ("auto", "tokenizer"):
        profile = scan([corpus], str(folder), prior=prior)
        assert profile.prior_source == "tokenizer" and profile.total_tokens > 0
    with pytest.raises(ModelError, match="no head to take a prior from") as exc:
        scan([corpus], str(folder), prior="head")
    assert "--allow-pickle" not in str(exc.value) and "safetensors" in str(exc.value)


def test_hub_id_resolves_from_the_local_cache_offline(tmp_path, shared_data, monkeypatch):
    snapshot = tmp_path / "hub" / "models--acme--tiny-gpt" / "snapshots" / "0123abcd"
    snapshot.mkdir(parents=True)
    shutil.copy(shared_data / "tokenizers" / "gpt2" / "tokenizer.json", snapshot / "tokenizer.json")
    (snapshot / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    (tmp_path / "hub" / "models--acme--tiny-gpt" / "refs").mkdir()
    (tmp_path / "hub" / "models--acme--tiny-gpt" / "refs" / "main").write_text("0123abcd")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    files = resolve_model("acme/tiny-gpt")
    assert files.folder == snapshot
    assert files.config == {"model_type": "gpt2"}


def test_uncached_hub_id_offline_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelError, match="not in the local Hugging Face cache") as exc:
        resolve_model("acme/not-downloaded")
    assert "hf download acme/not-downloaded" in exc.value.hint


@pytest.mark.parametrize("name", ["./no/such/folder", "a/b/c", "bad name with spaces"])
def test_unknown_model_is_a_clear_error(name):
    with pytest.raises(ModelError, match="not found"):
        resolve_model(name)


def test_folder_without_tokenizer_json_says_how_to_make_one(tmp_path, shared_data):
    shutil.copy(shared_data / "tokenizers" / "llama2" / "tokenizer.model", tmp_path / "tokenizer.model")
    with pytest.raises(ModelError, match=r"no tokenizer\.json") as exc:
        resolve_model(str(tmp_path))
    assert "save_pretrained" in exc.value.hint


LAYERS = {"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2}
FAMILIES = [
    ("gpt2", "gpt2", {"n_embd": 16, "n_layer": 1, "n_head": 2}),
    ("llama", "llama2", LAYERS),
    ("gpt_neox", "gpt-neox-20b", LAYERS),
    ("qwen2", "gpt2", {**LAYERS, "num_key_value_heads": 1}),
]


@pytest.mark.parametrize("tied", [True, False], ids=["tied", "untied"])
@pytest.mark.parametrize(("model_type", "tokenizer", "sizes"), FAMILIES, ids=[f[0] for f in FAMILIES])
def test_heads_of_real_transformers_checkpoints_are_found(tmp_path, shared_data, model_type, tokenizer, sizes, tied):
    """Tiny models saved by transformers itself: real tensor names, tying and sharding of each family."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    vocab_size = load_vocabulary(shared_data / "tokenizers" / tokenizer / "tokenizer.json").size
    config = transformers.AutoConfig.for_model(model_type, vocab_size=vocab_size, tie_word_embeddings=tied, **sizes)
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(config).to(torch.bfloat16)
    folder = tmp_path / model_type
    model.save_pretrained(folder, max_shard_size="1MB")  # several shards and an index
    shutil.copy(shared_data / "tokenizers" / tokenizer / "tokenizer.json", folder / "tokenizer.json")
    assert (folder / "model.safetensors.index.json").exists()

    info, note = locate_head(resolve_model(str(folder)))
    assert note is None and info.tied == tied and info.dtype == "BF16"
    assert (info.rows, info.hidden) == (vocab_size, 16)
    expected = model.get_output_embeddings().weight.detach().float().numpy()
    np.testing.assert_array_equal(read_head(info), expected)
    assert info.final_norm_rms == pytest.approx(1.0)  # a fresh model's final norm gains are all ones
    assert parameter_count(resolve_model(str(folder))) == model.num_parameters()  # read from the shards' headers


def test_the_weights_key_follows_every_rewrite_of_the_weights_and_nothing_else(tmp_path):
    """What running a model measured is kept under its weights' key: a checkpoint trained again in place keeps
    its name, tokenizer and head (the calibration key) but not this."""
    from vocabrisk.model.identity import weights_key

    folder = shutil.copytree(DEMO_MODEL_DIR, tmp_path / "model")
    key = weights_key(resolve_model(str(folder)))
    assert weights_key(resolve_model(str(folder))) == key  # read again: the same
    (folder / "README.md").write_text("notes beside the weights")
    assert weights_key(resolve_model(str(folder))) == key
    weights = folder / "model.safetensors"
    stat = weights.stat()
    weights.write_bytes(weights.read_bytes())  # the same bytes, written again: it cannot tell, so it measures again
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert weights_key(resolve_model(str(folder))) != key
