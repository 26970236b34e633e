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
import threading
import time
from collections.abc import Callable

import numpy as np

from vocabrisk.counting.encoder import Encoded, Engine, FastokensEngine, TokenizersEngine
from vocabrisk.counting.probes import first_difference, probe_texts
from vocabrisk.errors import VocabriskError
from vocabrisk.model.tokenizer import fastokens_version, is_fast_api, load_tokenizer
from vocabrisk.model.vocabulary import read_tokenizer_file

ENGINES = ("auto", "tokenizers", "fastokens")
FASTOKENS_HINT = (
    "pip install 'fastokens>=0.3.5,<0.4' (wheels for Linux x86_64, macOS arm64 and Windows amd64), or use"
    " --engine auto, which counts with tokenizers where fastokens cannot"
)
# Text of each scan's first documents that both engines encode before the accelerator counts alone: the
# reference's time on it is spent anyway (its ids are the counts), so it is larger where the reference is fast.
CHECK_CHARS = {True: 1 << 20, False: 1 << 17}  # by whether the reference has the 1.0 API
# Where `auto` loads the accelerator: corpora of at least this many bytes, by whether the reference has the 1.0
# API. Loading and checking fastokens adds about 0.5 s to a scan of a 32k-50k vocabulary; beside tokenizers
# 0.2x it makes whole scans 3-6x faster from a few MB. Beside 1.0 whole scans were slower with it (0.43-0.56x
# a plain loop against 0.52-0.68x, 60 MB, gpt2 and a 100k BPE), so `auto` never loads it there (None).
# Measured: benchmarks/speed/engines.py, docs/PERFORMANCE.md ("Engines").
ACCELERATE_FROM: dict[bool, int | None] = {True: None, False: 2 << 20}
# Text the accelerator counts alone in one scan before the reference's tokenizer is let go until the next scan
# checks it again: ~100 MB at a 150k vocabulary, held beside fastokens' word cache, which grows fastest over a
# scan's first MBs. A 150k scan of 600 MB beside transformers with another thread awake (a progress display,
# a sampler) peaked at 462-466 MB holding both; letting go after 8 MB, 388 MB (60 MB: 400 -> 384). Loading it
# again costs 0.26 s at 150k, 0.07 s for gpt2 (tokenizers 0.23), paid by each later scan of a `rank` past 8 MB.
RELEASE_REFERENCE_AFTER = 8 << 20

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
    """An accelerator that counts only once it has reproduced the reference: on the probe set when it is
    loaded, and on the first `check_chars` of text of each scan (`begin`), which the reference encodes, and so
    counts, meanwhile. A disagreement anywhere, and everything after counts with the reference: `note` says why.

    With `race` (what `auto` asks for), the accelerator also has to have encoded those first documents faster
    than the reference did; else the reference counts the rest, which is no disagreement. With `load_after`
    (`auto` on a corpus of unknown size), the accelerator is loaded only once the reference has encoded that
    much of the scan's text, which may be all of it; with `background`, it loads in a thread while the
    reference counts. The first documents are kept until it is loaded, to check it on; once they are (and
    from the first batch without `race`), the scan waits for it rather than count on with the reference
    (tokenizers 0.2x counts 3-8 MB/s; loading takes a fraction of a second).
    """

    def __init__(
        self,
        reference: Engine,
        accelerator: Callable[[], Engine],
        probes: Callable[[], list[str]],
        race: bool,
        check_chars: int,
        load_after: int = 0,
        background: bool = False,
        loading: _Loading | None = None,
    ):
        self.reference = reference
        self.accelerator: Engine | None = None  # loaded by `_load`
        self._make, self._probes = accelerator, probes
        self.race, self.check_chars, self.load_after, self.background = race, check_chars, load_after, background
        self.note: str | None = None
        self._unavailable = False  # the accelerator could not be loaded (auto, lazily): the reference counts
        self._loading = loading  # begun by the caller, or by `_start_loading`
        self.begin()
        if load_after <= 0 and loading is None:
            self._start_loading()

    def _start_loading(self) -> None:
        if self.background:
            self._loading = _Loading(self._make)
        else:
            self._load(self._make)

    @property
    def name(self) -> str:
        """The engine counting this scan: the accelerator checked against the reference, the reference with the
        accelerator agreeing on everything so far (still checking), or the reference alone."""
        if self.accelerator is None or self._chosen is self.reference:
            return self.reference.name
        if self._chosen is self.accelerator:
            return f"{self.accelerator.name} (checked against {self.reference.name})"
        return f"{self.reference.name} (cross-checked by {self.accelerator.name})"

    def begin(self) -> None:
        """A new scan: check the accelerator again on its first documents (unless it has disagreed already)."""
        self._chosen: Engine | None = self.reference if self.note or self._unavailable else None
        self._checked = 0  # characters of this scan's text both engines have encoded
        self._seconds = [0.0, 0.0]  # the reference's and the accelerator's time on them
        self._seen = 0  # characters of this scan's text encoded
        self._alone = 0  # characters the accelerator has counted alone in this scan
        self._kept: list[tuple[list[str], bool, Encoded, float]] = []  # its first documents, while not loaded
        self._kept_chars = 0

    def encode(self, texts: list[str], add_special_tokens: bool) -> Encoded:
        if self._chosen is not None:
            if self._chosen is self.accelerator and self._alone < RELEASE_REFERENCE_AFTER:
                self._alone += sum(map(len, texts))
                if self._alone >= RELEASE_REFERENCE_AFTER and isinstance(self.reference, TokenizersEngine):
                    self.reference.release()  # encodes again, loading it, where `begin` checks the next scan
            return self._chosen.encode(texts, add_special_tokens)
        if self.accelerator is None:
            return self._before_loading(texts, add_special_tokens)
        head, tail, size = _split(texts, self.check_chars - self._checked)
        encoded = self._compare(head, add_special_tokens, "the first documents of the scan")
        self._checked += size
        self._settle()
        return encoded + self.encode(tail, add_special_tokens) if tail else encoded

    def _before_loading(self, texts: list[str], add_special_tokens: bool) -> Encoded:
        """The reference's ids of TEXTS, its first documents kept (with its time on them) to check on; the
        accelerator loaded once the scan has had `load_after` characters of text."""
        head, tail, size = _split(texts, self.check_chars - self._kept_chars)
        parts = []
        if head:
            start = time.perf_counter()
            parts.append(self.reference.encode(head, add_special_tokens))
            self._kept.append((head, add_special_tokens, parts[0], time.perf_counter() - start))
            self._kept_chars += sum(map(len, head))
        self._seen += size + sum(map(len, tail))
        if self._loading is None and self._seen >= self.load_after:
            self._start_loading()
        waits = self._kept_chars >= self.check_chars or not self.race
        if self._loading is not None and (waits or self._loading.ready()):
            loading, self._loading = self._loading, None
            self._load(loading)
        if tail:
            parts.append(
                self.reference.encode(tail, add_special_tokens)
                if self.accelerator is None
                else self.encode(tail, add_special_tokens)
            )
        return parts[0] + parts[1] if len(parts) == 2 else parts[0] if parts else self.reference.encode([], True)

    def _load(self, make: Callable[[], Engine]) -> None:
        """Load the accelerator, check it on the probes and on the documents kept, and settle if it can."""
        try:
            self.accelerator = make()
        except (ImportError, ValueError, RuntimeError, OSError):  # auto: not installed, or a file it refuses
            self._unavailable, self._chosen = True, self.reference
            return
        probes = self._probes()
        for add in (True, False):
            if self.note is None:
                self._compare(probes, add, "the probe set", timed=False)
        kept, self._kept = self._kept, []
        for texts, add, expected, seconds in kept:
            if self.note is None:
                self._compare(texts, add, "the first documents of the scan", expected, seconds)
                self._checked += sum(map(len, texts))
        self._settle()

    def _settle(self) -> None:
        if self.note is not None:
            self._chosen = self.reference
        elif self._checked >= self.check_chars:
            slower = self.race and self._seconds[1] > self._seconds[0]
            self._chosen = self.reference if slower else self.accelerator

    def _compare(
        self,
        texts: list[str],
        add_special_tokens: bool,
        where: str,
        expected: Encoded | None = None,
        seconds: float = 0.0,
        timed: bool = True,
    ) -> Encoded:
        """The reference's ids of TEXTS (EXPECTED, where it has encoded them already, in SECONDS), encoded by the
        accelerator too; a disagreement sets `note`."""
        assert self.accelerator is not None
        if expected is None:
            start = time.perf_counter()
            expected = self.reference.encode(texts, add_special_tokens)
            seconds = time.perf_counter() - start
        start = time.perf_counter()
        found = self.accelerator.encode(texts, add_special_tokens)
        if timed:
            self._seconds[0] += seconds
            self._seconds[1] += time.perf_counter() - start
        if not np.array_equal(expected.bounds, found.bounds) or not np.array_equal(expected.ids, found.ids):
            difference = first_difference(texts, expected.documents(), found.documents())
            self.note = (
                f"{self.accelerator.name} disagreed with {self.reference.name} on {where} (add_special_tokens="
                f"{add_special_tokens}): {difference}; everything was counted with {self.reference.name} alone"
            )
        return expected


