"""Peak memory of a scan on inputs that used to blow it up, side by side with a small file.

Each case runs `vocabrisk scan FILE --model demo` in its own process and reads that process's
peak resident set size from the kernel (`wait4`). The inputs, written to a temporary folder:

- small:       a 1 MB text file (the baseline every ratio is taken against);
- one-line:    SIZE of varied words on one line (one document, no newline);
- gzip-text:   repetitive text that gzip packs about 400:1, expanding to SIZE;
- gzip-nul:    NUL bytes packed by gzip about 1000:1, expanding to SIZE (binary: refused at once);
- jsonl:       SIZE of JSON Lines records of about 2 kB.

Counts are checked too: the one-line file's first `--check-mb` MB is counted by the scan (in
pieces) and by the tokenizer encoding it whole, and the two must be equal.

    python benchmarks/memory/scan.py                 # SIZE 200 MB: a few minutes on two cores
    python benchmarks/memory/scan.py --size-mb 1000  # the 1 GB of docs/PERFORMANCE.md
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

MB = 1_000_000


def words(seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyzäöüéñ"
    return ["".join(rng.choices(letters, k=rng.randint(2, 10))) for _ in range(50_000)]


def write_one_line(path: Path, size: int) -> None:
    rng, vocabulary, written = random.Random(2), words(), 0
    with path.open("w", encoding="utf-8") as file:
        while written < size:
            chunk = " ".join(rng.choices(vocabulary, k=20_000)) + " "
            file.write(chunk)
            written += len(chunk.encode("utf-8"))


def write_gzip(path: Path, unit: bytes, size: int) -> None:
    block = unit * (MB // len(unit))
    with gzip.open(path, "wb", compresslevel=9) as file:
        for _ in range(size // len(block)):
            file.write(block)


def write_jsonl(path: Path, size: int) -> None:
    rng, vocabulary, written = random.Random(3), words(), 0
    with path.open("w", encoding="utf-8") as file:
        while written < size:
            lines = "".join(json.dumps({"text": " ".join(rng.choices(vocabulary, k=300))}) + "\n" for _ in range(500))
            file.write(lines)
            written += len(lines)


def measure(path: Path) -> dict:
    """Scan `path` in a fresh process: its own peak RSS (MB, from wait4 in a small parent of
    its own), wall time, and what the scan said."""
    code = (
        "import json,os,subprocess,sys,time;"
        "t=time.perf_counter();p=subprocess.Popen(sys.argv[1:],stdout=subprocess.PIPE,stderr=subprocess.PIPE);"
        "o,e=p.stdout.read(),p.stderr.read();_,s,u=os.wait4(p.pid,0);"
        "print(json.dumps({'rss':u.ru_maxrss,'t':time.perf_counter()-t,'rc':os.waitstatus_to_exitcode(s),"
        "'out':o.decode(),'err':e.decode('utf-8','replace')}))"
    )
    command = [
        sys.executable,
        "-m",
        "vocabrisk.cli",
        "scan",
        str(path),
        "--model",
        "demo",
        "-q",
        "--format",
        "json",
    ]
    raw = json.loads(subprocess.run([sys.executable, "-c", code, *command], capture_output=True, check=True).stdout)
    result = {"peak_rss_mb": raw["rss"] / 1024, "seconds": raw["t"], "exit": raw["rc"]}
    if raw["rc"] == 0:
        data = json.loads(raw["out"])
        result |= {"tokens": data["tokens"], "documents": data["documents"], "skipped": data["skips"]["summary"]}
    else:
        result["error"] = " ".join(raw["err"].split())[:200]
    return result


def check_counts(path: Path, megabytes: int) -> bool:
    """The scan's count of the file's first MEGABYTES (in pieces) against encoding it whole."""
    from vocabrisk import scan
    from vocabrisk.counting import SpecialTokenPolicy, TokenCounter
    from vocabrisk.model.loaded import load_model

    with path.open("rb") as file:
        head = file.read(megabytes * MB)
    text = head.decode("utf-8", "ignore")
    part = path.with_name("check.txt")
    part.write_text(text, encoding="utf-8")
    loaded = load_model("demo")
    whole = TokenCounter(loaded.files.tokenizer_json, loaded.vocab.size, SpecialTokenPolicy(), None).count([text])
    return bool(np.array_equal(scan([str(part)], loaded).counts.counts, whole.counts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=200, help="size of each large input (decompressed)")
    parser.add_argument("--check-mb", type=int, default=20, help="MB of the one-line file counted both ways")
    args = parser.parse_args()
    size = args.size_mb * MB
    with tempfile.TemporaryDirectory(prefix="vocabrisk-memory-") as folder:
        root = Path(folder)
        cases = {
            "small": root / "small.txt",
            "one-line": root / "one-line.txt",
            "gzip-text": root / "bomb.txt.gz",
            "gzip-nul": root / "nul.txt.gz",
            "jsonl": root / "records.jsonl",
        }
        write_one_line(cases["small"], MB)
        write_one_line(cases["one-line"], size)
        write_gzip(cases["gzip-text"], b"the cat sat on the mat. ", size)
        write_gzip(cases["gzip-nul"], b"\0" * 64, size)
        write_jsonl(cases["jsonl"], size)
        print(f"inputs of {args.size_mb} MB (decompressed), scanned with --model demo, one process each\n")
        print(f"{'case':<10} {'on disk':>10} {'peak RSS':>10} {'× small':>8} {'seconds':>8}  result")
        baseline = None
        for name, path in cases.items():
            result = measure(path)
            baseline = baseline or result["peak_rss_mb"]
            said = (
                f"{result['tokens']:,} tokens, {result['documents']:,} documents, skipped {result['skipped'] or 'none'}"
                if result["exit"] == 0
                else f"exit {result['exit']}: {result['error']}"
            )
            print(
                f"{name:<10} {path.stat().st_size / MB:>8.1f}MB {result['peak_rss_mb']:>8.0f}MB "
                f"{result['peak_rss_mb'] / baseline:>8.2f} {result['seconds']:>8.1f}  {said}"
            )
        equal = check_counts(cases["one-line"], args.check_mb)
        verdict = "equal" if equal else "DIFFER"
        print(f"\ncounts of the one-line file's first {args.check_mb} MB, in pieces vs whole: {verdict}")


if __name__ == "__main__":
    main()
