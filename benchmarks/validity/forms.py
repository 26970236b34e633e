"""The forecast's earlier forms, v4 and v5, beside the library's own (v6), for the scorer to re-score.

v6 counts the plan's repetition of a corpus as its passes over it (`vocabrisk.risk.forecast`, term 6). v4
and v5 counted it as R, the plan's revisits of the corpus's 3-grams, from a count sketch of Σ f(g)² that the
scan kept until v6 and no longer does. The scorer still reports v4 and v5 on the sets they were tested on
(and v5 beside v6 on pool I), so this module recomputes each profile's collision from its text as the v5 scan
did, bucket for bucket (`sketch`: the same hash, the same 3-grams left out), and lends it to the library's
forecast inside `as_v5` and `as_v4`, which put the body term of that form in the library's place:

    lr · (1 - e^{-Σlr/BODY_RELAXATION}) · S · B · ln(1 + R) · e^{-H}     (v5; v4 without e^{-H})

R = tokens seen × collision, or tokens seen / corpus tokens (every 3-gram unique) where the text has no
3-gram. Every other term is the library's.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import data
import numpy as np

from vocabrisk.risk.forecast import Body

SKETCH_WIDTH = 16384  # buckets: Σ bucket² estimates Σ count² within about √(2 / SKETCH_WIDTH)
_SHIFT = np.uint64(64 - 14)  # log2(SKETCH_WIDTH) top bits choose the bucket
_MIX = (np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))  # splitmix64's finaliser
_PRIME = np.uint64(0x100000001B3)


def sketch(documents: Sequence[np.ndarray], special: np.ndarray) -> tuple[np.ndarray, int]:
    """The count sketch of the 3-grams inside each document's ids, and how many; 3-grams holding a SPECIAL id
    (True per id) are the tokenizer's template, not the text, and are left out, as the v5 scan left them."""
    cells = []
    for ids in documents:
        ids = np.asarray(ids, dtype=np.int64)
        if len(ids) < 3:
            continue
        marked = special[ids]
        keep = ~(marked[:-2] | marked[1:-1] | marked[2:])
        key = ids[:-2].astype(np.uint64) * _PRIME
        key ^= ids[1:-1].astype(np.uint64)
        key *= _PRIME
        key ^= ids[2:].astype(np.uint64)
        for shift, mix in ((30, _MIX[0]), (27, _MIX[1])):
            key ^= key >> np.uint64(shift)
            key *= mix
        key ^= key >> np.uint64(31)
        cells.append(((key >> _SHIFT) << np.uint64(1) | (key & np.uint64(1)))[keep].view(np.int64))
    if not cells:
        return np.zeros(SKETCH_WIDTH, dtype=np.int64), 0
    counts = np.bincount(np.concatenate(cells), minlength=2 * SKETCH_WIDTH)  # bucket i: -1s at 2i, +1s at 2i + 1
    return counts[1::2] - counts[0::2], int(counts.sum())


def collision(buckets: np.ndarray, trigrams: int) -> float | None:
    """Σ f(g)² estimated from a sketch of TRIGRAMS 3-grams; None without any, never below 1 / TRIGRAMS."""
    if trigrams <= 0:
        return None
    squares = float(np.sum(np.asarray(buckets, dtype=np.float64) ** 2))
    return max(squares / float(trigrams) ** 2, 1.0 / trigrams)


def collision_of(loaded, texts: Sequence[str], policy) -> float | None:
    """The 3-gram collision of TEXTS (one document each) as the v5 scan measured it, with LOADED's tokenizer."""
    from vocabrisk.counting import TokenCounter

    counter = TokenCounter(loaded.files.tokenizer_json, loaded.vocab.size, policy, loaded.eos_id)
    return collision(*sketch(counter.encode(list(texts)), np.asarray(loaded.vocab.special_mask, dtype=bool)))


