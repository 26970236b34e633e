"""The v4 forecast benchmark: SmolLM2-135M-Instruct, forgetting measured along the run, 12 fresh sources.

    python benchmarks/validity/suite_v4.py     # -> benchmarks/.cache/forecast/v4/

The protocol is docs/validity/v4/PROTOCOL.md, committed before any v4 run; this file is its
recipe and must not change once runs exist (the runner checks the suite's fingerprint, which
every run records). It reuses v3's recipe (`suite_v3.py`) for everything v3 fixed (the two old
texts, the replay text, the way sources are cut into documents and sizes), so that v3's 62 runs
are design data on the same old texts, and adds:

- **held-out candidates from the 12 sources of pool E** (`../shared/data/corpora/MANIFEST-ADDED-2.md`),
  none of which any design run or analysis has read;
- **curves**: every plan names the steps at which the old texts' loss is measured (`checkpoints`);
- **plans by learning rate**: regime A at lr 1e-4 and 1e-3 beside 3e-4, and regime B (80 steps).

Design curve runs take v3 candidates (design data already) at the three learning rates.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data
import suite_v2 as v2
import suite_v3 as v3

OUT = v2.CACHE / "v4"

CURVE_A = (5, 10, 20, 40)
CURVE_B = (5, 10, 20, 40, 80)
PLANS = {
    "A": (v3.REGIME_A, CURVE_A),
    "A-lr1e-4": (replace(v3.REGIME_A, lr=1e-4), CURVE_A),
    "A-lr1e-3": (replace(v3.REGIME_A, lr=1e-3), CURVE_A),
    "B": (v3.REGIME_B, CURVE_B),
}

# Pool E: every one of its 12 sources is held out (PROTOCOL.md). v3's 19 sources are design sources.
HELDOUT_SOURCES = (
    "pt-debian-reference",
    "el-installation-guide",
    "it-fortunes",
    "fa-react-docs",
    "en-poetry-whitman",
    "en-changelog-abcmidi",
    "en-devil-dictionary",
    "code-c-linux-uapi",
    "code-ruby-stdlib",
    "code-cmake-modules",
    "xml-wayland-protocols",
    "tsv-chess-openings",
)
DESIGN_SOURCES = v3.DESIGN_SOURCES + v3.HELDOUT_SOURCES

# name: (recipe, sources, implied epochs in regime A); recipes as in suite_v3.candidate.
HELDOUT = {
    **{f"{source}:1ep": ("slice", (source,), 1.0) for source in HELDOUT_SOURCES},
    "en-poetry-whitman:10ep": ("slice", ("en-poetry-whitman",), 10.0),
    "code-ruby-stdlib:0.2ep": ("slice", ("code-ruby-stdlib",), 0.2),
    "en-devil-dictionary:3ep": ("slice", ("en-devil-dictionary",), 3.0),
    "mix:el-installation-guide+code-cmake-modules": ("mix", ("el-installation-guide", "code-cmake-modules"), 1.0),
}
REPLAY = {  # scored against the what-if on the 1ep candidate of the same source (the 0% point)
    f"{source}:1ep+replay{share}%": (f"replay{share}", (source,), 1.0)
    for source in ("pt-debian-reference", "en-poetry-whitman", "code-ruby-stdlib")
    for share in (5, 25)
}
# Design curve runs: v3 candidates of four kinds (prose, code, another script, a narrow list), now
# measured along the run at each of the three learning rates.
DESIGN_CURVES = ("en-austen-pride:1ep", "code-ts-vue:1ep", "ja-manpages:1ep", "narrow:foldoc-headwords")
HELDOUT_LR = ("pt-debian-reference:1ep", "en-poetry-whitman:1ep", "code-ruby-stdlib:1ep", "tsv-chess-openings:1ep")
SECOND_SEED = (
    "it-fortunes:1ep",
    "en-poetry-whitman:1ep",
    "en-devil-dictionary:1ep",
    "code-c-linux-uapi:1ep",
    "xml-wayland-protocols:1ep",
    "tsv-chess-openings:1ep",
)
REGIME_B_RUNS = (
    "it-fortunes:1ep",
    "fa-react-docs:1ep",
    "code-c-linux-uapi:1ep",
    "en-changelog-abcmidi:1ep",
    "el-installation-guide:1ep",
    "xml-wayland-protocols:1ep",
)

RECIPES = {**{name: v3.CANDIDATES[name] for name in DESIGN_CURVES}, **HELDOUT, **REPLAY}


def jobs() -> list[dict]:
    """Every run, in the protocol's order: design curves (3e-4 and 1e-3 first), then held out."""
    out = [{"run": n, "regime": r, "seed": 0} for r in ("A", "A-lr1e-3", "A-lr1e-4") for n in DESIGN_CURVES]
    out += [{"run": n, "regime": "A", "seed": 0} for n in HELDOUT]
    out += [{"run": n, "regime": "A", "seed": 0} for n in REPLAY]
    out += [{"run": n, "regime": r, "seed": 0} for r in ("A-lr1e-3", "A-lr1e-4") for n in HELDOUT_LR]
    out += [{"run": n, "regime": "A", "seed": 1} for n in SECOND_SEED]
    out += [{"run": n, "regime": "B", "seed": 0} for n in REGIME_B_RUNS]
    return out


