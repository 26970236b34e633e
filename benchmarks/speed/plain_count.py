"""The baseline process for whole-process timings: load a tokenizer, count every token with plain
`encode_batch` in batches of 64, print the totals. No vocabrisk import, so its start-up is the engine's alone.

    python benchmarks/speed/plain_count.py CORPUS TOKENIZER_DIR

CORPUS is a JSON Lines file (its `text` fields) or a folder of text files (each one document). It prints the
tokens, the ids used and a digest of the full per-id count vector (`digest`), which benchmarks compare with
vocabrisk's counts id for id.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import sys
from pathlib import Path

import numpy as np

BATCH = 64  # documents per encode_batch call, as a careful user would batch


def digest(counts) -> str:
    """A count vector's identity, id for id (trailing zeros, which a vocabulary's size adds, left out)."""
    counts = np.asarray(counts, dtype=np.int64)
    used = np.flatnonzero(counts)
    return hashlib.sha256(counts[: used[-1] + 1 if used.size else 0].tobytes()).hexdigest()[:16]


def batches(corpus: Path):
    """The corpus's documents in batches of BATCH: each file of a folder, or each line of a JSON Lines file."""
    if corpus.is_dir():
        texts = (path.read_text(encoding="utf-8") for path in sorted(corpus.iterdir()))
    else:
        texts = (json.loads(line)["text"] for line in corpus.open(encoding="utf-8"))
    while batch := list(itertools.islice(texts, BATCH)):
        yield batch


def main(corpus: str, tokenizer_dir: str) -> None:
    from tokenizers import Tokenizer  # here: `digest` is imported by benchmarks that time other processes

    tokenizer = Tokenizer.from_file(f"{tokenizer_dir}/tokenizer.json")
    if hasattr(tokenizer, "no_truncation"):  # 0.2x
        tokenizer.no_truncation()
        tokenizer.no_padding()

        def encode(batch):
            return [np.array(e.ids, dtype=np.int64) for e in tokenizer.encode_batch(batch)]
    else:  # 1.0: truncation and padding per call, ids as numpy arrays

        def encode(batch):
            return [e.ids_array for e in tokenizer.encode_batch(batch, truncation=None, padding=None)]

    counts = np.zeros(0, dtype=np.int64)
    for batch in batches(Path(corpus)):
        found = np.bincount(np.concatenate(encode(batch)).astype(np.int64))
        grown = np.zeros(max(counts.size, found.size), dtype=np.int64)
        grown[: counts.size] += counts
        grown[: found.size] += found
        counts = grown
    print(json.dumps({"tokens": int(counts.sum()), "ids_used": int((counts > 0).sum()), "digest": digest(counts)}))


if __name__ == "__main__":
    main(*sys.argv[1:3])
