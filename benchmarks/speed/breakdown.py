"""Where a scan's time goes, beside the plain loop's: each part of counting timed alone, and both whole processes.

    python benchmarks/speed/breakdown.py TOKENIZER_DIR --mb 60 [--rounds 3] [--engine auto]
    python benchmarks/speed/breakdown.py TOKENIZER_DIR --folder CORPUS_FOLDER

TOKENIZER_DIR holds a tokenizer.json; the corpus is `--mb` MB of 50 kB text files as `engines.py` writes them
(in a temporary folder), or a folder of text files of your own. In this process, with the corpus read once
into memory and cut into the batches the scan encodes (`pooled_batches`), each part is timed alone, best of
ROUNDS:

- read: the scan's reader over the folder (`pooled_batches`: discovery not included), which runs in a thread
  of its own beside the engine (so it is not counted in line below), and the plain loop's `read_text` of
  every file, which the plain loop does in line;
- load: the engine the scan would choose (`engine_for`), loaded from the file;
- encode: that engine on every batch;
- bincount: each batch's counts (one `bincount` of its ids, as the plain loop does).

Then whole fresh processes, start-up included, interleaved for ROUNDS: the plain loop and the scan engines.py
times (`plain_count.py`; `vocabrisk scan --prior tokenizer --format json -q --out DIR --force`, its cache
warmed first), median seconds; and the imports alone (`import tokenizers, numpy` against `import
vocabrisk.cli`). What the parts in line do not explain ("the rest": discovery, the profile's files and JSON,
the forecast, waits on the reader, the engine's threads idle) is the scan's median less the start-up, the
imports, load, encode and bincount. Run it on a quiet machine (docs/PERFORMANCE.md, "Issue 31").
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from engines import Env, timed, write_corpora


def best(function, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def parts(folder: Path, tokenizer_dir: Path, engine: str, rounds: int) -> dict[str, float]:
    from vocabrisk.corpus import ReadOptions
    from vocabrisk.corpus.discover import discover
    from vocabrisk.counting.engines import engine_for, load_encoder
    from vocabrisk.counting.executors.pipeline import Gathered, pooled_batches
    from vocabrisk.counting.executors.shards import Shard

    options = ReadOptions()
    sources, _ = discover([str(folder)], options)
    shards = [Shard(i, s) for i, s in enumerate(sources)]
    batches = [
        [d.text for d in item.documents] for item in pooled_batches(shards, options, None) if isinstance(item, Gathered)
    ]
    tokenizer = str(tokenizer_dir / "tokenizer.json")
    chosen, after = engine_for(engine, sum(s.size for s in sources))
    found: dict[str, float] = {
        "read (the scan's reader)": best(lambda: list(pooled_batches(shards, options, None)), rounds),
        "read (plain read_text)": best(
            lambda: [p.read_text(encoding="utf-8") for p in sorted(folder.iterdir())], rounds
        ),
        "load the engine": best(lambda: load_encoder(tokenizer, False, chosen, after), 1),
    }
    encoder = load_encoder(tokenizer, False, chosen, after)
    encoded = [encoder.encode(batch, True) for batch in batches]  # warm: an accelerator's check is done here
    found[f"encode ({encoder.name})"] = best(lambda: [encoder.encode(batch, True) for batch in batches], rounds)
    found["bincount"] = best(lambda: [np.bincount(e.ids) for e in encoded], rounds)
    found["tokens"] = sum(int(e.ids.size) for e in encoded)
    return found


def processes(folder: Path, tokenizer_dir: Path, engine: str, rounds: int) -> dict[str, float]:
    """Median seconds of each whole process, the commands engines.py times (`Env`), interleaved."""
    with tempfile.TemporaryDirectory(prefix="vocabrisk-breakdown-") as work:
        env = Env("this", sys.executable, Path(work) / "cache")
        out = Path(work) / "profile"
        commands = {
            "plain process": env.plain(folder, tokenizer_dir),
            "scan process": env.scan(folder, tokenizer_dir, engine, out),
            "imports (tokenizers, numpy)": [sys.executable, "-c", "import tokenizers, numpy"],
            "imports (vocabrisk.cli)": [sys.executable, "-c", "import vocabrisk.cli"],
        }
        env.run(commands["scan process"])  # the warm cache: the vocabulary's facts, computed once
        times: dict[str, list[float]] = {name: [] for name in commands}
        for round_ in range(rounds):
            names = list(commands)
            for name in names[round_ % len(names) :] + names[: round_ % len(names)]:  # each round in another order
                seconds, done = timed(env, commands[name])
                if done.returncode:
                    raise SystemExit(f"{name} failed: {done.stderr[-500:]}")
                times[name].append(seconds)
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tokenizer_dir", type=lambda p: Path(p).resolve())
    corpus = parser.add_mutually_exclusive_group(required=True)
    corpus.add_argument("--mb", type=float, help="MB of text to write as engines.py does, in a temporary folder")
    corpus.add_argument("--folder", type=lambda p: Path(p).resolve(), help="a folder of text files")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--engine", default="auto", choices=["auto", "tokenizers", "fastokens"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vocabrisk-breakdown-corpus-") as work:
        if args.folder is None:
            write_corpora(Path(work), args.mb)
            args.folder = Path(work) / "folder"
        found = parts(args.folder, args.tokenizer_dir, args.engine, args.rounds)
        whole = processes(args.folder, args.tokenizer_dir, args.engine, args.rounds)
    import tokenizers

    tokens = found.pop("tokens")
    scan, plain = whole["scan process"], whole["plain process"]
    print(f"{args.folder} ({tokens:,} tokens), {args.tokenizer_dir.name}, tokenizers {tokenizers.__version__}")
    print(f"whole processes (median of {args.rounds}): scan {scan:.2f} s, plain {plain:.2f} s: "
          f"the scan runs at {plain / scan:.2f}x the plain loop's speed\n")  # fmt: skip
    print(f"| part (best of {args.rounds}) | seconds | of the scan |\n|---|---|---|")
    imports = whole["imports (vocabrisk.cli)"] - whole["imports (tokenizers, numpy)"]
    counted = {name: seconds for name, seconds in found.items() if not name.startswith("read")}  # in line
    for name, seconds in [*found.items(), ("vocabrisk's imports, beyond tokenizers and numpy", imports)]:
        print(f"| {name} | {seconds:.3f} | {seconds / scan:.0%} |")
    rest = scan - sum(counted.values()) - imports - whole["imports (tokenizers, numpy)"]
    print(f"| the rest (start-up, discovery, the profile's files, the forecast, hand-offs) | {rest:.3f} | "
          f"{rest / scan:.0%} |")  # fmt: skip


if __name__ == "__main__":
    main()