def old_windows(loaded, docs: list[str]) -> np.ndarray:
    """An old text as the runner reads it: v3's number of windows of the plan's length, spread over its tokens."""
    stream = v2.encode_all(loaded, docs)
    count = len(stream) // v3.REGIME_A.seq_len
    picks = np.unique(np.linspace(0, count - 1, num=v3.REGIME_A.old_windows).round().astype(int))
    return stream[: count * v3.REGIME_A.seq_len].reshape(count, v3.REGIME_A.seq_len)[picks]


def build(
    log, recipes: dict = RECIPES, replays: dict = REPLAY, out: Path = OUT, job_list=None, heldout=HELDOUT_SOURCES
) -> Path:
    """The suite of RECIPES (REPLAYS among them have the replay role) and its JOB_LIST (`jobs()`) in OUT;
    a run drawing on a source of HELDOUT is held out."""
    from vocabrisk.model.loaded import load_model

    job_list = jobs() if job_list is None else job_list
    v3.CANDIDATES.update(recipes)  # v3's recipe functions read their table; v4 adds its names to it
    model_folder = v2.smollm2_folder(log)
    loaded = load_model(str(model_folder))
    sources = v3.Sources(loaded)
    (out / "texts").mkdir(parents=True, exist_ok=True)
    arrays, runs = {}, []
    olds = v3.old_texts()
    for name, docs in olds.items():
        arrays[f"old/{name}"] = old_windows(loaded, docs)
        data.write_jsonl(out / f"old-{name}.jsonl", docs)
    replay = sources.split("en-wikitext2")[1] + sources.split("en-wikitext2")[0][-40:]  # as v3: never in wiki:1ep
    for name, (recipe, used, epochs) in recipes.items():
        docs = v3.candidate(sources, replay, olds["wiki"], name)
        safe = re.sub(r"[^A-Za-z0-9+%.-]", "_", name)
        split = "heldout" if any(s in heldout for s in used) else "design"
        assert all(s in heldout + HELDOUT_SOURCES + DESIGN_SOURCES for s in used), used
        train = v2.encode_all(loaded, docs)
        arrays[f"{safe}/train"] = train
        arrays[f"{safe}/heldout"] = v2.encode_all(loaded, v3.heldout_text(sources, used))
        data.write_jsonl(out / "texts" / f"{safe}.jsonl", docs)
        runs.append(
            {
                "name": name,
                "file": safe,
                "role": "replay" if name in replays else "candidate",
                "split": split,
                "recipe": recipe,
                "sources": list(used),
                "nominal_epochs": epochs,
                "train_tokens": len(train),
                "documents": len(docs),
                "epochs": v3.EPOCH_TOKENS / len(train),
            }
        )
        log(f"{name:>44} {split:>8}: {len(train):>8,} tokens, {runs[-1]['epochs']:5.2f} epochs, {len(docs)} docs")
    np.savez_compressed(out / "tokens.npz", **arrays)
    suite = {
        "base": "smollm2",
        "version": 4,
        "model": str(model_folder),
        "fingerprint": v3.fingerprint(arrays),
        "plans": {name: {**asdict(plan), "checkpoints": list(steps)} for name, (plan, steps) in PLANS.items()},
        "plan": asdict(v3.REGIME_A),
        "old": list(olds),
        "runs": runs,
        "jobs": job_list,
    }
    (out / "suite.json").write_text(json.dumps(suite, indent=1) + "\n")
    log(f"suite {suite['fingerprint']}: {len(runs)} runs, {len(suite['jobs'])} jobs -> {out}")
    return out


def main() -> int:
    if not v3.CORPORA.is_dir():
        print(f"v4 suite: {v3.CORPORA} is absent; it needs the shared corpora. Nothing was built.")
        return 2
    build(lambda message: print(message, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
