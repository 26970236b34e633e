"""The baseline process for whole-process timings: load a tokenizer, count every token with plain
`encode_batch`, print the totals. No vocabrisk import, so its start-up is the engine's alone.

    python benchmarks/plain_count.py CORPUS.jsonl TOKENIZER_DIR
"""

from __future__ import annotations

import json
import sys

import numpy as np
from tokenizers import Tokenizer

BATCH = 64  # documents per encode_batch call, as a careful user would batch


def main(corpus: str, tokenizer_dir: str) -> None:
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

    def add(batch: list[str]) -> np.ndarray:
        found = np.bincount(np.concatenate(encode(batch)).astype(np.int64))
        grown = np.zeros(max(counts.size, found.size), dtype=np.int64)
        grown[: counts.size] += counts
        grown[: found.size] += found
        return grown

    batch: list[str] = []
    with open(corpus, encoding="utf-8") as lines:
        for line in lines:
            batch.append(json.loads(line)["text"])
            if len(batch) == BATCH:
                counts = add(batch)
                batch = []
    if batch:
        counts = add(batch)
    print(json.dumps({"tokens": int(counts.sum()), "ids_used": int((counts > 0).sum())}))


if __name__ == "__main__":
    main(*sys.argv[1:3])