class Collisions:
    """Each scanned profile's collision, by the profile object (the scorer keeps its profiles for its run)."""

    def __init__(self) -> None:
        self._by_profile: dict[int, tuple[object, float | None]] = {}
        self._by_text: dict[tuple[str, str], float | None] = {}

    def measure(self, profile, loaded, path: Path, policy) -> None:
        """PROFILE's collision: that of the texts at PATH (a JSON-lines file, as the scorer scans)."""
        key = (str(path), loaded.files.tokenizer_json)
        if key not in self._by_text:
            self._by_text[key] = collision_of(loaded, data.read_jsonl(path), policy)
        self._by_profile[id(profile)] = (profile, self._by_text[key])  # the profile is held: its id stays its own

    def __getitem__(self, profile) -> float | None:
        return self._by_profile[id(profile)][1]


COLLISIONS = Collisions()


@dataclass(frozen=True)
class RepeatsBody(Body):
    """v4's and v5's body term: the library's fields (`passes` the plan's passes), and R, which it grows with."""

    repeats: float = 0.0  # R: the plan's revisits of the corpus's 3-grams by its last step

    def to_dict(self) -> dict:
        return super().to_dict() | {"repeats": self.repeats}


@contextmanager
def as_v5(entropy: bool = True) -> Iterator[None]:
    """The library's forecast with v5's body term (v4's with ENTROPY False: H taken as 0), R from COLLISIONS.

    A what-if's mix (`Summary.mixed`) has the collision v5 gave it, (1 - share)² of the corpus's plus share²
    of the replay's (`replaying`)."""
    from vocabrisk.risk import forecast as module
    from vocabrisk.risk import summary

    original = summary._forecast
    state: dict = {}

    def made(profile, risk, shares, calibration, budget=None, curve=True, replay=None):
        mine = COLLISIONS[profile]
        if replay is not None and mine is not None:
            mine = (1 - replay.share) ** 2 * mine + replay.share**2 * (_REPLAYING.get("collision") or 0.0)
        state["collision"] = mine
        return original(profile, risk, shares, calibration, budget, curve, replay)

    def body(_cls, shares, exposure, old_usage, drive, entropy_=None, entropy_level=0, own=1.0):
        shares, old_usage = np.asarray(shares, dtype=np.float64), np.asarray(old_usage, dtype=np.float64)
        q = module.distribution(old_usage)
        starved, similar = float(np.dot(q, exposure)), module.alike(shares, q)
        seen = np.asarray(drive.tokens_seen, dtype=np.float64)
        c, passes = state["collision"], own * seen / max(drive.corpus_tokens, 1)
        repeats = seen * c if c is not None else seen / max(drive.corpus_tokens, 1)
        h = (module.UNMEASURED_ENTROPY if entropy_ is None else float(entropy_)) if entropy else 0.0
        lr_sums, steps = np.asarray(drive.lr_sums), np.asarray(drive.steps, dtype=np.float64)
        pace = (lr_sums / steps) * -np.expm1(-lr_sums / module.BODY_RELAXATION)
        curve = pace * starved * similar * np.log1p(repeats) * math.exp(-h)
        return RepeatsBody(starved, similar, float(passes[-1]), h, entropy_ is not None, entropy_level,
                           float(curve[-1]), tuple(curve.tolist()), float(repeats[-1]))  # fmt: skip

    with mock.patch.object(summary, "_forecast", made), mock.patch.object(module.Body, "of", classmethod(body)):
        yield


@contextmanager
def as_v4() -> Iterator[None]:
    """The landed v4: v5's body without its e^{-H} factor (H taken as 0), every other term the same."""
    with as_v5(entropy=False):
        yield


_REPLAYING: dict = {}


@contextmanager
def replaying(replay_profile) -> Iterator[None]:
    """Inside it, a v5 what-if's replay text is REPLAY_PROFILE (its collision from COLLISIONS)."""
    _REPLAYING["collision"] = COLLISIONS[replay_profile]
    try:
        yield
    finally:
        _REPLAYING.clear()


def repetition(form: str, terms: Body) -> float:
    """The body's repetition factor at the plan's end for FORM: ln(1 + R) for v4 and v5, ln(1 + max(1, E)) after."""
    return math.log1p(terms.repeats) if form in ("v4", "v5") else math.log1p(max(1.0, terms.passes))
