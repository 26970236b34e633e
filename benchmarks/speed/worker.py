"""One measurement in one fresh process; prints a JSON line. Run by throughput.py in a bench venv.

Modes: plain (the engine's plain batched `encode_batch`), vocabrisk (`scan`, end to end),
read (vocabrisk's reader alone), datatrove (its TokensCounter), head (locate + read the head).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

PLAIN_BATCH = 64  # documents per encode_batch call, as a careful user would batch


def peak_rss_mb() -> float:
    """VmHWM: unlike ru_maxrss, it is not inherited from the parent across fork and exec."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024


def digest(counts) -> str:
    return hashlib.sha256(counts.astype("int64").tobytes()).hexdigest()[:16]


def texts(path: str):
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            yield json.loads(line)["text"]


def plain(corpus: str, tokenizer_dir: str) -> dict:
    import numpy as np
    from tokenizers import Tokenizer

    from vocabrisk.model import load_vocabulary

    tokenizer = Tokenizer.from_file(f"{tokenizer_dir}/tokenizer.json")
    if hasattr(tokenizer, "no_truncation"):  # 0.2x
        tokenizer.no_truncation()
        tokenizer.no_padding()
        encode, ids = tokenizer.encode_batch, (lambda e: np.array(e.ids, dtype=np.int64))
    else:
        encode = lambda b: tokenizer.encode_batch(b, truncation=None, padding=None)  # noqa: E731
        ids = lambda e: e.ids_array  # noqa: E731
    counts = np.zeros(load_vocabulary(Path(tokenizer_dir) / "tokenizer.json").size, dtype=np.int64)
    batch, size = [], 0
    for text in texts(corpus):
        batch.append(text)
        size += len(text.encode("utf-8"))
        if len(batch) == PLAIN_BATCH:
            for e in encode(batch):
                counts += np.bincount(ids(e), minlength=counts.size)
            batch = []
    for e in encode(batch) if batch else []:
        counts += np.bincount(ids(e), minlength=counts.size)
    return {"bytes": size, "tokens": int(counts.sum()), "digest": digest(counts)}


def vocabrisk(corpus: str, tokenizer_dir: str) -> dict:
    from vocabrisk.model.tokenizer import tokenizers_version
    from vocabrisk.profile.scan import scan

    profile = scan([corpus], tokenizer_dir)
    c = profile.counts
    return {"bytes": c.text_bytes, "tokens": c.tokens, "digest": digest(c.counts), "engine": tokenizers_version()}


def read(corpus: str, tokenizer_dir: str) -> dict:
    from vocabrisk.corpus import Document, ReadOptions, discover, read_source

    options = ReadOptions()
    sources, _ = discover([corpus], options)
    size = sum(len(d.text.encode("utf-8")) for s in sources for d in read_source(s, options) if isinstance(d, Document))
    return {"bytes": size}


def datatrove(corpus: str, tokenizer_dir: str) -> dict:
    from datatrove.data import Document
    from datatrove.pipeline.tokens import TokensCounter

    docs = (Document(text=t, id=str(i)) for i, t in enumerate(texts(corpus)))
    counter = TokensCounter(f"{tokenizer_dir}/tokenizer.json", batch_size=PLAIN_BATCH)
    size = tokens = 0
    for doc in counter.run(docs):
        size += len(doc.text.encode("utf-8"))
        tokens += doc.metadata["token_count"]
    return {"bytes": size, "tokens": tokens, "digest": "totals only"}


def head(checkpoint: str, _: str) -> dict:

    from vocabrisk.model import ModelFiles, locate_head, read_head

    folder = Path(checkpoint)
    base = peak_rss_mb()
    files = ModelFiles("bench", folder, folder / "tokenizer.json", json.loads((folder / "config.json").read_text()))
    info, _ = locate_head(files)
    matrix = read_head(info)
    checksum = float(matrix.sum(dtype="float64"))  # touch every row, as the risk model does
    return {"head_mb": info.nbytes / 1e6, "base_rss_mb": base, "tensor": info.tensor, "checksum": checksum}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["plain", "vocabrisk", "read", "datatrove", "head"])
    parser.add_argument("path")
    parser.add_argument("tokenizer_dir", nargs="?", default="")
    parser.add_argument("--cores", type=int, default=0, help="pin to this many cores before any thread starts")
    args = parser.parse_args()
    if args.cores:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[: args.cores])
    start = time.perf_counter()
    result = globals()[args.mode](args.path, args.tokenizer_dir)
    result.update(seconds=time.perf_counter() - start, peak_rss_mb=peak_rss_mb(), python=sys.executable)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
