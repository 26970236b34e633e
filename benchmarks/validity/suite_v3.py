"""The real-model forecast benchmark (v3): SmolLM2-135M-Instruct on 41 candidates from 19 real sources.

    python benchmarks/validity/suite_v3.py     # -> benchmarks/.cache/forecast/real/

The protocol is docs/validity/v3/PROTOCOL.md, committed before any run; this file is its recipe
and must not change once runs exist (the suite's fingerprint is checked by the runner, and every
run records it). It writes:

- `texts/<file>.jsonl`: each candidate's and probe's training documents (what `vocabrisk scan`
  reads to forecast), `old-<name>.jsonl`: the two old texts forgetting is measured on;
- `tokens.npz`: the same as token ids: `<file>/train`, `<file>/heldout` (learning is measured on
  held-out text of the candidate's own sources, never trained on in any run) and
  `old/<name>` (windows × seq_len);
- `suite.json`: the plan of each regime, every run's role, split and sources, and the job list in
  the order the protocol fixes (design, probes, held-out, seeds, regime B).

Sizes are set in tokens, as implied epochs of regime A (40 steps × 512 tokens = 20,480 tokens).
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
import re
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data
import suite_v2 as v2

OUT = v2.CACHE / "real"
CORPORA = data.SHARED
FOLDERS: dict[str, Path] = {}  # sources kept outside ../shared/data (pool F adds its own): name -> folder

# Regime A is issue 20's CPU plan; regime B doubles the steps (twice the tokens and twice sum(lr)).
REGIME_A = v2.Plan(steps=40, lr=3e-4, tokens_per_step=512, seq_len=256, warmup_steps=4, old_windows=16, seeds=1)
REGIME_B = v2.Plan(steps=80, lr=3e-4, tokens_per_step=512, seq_len=256, warmup_steps=4, old_windows=16, seeds=1)
EPOCH_TOKENS = REGIME_A.steps * REGIME_A.tokens_per_step
HELDOUT_SHARE = 0.08  # the last 8% of every source: learning is measured there
HELDOUT_TOKENS = 8 * REGIME_A.seq_len

# The split is by source, fixed before any run (PROTOCOL.md): every candidate that draws on a
# held-out source is held out. Replay text (the old text's kind) is not a candidate source.
DESIGN_SOURCES = (
    "en-wikitext2",
    "en-shakespeare",
    "dialog-sgd",
    "de-grimm",
    "ko-chatbot",
    "zh-vue-docs",
    "code-lua",
    "code-python-django",
    "json-mdn-bcd",
)
HELDOUT_SOURCES = (
    "en-austen-pride",
    "en-foldoc",
    "bio-ncbi-disease",
    "en-rust-book",
    "fr-manpages",
    "ja-manpages",
    "hi-tldr",
    "code-ts-vue",
    "sql-postgres-regress",
    "tex-stacks",
)

# name: (recipe, sources, implied epochs in regime A). Recipes are defined in `candidate()`.
CANDIDATES = {
    # design
    "wiki:1ep": ("slice", ("en-wikitext2",), 1.0),
    "wiki:lower": ("lower", ("en-wikitext2",), 1.0),
    "wiki:raw-format": ("raw-wiki", ("en-wikitext2",), 1.0),
    "wiki:near-duplicate": ("near-duplicate", ("en-wikitext2",), 1.0),
    "en-shakespeare:1ep": ("slice", ("en-shakespeare",), 1.0),
    "en-shakespeare:10ep": ("slice", ("en-shakespeare",), 10.0),
    "dialog-sgd:1ep": ("slice", ("dialog-sgd",), 1.0),
    "de-grimm:1ep": ("slice", ("de-grimm",), 1.0),
    "de-grimm:0.2ep": ("slice", ("de-grimm",), 0.2),
    "ko-chatbot:1ep": ("slice", ("ko-chatbot",), 1.0),
    "zh-vue-docs:1ep": ("slice", ("zh-vue-docs",), 1.0),
    "code-lua:1ep": ("slice", ("code-lua",), 1.0),
    "code-lua:10ep": ("slice", ("code-lua",), 10.0),
    "code-python-django:0.2ep": ("slice", ("code-python-django",), 0.2),
    "json-mdn-bcd:1ep": ("slice", ("json-mdn-bcd",), 1.0),
    "narrow:speaker-names": ("speaker-names", ("en-shakespeare",), 3.0),
    "mix:de-grimm+code-lua": ("mix", ("de-grimm", "code-lua"), 1.0),
    "ko-chatbot:1ep+replay25%": ("replay25", ("ko-chatbot",), 1.0),
    "code-lua:1ep+replay5%": ("replay5", ("code-lua",), 1.0),
    # held out
    "en-austen-pride:1ep": ("slice", ("en-austen-pride",), 1.0),
    "en-austen-pride:0.2ep": ("slice", ("en-austen-pride",), 0.2),
    "en-foldoc:1ep": ("slice", ("en-foldoc",), 1.0),
    "narrow:foldoc-headwords": ("headwords", ("en-foldoc",), 3.0),
    "bio-ncbi-disease:1ep": ("slice", ("bio-ncbi-disease",), 1.0),
    "bio-ncbi-disease:10ep": ("slice", ("bio-ncbi-disease",), 10.0),
    "en-rust-book:1ep": ("slice", ("en-rust-book",), 1.0),
    "fr-manpages:1ep": ("slice", ("fr-manpages",), 1.0),
    "fr-manpages:0.2ep": ("slice", ("fr-manpages",), 0.2),
    "ja-manpages:1ep": ("slice", ("ja-manpages",), 1.0),
    "ja-manpages:3ep": ("slice", ("ja-manpages",), 3.0),
    "hi-tldr:1ep": ("slice", ("hi-tldr",), 1.0),
    "code-ts-vue:1ep": ("slice", ("code-ts-vue",), 1.0),
    "code-ts-vue:10ep": ("slice", ("code-ts-vue",), 10.0),
    "sql-postgres-regress:1ep": ("slice", ("sql-postgres-regress",), 1.0),
    "narrow:sql-select": ("select-lines", ("sql-postgres-regress",), 3.0),
    "tex-stacks:1ep": ("slice", ("tex-stacks",), 1.0),
    "mix:fr-manpages+ja-manpages": ("mix", ("fr-manpages", "ja-manpages"), 1.0),
    "mix:en-austen-pride+code-ts-vue": ("mix", ("en-austen-pride", "code-ts-vue"), 1.0),
    "ja-manpages:1ep+replay5%": ("replay5", ("ja-manpages",), 1.0),
    "ja-manpages:1ep+replay25%": ("replay25", ("ja-manpages",), 1.0),
    "sql-postgres-regress:1ep+replay25%": ("replay25", ("sql-postgres-regress",), 1.0),
}
# Calibration probes: the project-written sample corpora, never candidates and never scored.
PROBES = {
    "probe:english-prose": ("english-prose", 1.0),
    "probe:english-prose:10ep": ("english-prose", 10.0),
    "probe:python-code": ("python-code", 1.0),
    "probe:german-dialogue": ("german-dialogue", 1.0),
    "probe:korean-notes": ("korean-notes", 1.0),
}
SECOND_SEED = (  # held-out candidates run again with seed 1: the seed-vs-seed ceiling
    "en-austen-pride:1ep",
    "en-foldoc:1ep",
    "bio-ncbi-disease:10ep",
    "fr-manpages:1ep",
    "ja-manpages:1ep",
    "code-ts-vue:1ep",
    "tex-stacks:1ep",
    "ja-manpages:1ep+replay25%",
)
REGIME_B_RUNS = (  # held-out candidates run again at 80 steps: the plan transfer
    "en-austen-pride:1ep",
    "en-foldoc:1ep",
    "bio-ncbi-disease:1ep",
    "fr-manpages:1ep",
    "ja-manpages:1ep",
    "code-ts-vue:1ep",
    "sql-postgres-regress:1ep",
    "tex-stacks:1ep",
)
OLD_WIKI_DOCS = 120  # cleaned wikitext-2 test paragraphs: old text 1 (English encyclopedic prose)
OLD_CODE_CHARS = 60_000  # the head of the Django file: old text 2 (Python source)

WIKI_DETOKENIZE = [
    (" @-@ ", "-"),
    (" @,@ ", ","),
    (" @.@ ", "."),
    (" , ", ", "),
    (" . ", ". "),
    (" ; ", "; "),
    (" : ", ": "),
    (" 's", "'s"),
    (" n't", "n't"),
    ("( ", "("),
    (" )", ")"),
    (' " ', ' "'),
]


def clean_wiki(paragraph: str) -> str:
    """Wikitext's tokenized layout undone: the encyclopedic prose a user's reference would hold."""
    text = paragraph.strip()
    for old, new in WIKI_DETOKENIZE:
        text = text.replace(old, new)
    return re.sub(r" ([.,;:!?])$", r"\1", text)


def wiki_paragraphs(name: str, raw: bool = False) -> list[str]:
    """Wikitext-2 body paragraphs in file order (no headings); unless `raw`, without the sentences
    that hold an `<unk>` (two thirds of them), and only those still 200 characters long."""
    text = (CORPORA / "en-wikitext2" / name).read_text(encoding="utf-8")
    lines = [line.strip() for line in text.split("\n")]
    lines = [line for line in lines if len(line) > 300 and not line.startswith("=")]
    if raw:
        return lines
    kept = (" ".join(s for s in re.split(r"(?<= [.!?]) ", line) if "<unk>" not in s) for line in lines)
    return [line for line in kept if len(line) >= 200]


def source_chunks(name: str) -> list[str]:
    """One source as documents of about data.CHUNK_CHARS, in file order."""
    folder = FOLDERS.get(name, CORPORA / name)
    if name == "en-wikitext2":
        return [clean_wiki(p) for p in wiki_paragraphs("valid.txt")]
    if name == "ko-chatbot":
        with (folder / "ChatbotData.csv").open(encoding="utf-8", newline="") as fh:
            return data._line_chunks([f"{row['Q']}\n{row['A']}" for row in csv.DictReader(fh)])
    if name == "code-python-django":  # its head is old text 2
        text = (folder / "django_db_models_forms_py.txt").read_text(encoding="utf-8")[2 * OLD_CODE_CHARS :]
        return v2._bounded(data._paragraph_chunks(text))
    (path,) = [p for p in folder.iterdir() if p.name != "SOURCE.txt"]
    return v2._bounded(data._paragraph_chunks(path.read_text(encoding="utf-8")))


class Sources:
    """Every source's documents with their token counts, split into a trainable part and a held-out tail."""

    def __init__(self, loaded):
        self.loaded = loaded
        self._cache: dict[str, tuple[list[str], list[str]]] = {}

    def tokens(self, docs: list[str]) -> list[int]:
        return [len(piece) + 1 for piece in v2.encode_each(self.loaded, docs)]  # +1: the EOS after each

    def split(self, name: str) -> tuple[list[str], list[str]]:
        if name not in self._cache:
            chunks = source_chunks(name)
            cut = round(len(chunks) * (1 - HELDOUT_SHARE))
            self._cache[name] = (chunks[:cut], chunks[cut:])
        return self._cache[name]

    def take(self, docs: list[str], tokens: float, start: float = 0.0) -> list[str]:
        """Consecutive documents from `start` (a share of the list, wrapping) until `tokens` is reached."""
        counts, out, total = self.tokens(docs), [], 0
        first = int(start * len(docs))
        for i in range(len(docs)):
            j = (first + i) % len(docs)
            if total >= tokens:
                break
            out.append(docs[j])
            total += counts[j]
        return out


