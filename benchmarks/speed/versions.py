"""Two versions' scans side by side: this checkout's against an earlier commit's, whole processes, interleaved.

    python benchmarks/speed/versions.py REV TOKENIZER_DIR [--mb 60] [--rounds 5]

What issue 30 asks of a new forecast's scan ("no more than a v3 scan"), measured as a ratio in one run:
REV's tree (`git archive`, into a temporary folder) and this checkout each run `engines.py`'s `vocabrisk scan`
(`--engine auto`, the default) as a fresh process, in this interpreter (the same engines), each with its own
warm cache, on the same corpus (`--mb` MB of 50 kB text files, as `engines.py`
writes it). Rounds alternate which goes first; a row is the fastest of the rounds, the ratio the median of
the rounds' ratios. The two profiles' per-id counts must be the same (`engines.profile_digest`). Run it on a
quiet machine.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from engines import REPO, Env, profile_digest, timed, write_corpora


def tree(rev: str, into: Path) -> Path:
    """REV's files (the committed tree) under INTO."""
    archive = into / "tree.tar"
    subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", "-o", str(archive), rev], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "tree", filter="data")
    return into / "tree"


def scan(env: Env, corpus: Path, model: Path, out: Path) -> float:
    """Seconds of one fresh `vocabrisk scan` process (the default engine, `auto`) with ENV's vocabrisk."""
    seconds, done = timed(env, env.scan(corpus, model, "auto", out))
    if done.returncode:
        raise SystemExit(f"scan with {env.root} failed: {done.stderr[-800:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rev", help="the earlier commit (for example the v3 forecast as landed, 7f7fb88)")
    parser.add_argument("tokenizer_dir", type=lambda p: Path(p).resolve())
    parser.add_argument("--mb", type=float, default=60.0)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vocabrisk-versions-") as work_dir:
        work = Path(work_dir)
        roots = {args.rev: tree(args.rev, work), "this checkout": REPO}
        caches = {name: work / f"cache-{i}" for i, name in enumerate(roots)}
        envs = {name: Env(name, sys.executable, caches[name], root) for name, root in roots.items()}
        write_corpora(work, args.mb)
        corpus = work / "folder"
        outs = {name: work / f"profile-{i}" for i, name in enumerate(roots)}
        for name, env in envs.items():  # warm each cache: the vocabulary's facts, computed once
            scan(env, corpus, args.tokenizer_dir, outs[name])
        digests = {name: profile_digest(outs[name]) for name in roots}
        if len(set(digests.values())) != 1:
            raise SystemExit(f"the two versions counted differently: {digests}")
        times: dict[str, list[float]] = {name: [] for name in roots}
        for round_ in range(args.rounds):
            names = list(roots) if round_ % 2 == 0 else list(roots)[::-1]
            for name in names:
                times[name].append(scan(envs[name], corpus, args.tokenizer_dir, outs[name]))
        old, new = times[args.rev], times["this checkout"]
        ratio = statistics.median(n / o for n, o in zip(new, old, strict=True))
        print(f"{corpus} ({args.mb:g} MB), {args.tokenizer_dir.name}, {args.rounds} interleaved rounds")
        print("| version | fastest scan (s) |\n|---|---|")
        print(f"| {args.rev} | {min(old):.2f} |\n| this checkout | {min(new):.2f} |")
        print(f"this checkout / {args.rev}: {ratio:.3f}x (median of the rounds' ratios); counts identical")


if __name__ == "__main__":
    main()
