"""Engines, measured: whole `vocabrisk scan` processes on each engine against a plain tokenizers loop.

    python benchmarks/speed/engines.py --env 0.23=PYTHON --env 1.0=PYTHON [--mb 60] [--rounds 3] [--out FILE.md]
    python benchmarks/speed/engines.py --mb 1 --rounds 1 --big-vocab 30000   # the tiny mode: checks it all runs

Each `--env NAME=PYTHON` is an environment to measure in: an interpreter with its own tokenizers (0.2x
beside transformers, or 1.0), with or without fastokens, where vocabrisk imports from this checkout
(PYTHONPATH is set to it). Default: this interpreter alone. For every environment, every shared tokenizer
plus a byte-level BPE of `--big-vocab` tokens (150k, trained on first use by big_tokenizer.py and kept in
benchmarks/.cache), and each corpus layout (`--mb` MB of text as a folder of 50 kB text files, and as one
JSON Lines file), it times whole fresh processes, start-up included:

- plain: `plain_count.py`, which imports tokenizers and numpy only, loads the tokenizer and counts
  with `encode_batch` in batches of 64 documents, as a careful user would;
- `vocabrisk scan CORPUS --model DIR --engine E --format json -q --prior tokenizer` for E in tokenizers,
  fastokens (where installed) and auto, with a warm cache.

Rounds alternate the commands, each round in another order, so drift and load meet every command alike; a
cell is the fastest of the rounds, a ratio the median of the rounds' ratios. Counts are compared id for id:
the digest of every command's full per-id count vector (plain's, and each saved profile's) must be the
plain loop's. The fixed cost is a scan of one 11-byte document against the plain process on it. The table
is printed, and written as Markdown with `--out`. Run it on a quiet machine: one run at 60 MB takes minutes
(tokenizers 0.2x counts 1-4 MB/s on 2 cores).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from plain_count import digest  # the plain loop's own: counts compare id for id

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CACHE = REPO / "benchmarks" / ".cache"  # git-ignored
SHARED = REPO.parent / "shared" / "data"
SHARED_TOKENIZERS = ["gpt2", "gpt-neox-20b", "llama2", "bert-base-uncased", "pegasus"]
ENGINES = ["tokenizers", "fastokens", "auto"]
BATCH = 64  # documents per encode_batch call in the plain loop
DOC_CHARS = 50_000
NOVEL_WORDS = 400  # pseudo-words after each repeated document, so a repeat is not all cache hits


# ---- inputs -----------------------------------------------------------------------------------------------
def documents(megabytes: float) -> list[str]:
    """About MEGABYTES of 50 kB documents cut from the shared corpora, interleaved; each repeat of a document
    followed by novel pseudo-words (halves of two of its words joined), seeded."""
    sys.path.insert(0, str(HERE))
    from inputs import documents as shared_documents

    base = shared_documents(SHARED)
    rng = random.Random(0)
    out, size = [], 0
    for repeat in itertools.count():
        for text in base:
            if repeat:
                words = text.split() or ["word"]
                pairs = ((rng.choice(words), rng.choice(words)) for _ in range(NOVEL_WORDS))
                text = text + "\n" + " ".join(a[: (len(a) + 1) // 2] + b[len(b) // 2 :] for a, b in pairs)
            out.append(text)
            size += len(text.encode("utf-8"))
            if size >= megabytes * 1_000_000:
                return out
    return out


def write_corpora(work: Path, megabytes: float) -> dict[str, Path]:
    texts = documents(megabytes)
    folder = work / "folder"
    folder.mkdir()
    for number, text in enumerate(texts):
        (folder / f"doc-{number:06d}.txt").write_text(text, encoding="utf-8")
    jsonl = work / "corpus.jsonl"
    with jsonl.open("w", encoding="utf-8") as out:
        out.writelines(json.dumps({"text": text}, ensure_ascii=False) + "\n" for text in texts)
    tiny = work / "tiny.jsonl"
    tiny.write_text(json.dumps({"text": "hello world"}) + "\n", encoding="utf-8")
    return {f"{len(texts):,} files of 50 kB": folder, "one JSON Lines file": jsonl, "tiny": tiny}  # tiny: fixed cost


def big_tokenizer(vocab: int) -> Path:
    """A byte-level BPE of VOCAB tokens (big_tokenizer.py), trained once and kept in benchmarks/.cache."""
    folder = CACHE / f"bpe-{vocab // 1000}k"
    if not (folder / "tokenizer.json").exists():
        script = HERE / "big_tokenizer.py"
        subprocess.run([sys.executable, str(script), str(SHARED), str(folder), str(vocab)], check=True)
    return folder


# ---- timing -----------------------------------------------------------------------------------------------
class Env:
    """An interpreter to measure in, importing vocabrisk from ROOT (this checkout, or another version's tree)."""

    def __init__(self, name: str, python: str, cache: Path, root: Path = REPO):
        self.name, self.python, self.cache, self.root = name, python, cache, root
        probe = "import tokenizers, importlib.util as u; print(tokenizers.__version__, bool(u.find_spec('fastokens')))"
        version, accelerated = self.run([python, "-c", probe]).stdout.split()
        self.tokenizers, self.fastokens = version, accelerated == "True"

    def run(self, command: list[str]) -> subprocess.CompletedProcess:
        """COMMAND in ROOT: `python -c` puts the working folder ahead of PYTHONPATH, so from anywhere else a
        vocabrisk folder there (the checkout's, where the benchmark is started) would be imported instead."""
        env = {**os.environ, "PYTHONPATH": str(self.root), "XDG_CACHE_HOME": str(self.cache)}
        return subprocess.run(command, capture_output=True, text=True, env=env, check=False, cwd=self.root)

    def plain(self, corpus: Path, model: Path) -> list[str]:
        return [self.python, str(HERE / "plain_count.py"), str(corpus), str(model)]

    def scan(self, corpus: Path, model: Path, engine: str, out: Path) -> list[str]:
        code = "from vocabrisk.cli import main; main()"
        return [self.python, "-c", code, "scan", str(corpus), "--model", str(model), "--engine", engine,
                "--prior", "tokenizer", "--format", "json", "-q", "--out", str(out), "--force"]  # fmt: skip


def timed(env: Env, command: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = env.run(command)
    return time.perf_counter() - start, done


def profile_digest(folder: Path) -> str:
    import pyarrow.parquet as pq

    return digest(pq.read_table(folder / "tokens.parquet", columns=["count"]).column("count").to_numpy())


def measure(env: Env, model: Path, corpus: Path, rounds: int, work: Path) -> dict:
    """Every command on CORPUS for ROUNDS alternating rounds: best seconds, median ratio to plain, and whether
    each counted what plain counted."""
    commands = {"plain": env.plain(corpus, model)}
    engines = [e for e in ENGINES if e != "fastokens" or env.fastokens]
    outs = {engine: work / f"profile-{engine}" for engine in engines}
    commands.update({engine: env.scan(corpus, model, engine, outs[engine]) for engine in engines})
    times: dict[str, list[float]] = {name: [] for name in commands}
    failed: dict[str, str] = {}
    plain_digest = None
    for number in range(rounds):
        order = list(commands)[number % len(commands) :] + list(commands)[: number % len(commands)]
        for name in order if number % 2 == 0 else reversed(order):
            if name in failed:
                continue
            seconds, done = timed(env, commands[name])
            if done.returncode:
                error = " ".join(done.stderr.split()).removeprefix("error: ").removeprefix("--engine fastokens: ")
                failed[name] = error.split(" hint: ")[0][:100] or "failed"
                continue
            times[name].append(seconds)
            if name == "plain":
                plain_digest = json.loads(done.stdout)["digest"]
    cells = {}
    for name, seconds in times.items():
        if name in failed or not seconds:
            cells[name] = {"error": failed.get(name, "no run")}
            continue
        pairs = list(zip(times["plain"], seconds, strict=False))
        cell = {
            "seconds": min(seconds),
            "vs_plain": statistics.median(p / s for p, s in pairs) if pairs else float("nan"),
            "over_plain": statistics.median(s - p for p, s in pairs) if pairs else float("nan"),
        }
        if name != "plain":
            cell["exact"] = profile_digest(outs[name]) == plain_digest
            cell["engine"] = json.loads((outs[name] / "profile.json").read_text())["tokenizer"]["engine"]
        cells[name] = cell
    return cells


def cell_text(cell: dict, name: str, fixed: bool) -> str:
    """A cell: seconds, and against plain the ratio (or, for the fixed cost, the seconds over it)."""
    if "error" in cell:
        return f"refused: {cell['error']}"
    text = f"{cell['seconds']:.2f} s"
    if name != "plain":
        text += f", {cell['over_plain']:+.2f} s" if fixed else f", {cell['vs_plain']:.2f}x"
        text += "" if cell["exact"] else ", COUNTS DIFFER"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", action="append", default=[], metavar="NAME=PYTHON", help="an environment (repeat)")
    parser.add_argument("--mb", type=float, default=60, help="MB of text in each corpus layout  [default: 60]")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of every command  [default: 3]")
    parser.add_argument("--big-vocab", type=int, default=150_000, help="the trained BPE's size  [default: 150000]")
    parser.add_argument("--tokenizers", default=",".join(SHARED_TOKENIZERS), help="shared tokenizers, by name")
    parser.add_argument("--out", type=Path, help="also write the table here, as Markdown")
    args = parser.parse_args()
    pythons = dict(e.split("=", 1) for e in args.env) or {"this": sys.executable}
    pythons = {name: os.path.abspath(p) if os.sep in p else p for name, p in pythons.items()}  # Env runs elsewhere
    models = {name: SHARED / "tokenizers" / name for name in args.tokenizers.split(",") if name}
    models[f"bpe-{args.big_vocab // 1000}k"] = big_tokenizer(args.big_vocab)
    lines = [
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start; {args.mb:g} MB corpora;"
        f" best of {args.rounds} alternating rounds; x: median ratio of the plain loop's seconds to the scan's;"
        " tiny (one 11-byte document): the median seconds over the plain process",
        "",
        "| environment | tokenizer | corpus | plain loop | --engine tokenizers | --engine fastokens | --engine auto"
        " | auto counted with |",
        "|---|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    with tempfile.TemporaryDirectory(prefix="vocabrisk-engines-") as tmp:
        work = Path(tmp)
        corpora = write_corpora(work, args.mb)
        for name, python in pythons.items():
            env = Env(name, python, work / f"cache-{name}")
            label = f"{name}: tokenizers {env.tokenizers}" + (", fastokens" if env.fastokens else ", no fastokens")
            for model_name, model in models.items():
                env.run(env.scan(corpora["tiny"], model, "tokenizers", work / "warm"))  # the warm cache
                for corpus_name, corpus in corpora.items():
                    cells = measure(env, model, corpus, args.rounds, work)
                    fixed = corpus_name == "tiny"
                    row = [label, model_name, corpus_name, cell_text(cells["plain"], "plain", fixed)]
                    row += [cell_text(cells[e], e, fixed) if e in cells else "not installed" for e in ENGINES]
                    row.append(cells["auto"].get("engine", "-"))
                    line = "| " + " | ".join(row) + " |"
                    lines.append(line)
                    print(line, flush=True)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