class _Loading:
    """An accelerator loading in a thread of its own: fastokens builds its tables without the GIL (0.3-0.45 s
    for a 50k vocabulary), while the reference counts the scan's first documents."""

    def __init__(self, make: Callable[[], Engine]):
        self._engine: Engine | None = None
        self._error: BaseException | None = None
        # Not a daemon: a scan that ends before the accelerator has loaded must wait for it at exit. A daemon
        # thread killed inside fastokens' native code aborts the process ("FATAL: exception not rethrown").
        self._thread = threading.Thread(target=self._run, args=(make,), name="vocabrisk-accelerator", daemon=False)
        self._thread.start()

    def _run(self, make: Callable[[], Engine]) -> None:
        try:
            self._engine = make()
        except BaseException as exc:  # raised in the counting thread, where `_load` decides what it means
            self._error = exc

    def ready(self) -> bool:
        return not self._thread.is_alive()

    def __call__(self) -> Engine:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._engine is not None
        return self._engine


def _split(texts: list[str], budget: int) -> tuple[list[str], list[str], int]:
    """TEXTS as the first ones that reach BUDGET characters (all of them, if they do not), the rest, and the
    first ones' characters."""
    size = 0
    for index, text in enumerate(texts):
        if size >= budget:
            return texts[:index], texts[index:], size
        size += len(text)
    return texts, [], size


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
    spec = trimmed_spec(tokenizer_json)
    what = unsupported(spec) if spec else "its file, which is not a JSON object"
    return f"{fastokens_version() or 'fastokens'} does not implement {what}" if what else None