# Where in a source each size is cut from, so that sizes of one source overlap as little as possible.
START = {0.2: 0.0, 1.0: 0.5, 2.0: 0.65, 3.0: 0.75, 5.0: 0.8, 10.0: 0.85}  # 2 and 5: PROTOCOL-epochs.md


def candidate(sources: Sources, replay: list[str], old_wiki: list[str], name: str) -> list[str]:
    recipe, names, epochs = CANDIDATES[name]
    target = EPOCH_TOKENS / epochs
    train = sources.split(names[0])[0]
    if recipe == "slice":
        return sources.take(train, target, START[epochs])
    if recipe == "lower":
        return [d.lower() for d in sources.take(train, target, 0.2)]
    if recipe == "raw-wiki":
        raw = wiki_paragraphs("valid.txt", raw=True)
        return sources.take(raw, target, 0.8)
    if recipe == "near-duplicate":  # the old text itself, each paragraph's sentences shuffled
        rng = random.Random(name)
        docs = []
        for paragraph in old_wiki:
            sentences = re.split(r"(?<=[.!?]) ", paragraph)
            rng.shuffle(sentences)
            docs.append(" ".join(sentences))
        return sources.take(docs, target)
    if recipe in ("speaker-names", "headwords", "select-lines"):
        text = "\n\n".join(train)
        if recipe == "speaker-names":
            lines = v2.SPEAKER.findall(text)
        elif recipe == "headwords":  # FOLDOC entries start with their headword at column 0
            lines = [line for line in text.split("\n") if line and not line[0].isspace()]
        else:
            lines = [line for line in text.split("\n") if line.startswith("SELECT")]
        return sources.take(data._line_chunks(lines), target)
    if recipe == "mix":
        parts = [sources.take(sources.split(n)[0], target / len(names), 0.3) for n in names]
        return [doc for group in zip(*parts, strict=False) for doc in group] + [
            doc for part in parts for doc in part[min(map(len, parts)) :]
        ]
    if recipe in ("replay5", "replay25"):
        share = 0.05 if recipe == "replay5" else 0.25
        docs = sources.take(train, target * (1 - share), START[1.0])
        extra = sources.take(replay, target * share)
        every = max(1, len(docs) // max(1, len(extra)))
        mixed = docs[:]
        for i, chunk in enumerate(extra):  # spread through the corpus, as a shuffled mix would be
            mixed.insert(min(len(mixed), (i + 1) * every + i), chunk)
        return mixed
    raise ValueError(recipe)


def probe(sources: Sources, name: str) -> list[str]:
    from vocabrisk.corpus import ReadOptions

    sample, epochs = PROBES[name]
    path = next(p for p in v2.SAMPLES.iterdir() if p.name.split(".")[0] == sample)
    docs = v2._bounded(v2._documents(path, ReadOptions()))
    return sources.take(docs, EPOCH_TOKENS / epochs)


def heldout_text(sources: Sources, names: tuple[str, ...]) -> list[str]:
    """Held-out documents of the candidate's own sources, about HELDOUT_TOKENS in all."""
    parts = [sources.take(sources.split(n)[1], HELDOUT_TOKENS / len(names)) for n in names]
    return [doc for part in parts for doc in part]


def old_texts() -> dict[str, list[str]]:
    wiki = [clean_wiki(p) for p in wiki_paragraphs("test.txt")[:OLD_WIKI_DOCS]]
    django = (CORPORA / "code-python-django" / "django_db_models_forms_py.txt").read_text(encoding="utf-8")
    code = v2._bounded(data._paragraph_chunks(django[:OLD_CODE_CHARS]))
    return {"wiki": wiki, "code": code}


def split_of(sources_used: tuple[str, ...]) -> str:
    assert all(s in DESIGN_SOURCES + HELDOUT_SOURCES for s in sources_used), sources_used
    return "heldout" if any(s in HELDOUT_SOURCES for s in sources_used) else "design"


def jobs(runs: list[dict]) -> list[dict]:
    """Every fine-tuning run, in the protocol's order: design, probes, held out, seed 1, regime B."""
    by_role = {
        "design": [r for r in runs if r["split"] == "design"],
        "probe": [r for r in runs if r["role"] == "probe"],
        "heldout": [r for r in runs if r["split"] == "heldout"],
    }
    out = [{"run": r["name"], "regime": "A", "seed": 0} for group in by_role.values() for r in group]
    out += [{"run": name, "regime": "A", "seed": 1} for name in SECOND_SEED]
    out += [{"run": name, "regime": "B", "seed": 0} for name in REGIME_B_RUNS]
    return out


def fingerprint(arrays: dict[str, np.ndarray]) -> str:
    digest = hashlib.sha256()
    for key in sorted(arrays):
        digest.update(key.encode())
        digest.update(np.ascontiguousarray(arrays[key]).tobytes())
    return digest.hexdigest()[:16]


def build(log) -> Path:
    from vocabrisk.model.loaded import load_model

    model_folder = v2.smollm2_folder(log)
    loaded = load_model(str(model_folder))
    sources = Sources(loaded)
    (OUT / "texts").mkdir(parents=True, exist_ok=True)
    arrays, runs = {}, []
    olds = old_texts()
    for name, docs in olds.items():
        stream = v2.encode_all(loaded, docs)
        count = len(stream) // REGIME_A.seq_len
        picks = np.unique(np.linspace(0, count - 1, num=min(REGIME_A.old_windows, count)).round().astype(int))
        assert len(picks) == REGIME_A.old_windows, f"old text {name} is too short"
        arrays[f"old/{name}"] = stream[: count * REGIME_A.seq_len].reshape(count, REGIME_A.seq_len)[picks]
        data.write_jsonl(OUT / f"old-{name}.jsonl", docs)
    replay = sources.split("en-wikitext2")[1] + sources.split("en-wikitext2")[0][-40:]  # never in wiki:1ep
    texts = {name: candidate(sources, replay, olds["wiki"], name) for name in CANDIDATES}
    texts |= {name: probe(sources, name) for name in PROBES}
    for name, docs in texts.items():
        safe = re.sub(r"[^A-Za-z0-9+%.-]", "_", name)
        if name in CANDIDATES:
            recipe, used, epochs = CANDIDATES[name]
            role, split, held = "candidate", split_of(used), heldout_text(sources, used)
        else:
            recipe, used, epochs = "probe", (), PROBES[name][1]
            role, split, held = "probe", "probe", docs[-2:]  # probes are never scored on learning
        train = v2.encode_all(loaded, docs)
        arrays[f"{safe}/train"], arrays[f"{safe}/heldout"] = train, v2.encode_all(loaded, held)
        data.write_jsonl(OUT / "texts" / f"{safe}.jsonl", docs)
        runs.append(
            {
                "name": name,
                "file": safe,
                "role": role,
                "split": split,
                "recipe": recipe,
                "sources": list(used),
                "nominal_epochs": epochs,
                "train_tokens": len(train),
                "documents": len(docs),
                "epochs": EPOCH_TOKENS / len(train),
            }
        )
        log(f"{name:>36} {split:>8}: {len(train):>8,} tokens, {runs[-1]['epochs']:5.2f} epochs, {len(docs)} docs")
    np.savez_compressed(OUT / "tokens.npz", **arrays)
    suite = {
        "base": "smollm2",
        "model": str(model_folder),
        "fingerprint": fingerprint(arrays),
        "plans": {"A": asdict(REGIME_A), "B": asdict(REGIME_B)},
        "plan": asdict(REGIME_A),
        "old": list(olds),
        "runs": runs,
        "jobs": jobs(runs),
    }
    (OUT / "suite.json").write_text(json.dumps(suite, indent=1) + "\n")
    log(f"suite {suite['fingerprint']}: {len(runs)} runs, {len(suite['jobs'])} jobs -> {OUT}")
    return OUT


def main() -> int:
    if not CORPORA.is_dir():
        print(f"real suite: {CORPORA} is absent; it needs the shared corpora. Nothing was built.")
        return 2
    build(lambda message: print(message, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
