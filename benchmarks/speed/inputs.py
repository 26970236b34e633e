"""Benchmark inputs, built in a temp folder: never committed, rebuilt on every run.

Corpora are the shared corpora cut into ~50 kB documents, mixed and repeated to size, as JSON
lines (so reading includes parsing). The checkpoint is GPT-NeoX-shaped: a ~200 MB head among
~1 GB of other tensors in four shards.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

CORPORA = [
    "en-shakespeare/input.txt",
    "en-wikitext2/valid.txt",
    "en-wikitext2/test.txt",
    "code-lua/lua_src_c.txt",
    "ko-chatbot/ChatbotData.csv",
    "de-grimm/de-grimm.txt",
]
DOC_CHARS = 50_000


def documents(shared: Path) -> list[str]:
    """~50 kB documents from each shared corpus, interleaved so every batch mixes scripts."""
    per_corpus = []
    for name in CORPORA:
        text = (shared / "corpora" / name).read_text(encoding="utf-8")
        per_corpus.append([text[i : i + DOC_CHARS] for i in range(0, len(text), DOC_CHARS)])
    longest = max(len(d) for d in per_corpus)
    return [d[i] for i in range(longest) for d in per_corpus if i < len(d)]


def write_corpus(shared: Path, path: Path, megabytes: int) -> int:
    """A JSONL corpus of `megabytes` MB of text (UTF-8); returns the text bytes written."""
    docs = documents(shared)
    lines = [(json.dumps({"text": d}, ensure_ascii=False) + "\n", len(d.encode("utf-8"))) for d in docs]
    written, k = 0, 0
    with path.open("w", encoding="utf-8") as out:
        while written < megabytes * 1_000_000:
            line, size = lines[k % len(lines)]
            out.write(line)
            written += size
            k += 1
    return written


def write_checkpoint(shared: Path, folder: Path, vocab: int = 50_304, hidden: int = 1024, layers: int = 16) -> int:
    """A sharded GPT-NeoX-like safetensors checkpoint; returns the head's size in bytes."""
    from safetensors.numpy import save_file

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)

    def tensor(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape, dtype=np.float32)

    shards: list[dict[str, np.ndarray]] = [{"gpt_neox.embed_in.weight": tensor(vocab, hidden)}, {}, {}]
    for i in range(layers):
        prefix = f"gpt_neox.layers.{i}."
        shards[1 + i * 2 // layers].update(
            {
                prefix + "attention.query_key_value.weight": tensor(3 * hidden, hidden),
                prefix + "attention.dense.weight": tensor(hidden, hidden),
                prefix + "mlp.dense_h_to_4h.weight": tensor(4 * hidden, hidden),
                prefix + "mlp.dense_4h_to_h.weight": tensor(hidden, 4 * hidden),
            }
        )
    shards.append({"gpt_neox.final_layer_norm.weight": tensor(hidden), "embed_out.weight": tensor(vocab, hidden)})
    weight_map = {}
    for n, shard in enumerate(shards, 1):
        name = f"model-{n:05d}-of-{len(shards):05d}.safetensors"
        save_file(shard, str(folder / name))
        weight_map.update(dict.fromkeys(shard, name))
    (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    config = {"model_type": "gpt_neox", "architectures": ["GPTNeoXForCausalLM"], "tie_word_embeddings": False}
    (folder / "config.json").write_text(json.dumps(config))
    shutil.copy(shared / "tokenizers" / "gpt-neox-20b" / "tokenizer.json", folder / "tokenizer.json")
    return vocab * hidden * 4
