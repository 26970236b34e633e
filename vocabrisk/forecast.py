"""The forecast: how much loss on the base model's own text a training plan will add, in nats.

A model of the mechanism, each step a term that the ablation in docs/VALIDITY.md can remove:

1. **Push** `s_j` in [-1, 1]: the direction and consistency of row j's Adam step. A row whose token
   the corpus lacks gets only the tiny one-sided softmax gradient `p_j · h`, which Adam normalises
   into a full step down for the share of steps `a_j` (`risk.exposure`) in which the token has not
   appeared within its second-moment memory: `s_j = -a_j`. A row whose token the corpus holds more
   often than the base model uses it (`q_j > prior_j`) is pushed up: `s_j = (q - prior)/(q + prior)`.
2. **Step size** `r_j = g_j / (g_j + eps)` with `g_j = prior_j · h_scale`: Adam turns a gradient well
   above its eps into a full step of about the learning rate, one below it into a step eps/g times
   smaller. This is where the head-only eps mitigation acts (`plan.head_eps`).
3. **Shift** `z_j = kappa · Σ_t lr_t · r_j · s_j`: the change of row j's logit on old contexts.
   Rows walk along plus or minus the typical hidden state, so the change is about the same in every
   context; `kappa` (logit change per unit of summed learning rate) is the one constant that
   `vocabrisk calibrate` measures per base model.
4. **Competition**: a shift shared by all logits costs nothing. On an old position whose next-token
   distribution is p, the loss rises by `KL(p ‖ p·e^z/Z) = log Σ_j p_j e^{z_j} - Σ_j p_j z_j`, about
   half the variance of z under p: an old context is hurt only in proportion to how much of its
   probability sits on rows that move against each other. p is estimated by the tokens of the old
   text within `old_text.CONTEXT_RADIUS` of the position (which tokens occur near which).
5. **Context overlap**: rows move along hidden states of the *new* contexts, so an old context feels
   their shifts in proportion to how much its hidden state shares with them. The share of the
   position's neighbourhood that the corpus contains at all, `P_in`, stands for that overlap: shifts
   are scaled by `sqrt(P_in)`. A corpus in a script the old text never mixes with (Korean against
   English) therefore hurts little, and a narrow corpus in the base's own language hurts most.
6. **Repetition**: a corpus the plan repeats is fitted ever more exactly, so the pushes stay
   consistent for longer: the head forecast is the mean of (4) over old positions times
   `1 + head_gain · ln(1 + epochs)`, and the total (head and body) is that times
   `1 + body_gain · ln(1 + epochs)`.

Without calibration the documented defaults below apply and the band is wider.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from vocabrisk._version import __version__
from vocabrisk.cache import cache_folder
from vocabrisk.old_text import OldText
from vocabrisk.outputs import write_atomic

DEFAULT_KAPPA = 20.0  # logit change per unit of summed learning rate; see docs/VALIDITY.md
DEFAULT_HEAD_GAIN = 1.0
DEFAULT_BODY_GAIN = 1.0
DEFAULT_BAND = 4.0  # uncalibrated: the truth is expected within ×/÷ 4
HOW_WELL = (
    "on held-out runs it ranked head-caused forgetting at Spearman +0.43 (demo model) and -0.38 (SmolLM2-135M), "
    "total forgetting not at all (-0.08 on both); within x2 after calibration for 3-11% of runs (docs/VALIDITY.md)"
)
MAX_SHIFT = 30.0  # nats; a larger predicted logit change means "gone" and would only overflow
CALIBRATED_BAND_FLOOR = 1.5
HIDDEN_SCALE = 1.0  # per-coordinate size of the final hidden state; norm gains start at 1


@dataclass(frozen=True)
class Calibration:
    """Per-base-model constants of the forecast, measured by `vocabrisk calibrate` or defaulted."""

    kappa: float = DEFAULT_KAPPA
    head_gain: float = DEFAULT_HEAD_GAIN
    body_gain: float = DEFAULT_BODY_GAIN
    band: float = DEFAULT_BAND  # multiplicative: the forecast's band is [value / band, value · band]
    source: str = "default"
    fingerprint: str | None = None
    probes: list[dict] = field(default_factory=list)
    tool_version: str = __version__

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Calibration:
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})


def model_key(model: dict, tokenizer: dict) -> str:
    """Which base model a calibration belongs to: its tokenizer and where its head lives."""
    import hashlib

    head = model["head"].to_dict() if model.get("head") else {}
    identity = {
        "tokenizer": tokenizer.get("fingerprint"),
        "model": model.get("name"),
        "head": {k: head.get(k) for k in ("file", "tensor", "rows", "hidden", "data_offset")},
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:20]


def calibration_path(fingerprint: str) -> Path:
    return cache_folder() / "calibration" / f"{fingerprint}.json"


def load_calibration(fingerprint: str | None) -> Calibration:
    """The saved calibration of a tokenizer/model fingerprint, else the defaults."""
    if fingerprint:
        path = calibration_path(fingerprint)
        if path.is_file():
            return Calibration.from_dict(json.loads(path.read_text(encoding="utf-8")))
    return Calibration()


def save_calibration(calibration: Calibration) -> Path:
    path = calibration_path(calibration.fingerprint or "unknown")
    return write_atomic(path, json.dumps(calibration.to_dict(), indent=1) + "\n", "calibration")


@dataclass(frozen=True)
class Forecast:
    """The forecast for one corpus under one plan, with what it was made of."""

    head: float  # nats of loss added on old text by the head's drift
    total: float  # nats, head and body
    low: float  # band on total
    high: float
    epochs: float  # how many times the plan repeats the corpus
    lr_sum: float
    shift: np.ndarray  # z_j: predicted change of each row's logit on old contexts
    calibration: Calibration
    old_text: bool  # whether contexts came from old text (else the global prior stood in)
    ceiling: float = math.inf  # ln(vocabulary): the loss of a uniform guess; no rise of loss can be trusted past it

    @property
    def possible(self) -> bool:
        """Whether the forecast is a loss rise a model could show: at most a uniform guess's loss, ln(rows)."""
        return self.total <= self.ceiling

    @property
    def headline(self) -> str:
        """The forecast's nats as every report prints them: a number only where the number is possible."""
        return f"+{self.total:.3f}" if self.possible else f"beyond +{self.ceiling:.1f}"

    @property
    def how_well(self) -> str:
        """How well the forecast ranked forgetting on held-out runs: what a reader should weigh it by."""
        return HOW_WELL

    def describe(self) -> str:
        """The forecast in one line of plain text, for every report format."""
        basis = f"{self.calibration.source} constants" + ("" if self.old_text else ", no old text (not local)")
        if not self.possible:
            return (
                f"beyond what a forecast can say: more than +{self.ceiling:.2f} nats, the loss of a uniform guess "
                f"over the vocabulary: the plan would wipe out what the model knows, and the forecast's model does "
                f"not hold there ({basis})"
            )
        return (
            f"+{self.total:.3f} nats on the base model's own text (band {self.low:.3f}–{self.high:.3f}; "
            f"head alone +{self.head:.3f}; {basis})"
        )

    def to_dict(self) -> dict:
        possible = self.possible  # past the ceiling no number is given (issue 21): `beyond_possible` says why
        return {
            "total_nats": self.total if possible else None,
            "head_nats": self.head if possible else None,
            "band": [self.low, self.high] if possible else None,
            "beyond_possible": not possible,
            "ceiling_nats": self.ceiling,
            "epochs": self.epochs,
            "calibration": self.calibration.source,
            "constants": {k: getattr(self.calibration, k) for k in ("kappa", "head_gain", "body_gain")},
            "old_text": self.old_text,
            "meaning": "forecast rise of mean next-token loss on the base model's own text, in nats",
            "how_well": HOW_WELL,
        }


