"""Counting engines: what turns a batch of documents into token ids. Whichever engine runs, the ids are the
tokenizer's own.

- `tokenizers`, the reference: Hugging Face `tokenizers`, on either API (`vocabrisk.counting.encoder`).
- `fastokens`, an accelerator (docs/PERFORMANCE.md, "Engines"). It counts only where
  1. every component of the tokenizer is one it implements (`unsupported` names the first that is not),
  2. it reproduces the reference's ids on the probe set (`vocabrisk.counting.probes`), and
  3. on the first documents of each scan (`CHECK_CHARS` of text), which both engines encode (`CheckedEngine`).
  Any disagreement, and the scan counts with the reference alone and says so (`CheckedEngine.note`).

`auto` (the default of `scan`, `rank` and the command line) tries the accelerator where it is installed and
supports the tokenizer, where the corpus is large enough to repay loading it (`engine_for`), and keeps it
only where it encoded the first documents faster than the reference did (it is slower than tokenizers 1.0 on
the SmolLM2 GGUF's digit-splitting pre-tokenizer). `fastokens` insists on it: an error where it cannot count
the tokenizer, the reference where it disagrees. `tokenizers` never loads it. Where counting runs is another
choice (`vocabrisk.counting.executors`).
"""

from __future__ import annotations

import json
import time

import numpy as np

from vocabrisk.counting.encoder import Encoded, Engine, FastokensEngine, TokenizersEngine
from vocabrisk.counting.probes import first_difference, probe_texts
from vocabrisk.errors import VocabriskError
from vocabrisk.model.tokenizer import fastokens_version, is_fast_api
from vocabrisk.model.vocabulary import read_tokenizer_file

ENGINES = ("auto", "tokenizers", "fastokens")
FASTOKENS_HINT = (
    "pip install 'fastokens>=0.3.5,<0.4' (wheels for Linux x86_64, macOS arm64 and Windows amd64), or use"
    " --engine auto, which counts with tokenizers where fastokens cannot"
)
# Text of each scan's first documents that both engines encode before the accelerator counts alone: the
# reference's time on it is spent anyway (its ids are the counts), so it is larger where the reference is fast.
CHECK_CHARS = {True: 1 << 20, False: 1 << 17}  # by whether the reference has the 1.0 API
# Where `auto` loads the accelerator: corpora of at least this many bytes. Loading and checking fastokens adds
# about 0.5 s to a scan of a 32k-50k vocabulary; it saves about 0.5 s a MB against tokenizers 0.2x (1-4 MB/s
# here) and 0.01-0.02 s a MB against 1.0 (30-120 MB/s, fastokens 1-2x that). Measured: benchmarks/engines.py.
ACCELERATE_FROM = {True: 32 << 20, False: 2 << 20}  # by whether the reference has the 1.0 API

# What fastokens 0.3 implements, by component (a Sequence of them is flattened). Measured: it refuses
# the others itself (BertNormalizer, Precompiled, NFKC, Metaspace, WordPiece, Unigram, ...).
_SUPPORTED = {
    "normalizer": {"NFC", "Lowercase", "Replace", "Prepend"},
    "pre_tokenizer": {"ByteLevel", "Split", "Digits"},
    "post_processor": {"ByteLevel", "TemplateProcessing"},
}
_SEQUENCE_ITEMS = {"normalizer": "normalizers", "pre_tokenizer": "pretokenizers", "post_processor": "processors"}


class EngineError(VocabriskError):
    """The engine asked for cannot count this tokenizer here (not installed, or a component it lacks)."""


class CheckedEngine:
    """An accelerator that counts only once it has reproduced the reference: on the probe set when made, and
    on the first `check_chars` of text of each scan (`begin`), which the reference encodes, and so counts,
    meanwhile. A disagreement anywhere, and everything after counts with the reference: `note` says why.

    With `race` (what `auto` asks for), the accelerator also has to have encoded those first documents
    faster than the reference did; else the reference counts the rest, which is no disagreement.
    """

    def __init__(self, reference: Engine, accelerator: Engine, probes: list[str], race: bool, check_chars: int):
        self.reference, self.accelerator = reference, accelerator
        self.race, self.check_chars = race, check_chars
        self.note: str | None = None
        self._chosen: Engine | None = None  # the engine that counts the rest of this scan, once settled
        self._checked = 0  # characters of this scan's text both engines have encoded
        self._seconds = [0.0, 0.0]  # the reference's and the accelerator's time on them
        for add in (True, False):
            if self.note is None:
                self._compare(probes, add, "the probe set")
        self.begin()

    @property
    def name(self) -> str:
        """The engine counting this scan: the accelerator checked against the reference, the reference with the
        accelerator agreeing on everything so far (still checking), or the reference alone."""
        if self._chosen is self.accelerator:
            return f"{self.accelerator.name} (checked against {self.reference.name})"
        if self._chosen is None:
            return f"{self.reference.name} (cross-checked by {self.accelerator.name})"
        return self.reference.name

    def begin(self) -> None:
        """A new scan: check the accelerator again on its first documents (unless it has disagreed already)."""
        self._chosen = self.reference if self.note else None
        self._checked, self._seconds = 0, [0.0, 0.0]

    def encode(self, texts: list[str], add_special_tokens: bool) -> Encoded:
        if self._chosen is not None:
            return self._chosen.encode(texts, add_special_tokens)
        if self.note is not None:
            self._chosen = self.reference
            return self.reference.encode(texts, add_special_tokens)
        size, split = 0, len(texts)
        for index, text in enumerate(texts):
            size += len(text)
            if self._checked + size >= self.check_chars:
                split = index + 1
                break
        head, tail = texts[:split], texts[split:]
        encoded = self._compare(head, add_special_tokens, "the first documents of the scan")
        self._checked += size
        if self.note is not None:
            self._chosen = self.reference
        elif self._checked >= self.check_chars:
            slower = self.race and self._seconds[1] > self._seconds[0]
            self._chosen = self.reference if slower else self.accelerator
        return encoded + self.encode(tail, add_special_tokens) if tail else encoded

    def _compare(self, texts: list[str], add_special_tokens: bool, where: str) -> Encoded:
        """The reference's ids of TEXTS, encoded by both engines; a disagreement sets `note`."""
        start = time.perf_counter()
        expected = self.reference.encode(texts, add_special_tokens)
        middle = time.perf_counter()
        found = self.accelerator.encode(texts, add_special_tokens)
        self._seconds[0] += middle - start
        self._seconds[1] += time.perf_counter() - middle
        if not np.array_equal(expected.bounds, found.bounds) or not np.array_equal(expected.ids, found.ids):
            difference = first_difference(texts, expected.documents(), found.documents())
            self.note = (
                f"{self.accelerator.name} disagreed with {self.reference.name} on {where} (add_special_tokens="
                f"{add_special_tokens}): {difference}; everything was counted with {self.reference.name} alone"
            )
        return expected