def trimmed_spec(tokenizer_json: str) -> dict:
    """What the checks read of the tokenizer.json ({} where it is no JSON object): its components, its model's
    options, its added tokens; not the vocabulary and merges, which parsed take tens of MB. Parsed once per
    process for each content (tens of ms)."""
    content, digest = read_tokenizer_file(tokenizer_json)
    if digest not in _SPECS:
        try:
            spec = json.loads(content)
        except ValueError:
            spec = {}
        if isinstance(spec, dict):
            model = spec.get("model") if isinstance(spec.get("model"), dict) else {}
            kept = {key: value for key, value in model.items() if key not in ("vocab", "merges")}
            if "merges" in model:
                kept["merges"] = []
            if isinstance(model.get("vocab"), list):
                kept["vocab"] = []
            spec = {**spec, "model": kept}
        _SPECS.clear()  # one tokenizer at a time, in practice
        _SPECS[digest] = spec if isinstance(spec, dict) else {}
    return _SPECS[digest]


_SPECS: dict[str, dict] = {}


def check_engine(choice: str, tokenizer_json: str) -> None:
    """EngineError where CHOICE is no engine, or is fastokens and fastokens cannot count this tokenizer: said
    before any input is read."""
    if choice not in ENGINES:
        raise EngineError(f"unknown engine {choice!r}", hint=f"use one of: {', '.join(ENGINES)}")
    if choice == "fastokens" and (why := accelerator_missing(tokenizer_json)):
        raise EngineError(f"--engine fastokens: {why}", hint=FASTOKENS_HINT)


