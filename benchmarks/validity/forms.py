"""The forecast's earlier forms, v4 to v9, beside the library's own (v10), for the scorer to re-score.

v9 is v10 without the drift floor in term 6 and with SmolLM2's term 7 one constant on every old text
(`LANDED_ADAPTATION`, where v10 fixes it per old text: `ADAPTATION`).
v8 is v9 with the body's transfer pathway alone (x = 1 in term 6, whatever the base loss on the old text)
and its own uncalibrated gain (`score.UNCALIBRATED_GAINS`); v7 is v8 on the gain grid it landed with.

v7 reads the corpus's predictability from H₁, the entropy of its token distribution, which the counts give
(`vocabrisk.risk.forecast`, term 6). v5 and v6 read it from H, the next-token entropy given the token before,
from a 2-gram count the scan kept until v7 and no longer does; v4 and v5 counted the plan's repetition of a
corpus as R, the plan's revisits of its 3-grams, from a count sketch of Σ f(g)² the scan kept until v6. The
scorer still reports the earlier forms on the sets they were tested on (and v6 beside v7 on pool J), so this
module recomputes each profile's text statistics as those scans did (`Measured`: the 3-gram sketch bucket
for bucket, the same hash, the same 3-grams left out; H from every 2-gram inside a document, none holding a
special id, as the v6 scan counted every document of a corpus this size), and lends them to the library's
forecast inside `as_v6`, `as_v5` and `as_v4`, which put the body term of that form in the library's place:

    lr · (1 - e^{-Σlr/BODY_RELAXATION}) · S · B · ln(1 + max(1, E)) · e^{-H}     (v6)
    lr · (1 - e^{-Σlr/BODY_RELAXATION}) · S · B · ln(1 + R) · e^{-H}            (v5; v4 without e^{-H})

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


def context_entropy(documents: Sequence[np.ndarray], special: np.ndarray, token_counts: np.ndarray) -> float | None:
    """H(next | previous) in nats as the v5 and v6 scans measured it where they kept every document: H of the
    2-grams inside each document (none holding a SPECIAL id) less H of the corpus's TOKEN_COUNTS, never below 0;
    None without a 2-gram."""
    pairs = []
    for ids in documents:
        ids = np.asarray(ids, dtype=np.int64)
        if len(ids) < 2:
            continue
        keep = ~(special[ids[:-1]] | special[ids[1:]])
        pairs.append((ids[:-1] * (1 << 29) + ids[1:])[keep])
    if not pairs or not sum(len(p) for p in pairs):
        return None
    _, joint = np.unique(np.concatenate(pairs), return_counts=True)
    return max(0.0, _entropy(joint) - _entropy(np.asarray(token_counts)))


def _entropy(counts: np.ndarray) -> float:
    p = np.asarray(counts, dtype=np.float64)
    p = p[p > 0] / p.sum()
    return float(-np.dot(p, np.log(p)))


class Measured:
    """What the earlier scans measured of each scanned profile's text, by the profile object (the scorer keeps
    its profiles for its run): the 3-gram collision (v4, v5) and the 2-gram entropy H (v5, v6)."""

    def __init__(self) -> None:
        self._by_profile: dict[int, tuple[object, tuple[float | None, float | None]]] = {}
        self._by_text: dict[tuple[str, str], tuple[float | None, float | None]] = {}

    def measure(self, profile, loaded, path: Path, policy) -> None:
        """PROFILE's statistics: those of the texts at PATH (a JSON-lines file, as the scorer scans)."""
        from vocabrisk.counting import TokenCounter

        key = (str(path), loaded.files.tokenizer_json)
        if key not in self._by_text:
            counter = TokenCounter(loaded.files.tokenizer_json, loaded.vocab.size, policy, loaded.eos_id)
            documents = counter.encode(list(data.read_jsonl(path)))
            special = np.asarray(loaded.vocab.special_mask, dtype=bool)
            self._by_text[key] = (collision(*sketch(documents, special)),
                                  context_entropy(documents, special, profile.counts.counts))  # fmt: skip
        self._by_profile[id(profile)] = (profile, self._by_text[key])  # the profile is held: its id stays its own

    def collision(self, profile) -> float | None:
        return self._by_profile[id(profile)][1][0]

    def entropy(self, profile) -> float | None:
        return self._by_profile[id(profile)][1][1]