def step_size(prior: np.ndarray, eps: float, hidden_scale: float = HIDDEN_SCALE) -> np.ndarray:
    """Share of a full Adam step a starved row takes: its gradient p·h against eps."""
    gradient = np.asarray(prior, dtype=np.float64) * hidden_scale
    return np.divide(gradient, gradient + eps, out=np.zeros_like(gradient), where=gradient + eps > 0)


def push(shares: np.ndarray, prior: np.ndarray, exposure: np.ndarray) -> np.ndarray:
    """Direction and consistency of each row's Adam step, in [-1, 1] (term 1 of the module docstring)."""
    shares, prior = np.asarray(shares, dtype=np.float64), np.asarray(prior, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        rise = np.where(shares + prior > 0, (shares - prior) / (shares + prior), 0.0)
    return np.where(shares > prior, rise, -np.asarray(exposure, dtype=np.float64))


def competition(
    shift: np.ndarray, contained: np.ndarray, old: OldText | None, prior: np.ndarray, scales=(1.0,)
) -> np.ndarray:
    """Mean over old positions of KL(p ‖ p·e^{u·z}/Z), for z = scale × SHIFT and each of SCALES.

    p and the overlap u come from each position's neighbourhood (term 4 and 5 of the module
    docstring); without old text the global prior stands in for every context (u = 1).
    """
    scales = np.atleast_1d(np.asarray(scales, dtype=np.float64))
    shift = np.asarray(shift, dtype=np.float64)
    if old is None or len(old.ids) == 0:
        result = []
        for scale in scales:
            z = np.clip(scale * shift, -MAX_SHIFT, MAX_SHIFT)
            top = float(np.max(z))
            result.append(top + math.log(float(np.dot(prior, np.exp(z - top)))) - float(np.dot(prior, z)))
        return np.maximum(np.array(result), 0.0)
    tokens, valid = old.neighbourhoods
    weight = valid.astype(np.float64)
    count = weight.sum(axis=1)
    overlap = np.sqrt((weight * np.asarray(contained)[tokens]).sum(axis=1) / count)[:, None]
    unit = shift[tokens] * weight
    result = []
    for scale in scales:
        uz = overlap * np.clip(scale * unit, -MAX_SHIFT, MAX_SHIFT)  # zero outside the document
        top = np.max(uz, axis=1, keepdims=True)  # ≥ the largest valid value; exp cannot overflow
        grow = (np.exp(uz - top) * weight).sum(axis=1)
        kl = top[:, 0] + np.log(grow / count) - uz.sum(axis=1) / count
        result.append(float(np.mean(np.maximum(kl, 0.0))))
    return np.array(result)


@dataclass(frozen=True)
class Drive:
    """What the plan does to each row before the base model's constants: the shift per unit of kappa."""

    unit_shift: np.ndarray  # Σ_t lr_t · r_j · s_j (terms 1 to 3 without kappa)
    epochs: float
    lr_sum: float

    @classmethod
    def of(cls, shares: np.ndarray, exposure: np.ndarray, prior: np.ndarray, plan, corpus_tokens: int) -> Drive:
        plan = plan.resolve(corpus_tokens)
        lr_sum = plan.mean_lr * plan.steps
        eps = plan.head_eps if plan.head_eps is not None else plan.eps
        if plan.head_trains:
            unit = lr_sum * step_size(prior, eps) * push(shares, prior, exposure)
        else:
            unit = np.zeros_like(prior, dtype=np.float64)
        return cls(unit, plan.implied_epochs(corpus_tokens) or 0.0, lr_sum)


def forecast(
    shares: np.ndarray,
    exposure: np.ndarray,
    prior: np.ndarray,
    old: OldText | None,
    plan,
    corpus_tokens: int,
    calibration: Calibration | None = None,
) -> Forecast:
    """The forecast of forgetting for a corpus with these token shares and per-row exposure."""
    calibration = calibration or Calibration()
    drive = Drive.of(shares, exposure, prior, plan, corpus_tokens)
    shift = calibration.kappa * drive.unit_shift
    repeats = math.log1p(drive.epochs)
    head = float(competition(shift, np.asarray(shares) > 0, old, prior)[0]) * (1.0 + calibration.head_gain * repeats)
    total = head * (1.0 + calibration.body_gain * repeats)
    return Forecast(
        head=head,
        total=total,
        low=total / calibration.band,
        high=total * calibration.band,
        epochs=drive.epochs,
        lr_sum=drive.lr_sum,
        shift=shift,
        calibration=calibration,
        old_text=old is not None and len(old.ids) > 0,
        ceiling=math.log(max(len(prior), 2)),
    )