def unsupported(spec: dict) -> str | None:
    """The first component of the tokenizer (a parsed tokenizer.json), in pipeline order, that fastokens
    does not implement, in words; None where it implements them all."""
    for part in ("normalizer", "pre_tokenizer"):
        if what := _unsupported_part(spec, part):
            return what
    model = spec.get("model") or {}
    kind = model.get("type") or _model_type(model)
    if kind != "BPE":
        return f"its {kind} model"
    if model.get("dropout"):
        return "its BPE dropout (random ids)"
    for option in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(option):
            return f"its BPE {option} {model[option]!r}"
    return _unsupported_part(spec, "post_processor")


def _unsupported_part(spec: dict, part: str) -> str | None:
    for component in _flattened(spec.get(part), _SEQUENCE_ITEMS[part]):
        kind = component.get("type") if isinstance(component, dict) else None
        if kind not in _SUPPORTED[part]:
            return f"its {part.replace('_', '-')} {kind}"
    return None


def _model_type(model: dict) -> str:
    """The model's type where the file does not say it (older files), from its fields, as tokenizers reads it."""
    if "merges" in model:
        return "BPE"
    if isinstance(model.get("vocab"), list):
        return "Unigram"
    return "WordPiece" if "max_input_chars_per_word" in model else "WordLevel"


def _flattened(component: object, items: str) -> list:
    if component is None:
        return []
    if isinstance(component, dict) and component.get("type") == "Sequence":
        return [c for child in component.get(items) or [] for c in _flattened(child, items)]
    return [component]


def accelerator_missing(tokenizer_json: str) -> str | None:
    """Why fastokens cannot count this tokenizer here, in words; None where it can be tried."""
    try:
        import fastokens  # noqa: F401
    except ImportError:
        return "fastokens is not installed"
    content, _ = read_tokenizer_file(tokenizer_json)
    try:
        spec = json.loads(content)
    except ValueError:
        return "the tokenizer file is not JSON"
    what = unsupported(spec) if isinstance(spec, dict) else "its file"
    return f"{fastokens_version() or 'fastokens'} does not implement {what}" if what else None


def check_engine(choice: str, tokenizer_json: str) -> None:
    """EngineError where CHOICE is no engine, or is fastokens and fastokens cannot count this tokenizer: said
    before any input is read."""
    if choice not in ENGINES:
        raise EngineError(f"unknown engine {choice!r}", hint=f"use one of: {', '.join(ENGINES)}")
    if choice == "fastokens" and (why := accelerator_missing(tokenizer_json)):
        raise EngineError(f"--engine fastokens: {why}", hint=FASTOKENS_HINT)


def engine_for(choice: str, corpus_bytes: int | None) -> str:
    """The engine a scan of CORPUS_BYTES (None: not known) asks its workers for: `auto` is `tokenizers` where
    the corpus is too small to repay loading the accelerator (`ACCELERATE_FROM`)."""
    if choice != "auto" or corpus_bytes is None:
        return choice
    return choice if corpus_bytes >= ACCELERATE_FROM[is_fast_api()] else "tokenizers"


def load_encoder(tokenizer_json: str, split_special_tokens: bool, choice: str = "tokenizers") -> Engine:
    """The engine CHOICE names for this tokenizer: the reference, or the accelerator checked against it."""
    reference = TokenizersEngine(tokenizer_json, split_special_tokens)
    if choice == "tokenizers":
        return reference
    why = accelerator_missing(tokenizer_json)
    if why is None:
        try:
            accelerator = FastokensEngine(tokenizer_json, split_special_tokens)
        except (ValueError, RuntimeError, OSError) as exc:  # what it raises for a file it will not load
            why = f"{fastokens_version() or 'fastokens'} cannot load the tokenizer ({exc})"
    if why is not None:
        if choice == "fastokens":
            raise EngineError(f"--engine fastokens: {why}", hint=FASTOKENS_HINT)
        return reference
    probes = probe_texts(read_tokenizer_file(tokenizer_json)[0])
    return CheckedEngine(reference, accelerator, probes, race=choice == "auto", check_chars=CHECK_CHARS[is_fast_api()])
