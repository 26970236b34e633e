"""Whole-process timings, start-up included: what a user or a CI job waits for.

Every figure is the wall time of a fresh process, from exec to exit, timed by the parent:
`vocabrisk scan CORPUS --model DIR --format json -q` against `plain_count.py` (imports
tokenizers and numpy, loads the same tokenizer, counts with plain `encode_batch`), on the
1.0 engine and on 0.23. A cold cache is an empty XDG_CACHE_HOME; a warm one has the
tokenizer's facts from an earlier run. Fixed-cost rows take the fastest of `repeats` runs
(start-up noise only ever adds) and the median of paired differences; corpus rows take the
fastest of CORPUS_ROUNDS interleaved rounds and the median of paired ratios, all in one go.
Fixed costs also show CPU seconds (user + system of the process), which a machine shared with
other jobs inflates far less than wall time.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from inputs import write_corpus

HERE = Path(__file__).resolve().parent
PLAIN = HERE / "plain_count.py"
RANK_CANDIDATES = 10
CORPUS_ROUNDS = 3  # a corpus row's rounds: one run each swung the 60 MB ratios by 0.2


def cpu_seconds() -> float:
    """User + system CPU seconds of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], cache: Path, cpu: list[float] | None = None) -> tuple[float, dict]:
    """Wall seconds of one process, and the JSON object on the last line it printed; its CPU
    seconds are appended to `cpu` if given."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    start, cpu_start = time.perf_counter(), cpu_seconds()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if cpu is not None:
        cpu.append(cpu_seconds() - cpu_start)
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.strip()[-500:]}")
    text = done.stdout.strip()
    try:
        return seconds, json.loads(text) if text.startswith("{") else json.loads(text.splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        return seconds, {}


class Runs:
    """The commands of one benchmark: plain processes on both engines, vocabrisk on 1.0."""

    def __init__(self, pythons: dict[str, Path], work: Path):
        self.pythons = pythons
        self.vocabrisk = str(pythons["1.0"].with_name("vocabrisk"))
        self.work = work
        self.warm = work / "cache-warm"

    def plain(self, engine: str, corpus: Path, model: Path, cpu: list[float] | None = None) -> tuple[float, dict]:
        return timed([str(self.pythons[engine]), str(PLAIN), str(corpus), str(model)], self.warm, cpu)

    def scan(self, corpus: Path, model: Path, cold: bool = False, *extra: str, cpu: list[float] | None = None):
        cache = Path(tempfile.mkdtemp(dir=self.work, prefix="cache-cold-")) if cold else self.warm
        command = [self.vocabrisk, "scan", str(corpus), "--model", str(model), "--format", "json", "-q", *extra]
        return timed(command, cache, cpu)

    def command(self, *args: str) -> float:
        return timed([self.vocabrisk, *args], self.warm)[0]


def fixed_costs(runs: Runs, name: str, model: Path, tiny: Path, repeats: int) -> None:
    """Rounds of (plain 1.0, plain 0.23, cold, warm), interleaved so that each round's runs meet
    the same load; "over" is the median over rounds of vocabrisk's time minus plain 1.0's."""
    runs.scan(tiny, model)  # fills the warm cache
    rounds, cpu = [], {"plain_1": [], "cold": [], "warm": []}
    for _ in range(repeats):
        rounds.append(
            {
                "plain_1": runs.plain("1.0", tiny, model, cpu["plain_1"])[0],
                "plain_023": runs.plain("0.23", tiny, model)[0],
                "cold": runs.scan(tiny, model, True, cpu=cpu["cold"])[0],
                "warm": runs.scan(tiny, model, cpu=cpu["warm"])[0],
            }
        )
    best = {key: min(r[key] for r in rounds) for key in rounds[0]}
    over = {key: statistics.median(r[key] - r["plain_1"] for r in rounds) for key in ("cold", "warm")}
    cpu_over = {
        key: statistics.median(a - b for a, b in zip(cpu[key], cpu["plain_1"], strict=True)) for key in ("cold", "warm")
    }
    print(
        f"  {name:<22}{best['plain_023']:>9.2f} s{best['plain_1']:>9.2f} s{best['cold']:>9.2f} s{over['cold']:>+8.2f} s"
        f"{best['warm']:>9.2f} s{over['warm']:>+8.2f} s{min(cpu['plain_1']):>9.2f} s"
        f"{cpu_over['cold']:>+9.2f} s{cpu_over['warm']:>+9.2f} s"
    )


def corpus_row(runs: Runs, name: str, model: Path, label: str, corpus: Path, megabytes: int, slow: bool) -> None:
    """CORPUS_ROUNDS interleaved rounds of (plain 1.0, vocabrisk): the fastest of each, and the median
    over rounds of their ratio; plain 0.23 (minutes on 60 MB) runs once."""
    rounds = []
    for _ in range(CORPUS_ROUNDS):
        plain_1, counted = runs.plain("1.0", corpus, model)
        scan, report = runs.scan(corpus, model)
        rounds.append((plain_1, scan))
    plain_1, scan = (min(times) for times in zip(*rounds, strict=True))
    ratio = statistics.median(plain / ours for plain, ours in rounds)
    plain_023 = runs.plain("0.23", corpus, model)[0] if slow else None
    same = "same" if report.get("tokens") == counted["tokens"] else f"DIFFERENT ({report.get('tokens')})"
    slow_cells = f"{plain_023:>9.1f} s{plain_023 / scan:>9.1f}x" if plain_023 else f"{'-':>11}{'-':>10}"
    print(
        f"  {name:<14}{label:<8}{megabytes:>5} MB{slow_cells}{plain_1:>9.2f} s{scan:>9.2f} s"
        f"{plain_1 / scan:>9.2f}x{ratio:>9.2f}x  {counted['tokens']:>13,} tokens {same}"
    )


def command_costs(runs: Runs, name: str, model: Path, small: Path, repeats: int) -> None:
    """--help, gate on a saved profile, and rank over candidates against a scan of one of them."""
    profile = runs.work / f"profile-{name}"
    runs.scan(small, model, False, "--out", str(profile))
    candidates = []
    for k in range(RANK_CANDIDATES):
        path = runs.work / f"candidate-{k}.jsonl"
        lines = small.read_text(encoding="utf-8").splitlines(keepends=True)
        path.write_text("".join(lines[k :: RANK_CANDIDATES * 4]), encoding="utf-8")  # ~100 kB each
        candidates.append(str(path))
    help_s = min(runs.command("--help") for _ in range(repeats))
    gate_s = min(runs.command("gate", str(profile), "--max-risk", "1") for _ in range(repeats))
    one = min(runs.scan(Path(candidates[0]), model)[0] for _ in range(repeats))
    rank = min(runs.command("rank", *candidates, "--model", str(model), "--format", "json") for _ in range(repeats))
    print(
        f"  {name:<22}{help_s:>9.2f} s{gate_s:>9.2f} s{one:>9.2f} s{rank:>9.2f} s"
        f"{(rank - one) / (RANK_CANDIDATES - 1):>+9.2f} s"
    )


def whole_process(shared: Path, pythons: dict[str, Path], models: dict[str, Path], sizes: dict[str, int],
                  slow_sizes: set[str], repeats: int) -> None:  # fmt: skip
    # Bytecode as an installed package has it (pip compiles on install): without it, and with
    # PYTHONDONTWRITEBYTECODE set, every process would compile vocabrisk's sources again.
    for python in pythons.values():
        subprocess.run([str(python), "-m", "compileall", "-q", str(HERE.parents[1] / "vocabrisk")], check=True)
    with tempfile.TemporaryDirectory(prefix="vocabrisk-whole-") as tmp:
        work = Path(tmp)
        runs = Runs(pythons, work)
        tiny = work / "tiny.jsonl"
        tiny.write_text(json.dumps({"text": "hello world"}) + "\n")
        corpora = {}
        for label, megabytes in sizes.items():
            corpora[label] = work / f"{label}.jsonl"
            write_corpus(shared, corpora[label], megabytes)

        print(
            f"\nwhole process, fixed cost alone (one 11-byte document; fastest of {repeats}; over: median of rounds"
            " of vocabrisk minus plain 1.0; cpu: user + system seconds)"
        )
        print(
            f"  {'tokenizer':<22}{'0.23 plain':>11}{'1.0 plain':>11}{'cold':>11}{'over':>10}{'warm':>11}{'over':>10}"
            f"{'plain cpu':>11}{'cold cpu +':>11}{'warm cpu +':>11}"
        )
        for name, model in models.items():
            fixed_costs(runs, name, model, tiny, repeats)

        print(
            f"\nwhole process, scan of a corpus (warm cache; fastest of {CORPUS_ROUNDS} interleaved rounds; median:"
            " of the rounds' ratios; 0.23 one run)"
        )
        print(
            f"  {'tokenizer':<14}{'corpus':<16}{'0.23 plain':>11}{'vs 0.23':>10}{'1.0 plain':>11}{'vocabrisk':>11}"
            f"{'vs 1.0':>10}{'median':>10}  counts"
        )
        for name, model in models.items():
            for label, corpus in corpora.items():
                corpus_row(runs, name, model, label, corpus, sizes[label], label in slow_sizes)

        print(f"\ncommands, warm cache (fastest of {repeats}); rank of {RANK_CANDIDATES} ~100 kB candidates")
        print(f"  {'tokenizer':<22}{'--help':>11}{'gate':>11}{'scan one':>11}{'rank':>11}{'per extra':>11}")
        small = corpora[min(sizes, key=sizes.get)]
        for name, model in models.items():
            command_costs(runs, name, model, small, repeats)