def engine_for(choice: str, corpus_bytes: int | None, compressed: bool = False) -> tuple[str, int]:
    """The engine a scan of CORPUS_BYTES (None: not known) asks its workers for, and after how many characters
    of text to load an accelerator: `auto` is `tokenizers` where the corpus is too small to repay loading it
    (`ACCELERATE_FROM`); where its size is not known (stdin, data in memory), or only a lower bound of it is
    (COMPRESSED files, whose text may be 1000 times their size), it is loaded once that much text has been
    counted."""
    if choice != "auto":
        return choice, 0
    enough = ACCELERATE_FROM[is_fast_api()]
    if enough is None:
        return "tokenizers", 0
    if corpus_bytes is not None and corpus_bytes >= enough:
        return choice, 0
    return (choice, enough) if corpus_bytes is None or compressed else ("tokenizers", 0)


def load_encoder(
    tokenizer_json: str, split_special_tokens: bool, choice: str = "tokenizers", load_after: int = 0
) -> Engine:
    """The engine CHOICE names for this tokenizer: the reference, or the accelerator checked against it (with
    `auto`, loaded once LOAD_AFTER characters of a scan's text have been counted)."""
    if choice == "tokenizers":
        return TokenizersEngine(tokenizer_json, split_special_tokens)

    def accelerator() -> Engine:
        why = accelerator_missing(tokenizer_json)
        if why is None:
            try:
                return FastokensEngine(tokenizer_json, split_special_tokens)
            except (ValueError, RuntimeError, OSError) as exc:  # what it raises for a file it will not load
                why = f"{fastokens_version() or 'fastokens'} cannot load the tokenizer ({exc})"
        if choice == "fastokens":
            raise EngineError(f"--engine fastokens: {why}", hint=FASTOKENS_HINT)
        raise ImportError(why)

    def probes() -> list[str]:
        return probe_texts(trimmed_spec(tokenizer_json))

    check_chars = CHECK_CHARS[is_fast_api()]
    if choice == "fastokens" and (why := accelerator_missing(tokenizer_json)):
        raise EngineError(f"--engine fastokens: {why}", hint=FASTOKENS_HINT)
    if load_after <= 0 and accelerator_missing(tokenizer_json) is not None:  # auto; later, where it may never load
        return TokenizersEngine(tokenizer_json, split_special_tokens)
    # In a thread, once the reference has loaded (which finds the bytes a vocabulary lacks, for both): it builds
    # its tables without the GIL while the first documents are read. `check_engine` has refused a tokenizer
    # fastokens lacks a part of; one it then fails to load is an error at the first batch.
    loading = None
    if load_after <= 0:  # the reference is loaded in that thread too, first (`_one_heap`)
        loading, reference_loaded = _one_heap(tokenizer_json, accelerator)
        reference_loaded.wait()
    reference = TokenizersEngine(tokenizer_json, split_special_tokens)
    race = choice == "auto"
    return CheckedEngine(
        reference, accelerator, probes, race, check_chars, load_after, background=True, loading=loading
    )


def _one_heap(tokenizer_json: str, accelerator: Callable[[], Engine]) -> tuple[_Loading, threading.Event]:
    """The reference's tokenizer, then the accelerator, loaded in one thread; the event is set once the reference
    has loaded (or failed to: the caller loads it again, and reports its error).

    glibc gives each thread a heap (arena) of its own, which cannot reuse what another freed: the accelerator
    loaded in a thread beside a reference loaded in the caller's took ~55 MB more than both loaded in one, and
    held a scan beside transformers with a 150k vocabulary at 443 MB (benchmarks/memory/scan.py, PERFORMANCE.md).
    """
    reference_loaded = threading.Event()

    def both() -> Engine:
        try:
            load_tokenizer(tokenizer_json)
        except Exception:
            pass
        finally:
            reference_loaded.set()
        return accelerator()

    return _Loading(both), reference_loaded