MEASURED = Measured()
UNMEASURED_ENTROPY = 2.07  # nats: v5's and v6's H where a text had no 2-gram, the median of the 84 v5 design corpora


@dataclass(frozen=True)
class ContextBody(Body):
    """v5's and v6's body term: the library's fields, `entropy` holding H, the 2-gram entropy (`measured` False
    where the text had no 2-gram and H is UNMEASURED_ENTROPY), reported under v6's names."""

    measured: bool = True

    def to_dict(self) -> dict:
        own = {k: v for k, v in super().to_dict().items() if k != "token_entropy"}
        return own | {"context_entropy": self.entropy, "context_entropy_measured": self.measured,
                      "context_entropy_sample": 1.0}  # fmt: skip


@dataclass(frozen=True)
class RepeatsBody(ContextBody):
    """v4's and v5's body term: v6's fields (`passes` the plan's passes), and R, which it grows with."""

    repeats: float = 0.0  # R: the plan's revisits of the corpus's 3-grams by its last step

    def to_dict(self) -> dict:
        return super().to_dict() | {"repeats": self.repeats}


LANDED_ADAPTATION = 0.07  # nats: SmolLM2's term 7 on every old text from v4 to v9 (the v4 design curves, design.py)
ADAPTATION = {"wiki": 0.072, "code": 0.043}  # nats: v10's, per old text (design_v10_form.py, question 1)


def smollm2_adaptation(old: str) -> float:
    """SmolLM2-135M-Instruct's term 7 on OLD as the form being scored fixes it (the benchmark's probes have no curve
    to measure it from, as `vocabrisk calibrate` does)."""
    return ADAPTATION.get(old, LANDED_ADAPTATION)


@contextmanager
def as_v9() -> Iterator[None]:
    """The landed v9: no drift floor in term 6, and SmolLM2's term 7 one constant on every old text."""
    from vocabrisk.risk import forecast

    with mock.patch.object(forecast, "DRIFT_FLOOR", 0.0), mock.patch.dict(ADAPTATION, clear=True):
        yield


LANDED_GAINS = np.concatenate([[0.0], np.geomspace(0.01, 1e5, 106)])  # calibration's body-gain grid until v8


def _landed_gain(head: np.ndarray, total: np.ndarray, body: np.ndarray, adaptation: float) -> float:
    """The body gain as calibration fitted it until v8: the best point of LANDED_GAINS, which ends at 1e5 (v6's
    code gain on pools I and J and v7's on pool J sat at that end)."""
    from vocabrisk.risk.calibration import _best_of

    return float(LANDED_GAINS[_best_of(LANDED_GAINS, head, total, body, adaptation)])


@contextmanager
def as_v8() -> Iterator[None]:
    """The landed v8: the library's terms with the body's transfer pathway alone (v9 added the drift one)."""
    from vocabrisk.risk import forecast

    with mock.patch.object(forecast, "transfer_weight", lambda _old_loss: 1.0), as_v9():
        yield


@contextmanager
def as_v7() -> Iterator[None]:
    """The landed v7: v8's terms (v8 changed none), calibrated on the gain grid it landed with."""
    from vocabrisk.risk import calibration

    with mock.patch.object(calibration, "_best_gain", _landed_gain), as_v8():
        yield


@contextmanager
def _form(body_of, mix=None) -> Iterator[None]:
    """The library's forecast with BODY_OF(state, shares, exposure, old_usage, drive, own) as its body term, where
    state["profile"] is the profile being forecast and state["replay"] a what-if's replay (None without), calibrated
    as the earlier forms were (`as_v7`)."""
    from vocabrisk.risk import summary

    original = summary._forecast
    state: dict = {}

    def made(profile, risk, shares, calibration, budget=None, curve=True, replay=None):
        state["profile"], state["replay"] = profile, replay
        return original(profile, risk, shares, calibration, budget, curve, replay)

    def body(_cls, shares, exposure, old_usage, drive, own=1.0, _transfer=1.0):  # v4-v6: transfer alone
        return body_of(state, shares, exposure, old_usage, drive, own)

    with mock.patch.object(summary, "_forecast", made), mock.patch.object(Body, "of", classmethod(body)), as_v7():
        yield


