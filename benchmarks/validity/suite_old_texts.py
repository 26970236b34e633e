"""Five old texts in one run: seen candidates and v3's probes, measured on three new old texts beside wiki and code.

    python benchmarks/validity/suite_v3.py && python benchmarks/validity/suite_v4.py     # the suites it copies from
    python benchmarks/validity/pools.py F && python benchmarks/validity/suite_v4_pools.py F   # and I, J, K likewise
    python benchmarks/validity/suite_old_texts.py      # -> benchmarks/.cache/forecast/old-texts/
    python benchmarks/validity/runner.py --suite benchmarks/.cache/forecast/old-texts \
        --out docs/validity/v9/old-texts --device cpu

The protocol is docs/validity/v9/PROTOCOL-old-texts.md. Each run's tokens are copied from the suite that first
held it (the same tokens, plan and seed), so its wiki and code numbers repeat a run already measured, which
checks the runner. Only the three new old texts are new.
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data
import suite_v2 as v2
import suite_v3 as v3
import suite_v4 as v4

FORECAST = v2.CACHE.parent / "forecast"
OUT = FORECAST / "old-texts"
NEW_OLD = {  # name: the source whose held-out tail becomes the old text (none is a source of a run below)
    "docs": "en-rust-book",  # English technical documentation (Markdown)
    "de": "de-grimm",  # German literary prose
    "json": "json-mdn-bcd",  # structured data
}
OLD_TOKENS = 12_000  # enough text for v3's 16 windows of 256 tokens, spread
SUITES = {"v3": "real", "E": "v4", "F": "v4-pool-f", "I": "v4-pool-i", "J": "v4-pool-j", "K": "v4-pool-k"}
ORDER = (  # (set, run): kinds interleaved, so that a sweep cut short still holds every kind; probes after eight
    ("v3", "en-austen-pride:1ep"),
    ("F", "code-go-net-http:1ep"),
    ("I", "fr-words:1ep"),
    ("E", "tsv-chess-openings:1ep"),
    ("K", "en-git-docs:1ep"),
    ("K", "code-python-pyparsing:1ep"),
    ("v3", "ko-chatbot:1ep"),
    ("K", "txt-cmudict:1ep"),
    ("v3", "probe:english-prose"),
    ("v3", "probe:english-prose:10ep"),
    ("v3", "probe:python-code"),
    ("v3", "probe:german-dialogue"),
    ("v3", "probe:korean-notes"),
    ("J", "nl-words:1ep"),
    ("J", "code-haskell-hugs:1ep"),
    ("F", "en-debian-docs:1ep"),
    ("J", "csv-airports:1ep"),
    ("E", "en-poetry-whitman:1ep"),
    ("K", "code-d-phobos:1ep"),
    ("K", "ml-words:1ep"),
    ("v3", "dialog-sgd:1ep"),
)


def seen_runs() -> list[tuple[str, Path, dict, dict]]:
    """Each run of ORDER as the suite that first held it has it: (set, that suite's folder, suite, run)."""
    out = []
    for label, name in ORDER:
        folder = FORECAST / SUITES[label]
        suite = json.loads((folder / "suite.json").read_text())
        out.append((label, folder, suite, next(r for r in suite["runs"] if r["name"] == name)))
    return out


def texts(sources, seen) -> dict[str, list[str]]:
    """Each old text's documents, written beside the suite as `old-NAME.jsonl` (what a scan's --reference reads),
    and each SEEN run's text under `texts/`, copied from the suite that first held it."""
    (OUT / "texts").mkdir(parents=True, exist_ok=True)
    olds = {name: data.read_jsonl(FORECAST / SUITES["K"] / f"old-{name}.jsonl") for name in ("wiki", "code")}
    olds |= {name: sources.take(sources.split(source)[1], OLD_TOKENS) for name, source in NEW_OLD.items()}
    for name, docs in olds.items():
        data.write_jsonl(OUT / f"old-{name}.jsonl", docs)
    for _, folder, _, run in seen:
        shutil.copyfile(folder / "texts" / f"{run['file']}.jsonl", OUT / "texts" / f"{run['file']}.jsonl")
    return olds


def build(log) -> Path:
    from vocabrisk.model.loaded import load_model

    loaded = load_model(str(v2.smollm2_folder(log)))
    seen = seen_runs()
    olds = texts(v3.Sources(loaded), seen)
    arrays, runs = {}, []
    first = json.loads((FORECAST / SUITES["K"] / "suite.json").read_text())
    with np.load(FORECAST / SUITES["K"] / "tokens.npz") as tokens:
        for name in ("wiki", "code"):
            arrays[f"old/{name}"] = tokens[f"old/{name}"]
    for name in NEW_OLD:
        arrays[f"old/{name}"] = v4.old_windows(loaded, olds[name])
    for label, folder, suite, run in seen:
        assert not set(run.get("sources", ())) & set(NEW_OLD.values()), run["name"]
        with np.load(folder / "tokens.npz") as tokens:
            for part in ("train", "heldout"):
                arrays[f"{run['file']}/{part}"] = tokens[f"{run['file']}/{part}"]
        runs.append({**run, "from": f"{label}:{suite['fingerprint']}"})
        tokens_in = len(arrays[f"{run['file']}/train"])
        log(f"{run['name']:>28} from {label:>3} ({suite['fingerprint']}): {tokens_in:>7,} tokens")
    np.savez_compressed(OUT / "tokens.npz", **arrays)
    suite = {
        "base": "smollm2",
        "version": 4,
        "model": first["model"],
        "fingerprint": v3.fingerprint(arrays),
        "plans": first["plans"],
        "plan": asdict(v3.REGIME_A),
        "old": ["wiki", "code", *NEW_OLD],
        "runs": runs,
        "jobs": [{"run": name, "regime": "A", "seed": 0} for _, name in ORDER],
    }
    (OUT / "suite.json").write_text(json.dumps(suite, indent=1) + "\n")
    log(f"suite {suite['fingerprint']}: {len(runs)} runs, {len(suite['jobs'])} jobs, old texts {suite['old']} -> {OUT}")
    return OUT


def main() -> int:
    if not v3.CORPORA.is_dir():
        print(f"old-texts suite: {v3.CORPORA} is absent; it needs the shared corpora. Nothing was built.")
        return 2
    build(lambda message: print(message, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