def _parts(shares, exposure, old_usage, drive, own):
    """S, B, the passes and the pace lr · (1 - e^{-Σlr/BODY_RELAXATION}) at each checkpoint: every form's."""
    from vocabrisk.risk import forecast as module

    shares, old_usage = np.asarray(shares, dtype=np.float64), np.asarray(old_usage, dtype=np.float64)
    q = module.distribution(old_usage)
    seen = np.asarray(drive.tokens_seen, dtype=np.float64)
    lr_sums, steps = np.asarray(drive.lr_sums), np.asarray(drive.steps, dtype=np.float64)
    pace = (lr_sums / steps) * -np.expm1(-lr_sums / module.BODY_RELAXATION)
    return float(np.dot(q, exposure)), module.alike(shares, q), own * seen / max(drive.corpus_tokens, 1), seen, pace


def h_of(profile) -> float:
    """v5's and v6's H of PROFILE's text (`MEASURED`), UNMEASURED_ENTROPY where it has no 2-gram."""
    h = MEASURED.entropy(profile)
    return UNMEASURED_ENTROPY if h is None else h


def _known(profile) -> bool:
    return MEASURED.entropy(profile) is not None


@contextmanager
def as_v6() -> Iterator[None]:
    """The library's forecast with v6's body term: e^{-H} in e^{-H₁/2}'s place, H the corpus's own (a what-if's
    too: v6 read it from the corpus's profile)."""

    def body(state, shares, exposure, old_usage, drive, own):
        starved, similar, passes, _, pace = _parts(shares, exposure, old_usage, drive, own)
        h = h_of(state["profile"])
        curve = pace * starved * similar * np.log1p(np.maximum(passes, 1.0)) * math.exp(-h)
        return ContextBody(starved, similar, float(passes[-1]), h, float(curve[-1]), tuple(curve.tolist()),
                           measured=_known(state["profile"]))  # fmt: skip

    with _form(body):
        yield


@contextmanager
def as_v5(entropy: bool = True) -> Iterator[None]:
    """The library's forecast with v5's body term (v4's with ENTROPY False: H taken as 0), R from MEASURED.

    A what-if's mix (`Summary.mixed`) has the collision v5 gave it, (1 - share)² of the corpus's plus share²
    of the replay's (`replaying`)."""

    def body(state, shares, exposure, old_usage, drive, own):
        starved, similar, passes, seen, pace = _parts(shares, exposure, old_usage, drive, own)
        c, replay = MEASURED.collision(state["profile"]), state["replay"]
        if replay is not None and c is not None:
            c = (1 - replay.share) ** 2 * c + replay.share**2 * (_REPLAYING.get("collision") or 0.0)
        repeats = seen * c if c is not None else seen / max(drive.corpus_tokens, 1)
        h = h_of(state["profile"]) if entropy else 0.0
        curve = pace * starved * similar * np.log1p(repeats) * math.exp(-h)
        return RepeatsBody(starved, similar, float(passes[-1]), h, float(curve[-1]), tuple(curve.tolist()),
                           measured=_known(state["profile"]), repeats=float(repeats[-1]))  # fmt: skip

    with _form(body):
        yield


@contextmanager
def as_v4() -> Iterator[None]:
    """The landed v4: v5's body without its e^{-H} factor (H taken as 0), every other term the same."""
    with as_v5(entropy=False):
        yield


_REPLAYING: dict = {}


@contextmanager
def replaying(replay_profile) -> Iterator[None]:
    """Inside it, a v5 what-if's replay text is REPLAY_PROFILE (its collision from MEASURED)."""
    _REPLAYING["collision"] = MEASURED.collision(replay_profile)
    try:
        yield
    finally:
        _REPLAYING.clear()


def repetition(form: str, terms: Body) -> float:
    """The body's repetition factor at the plan's end for FORM: ln(1 + R) for v4 and v5, ln(1 + max(1, E)) after."""
    return math.log1p(terms.repeats) if form in ("v4", "v5") else math.log1p(max(1.0, terms.passes))
