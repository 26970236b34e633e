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
   context. `kappa` is the logit change per unit of summed learning rate: each of the hidden
   state's `d` coordinates moves the logit by about lr times its typical size, so by default
   `kappa = KAPPA_PER_WIDTH · d`; `vocabrisk calibrate` measures it per base model.
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
6. **The body** (the rest of the network) forgets most of the total on a real model, and mostly at
   the same old positions: those whose next token the corpus starves. It learns that those tokens
   do not occur in text like the corpus's, and applies that to old contexts as far as they look
   alike. Its term is `body_gain · Σ lr · S · B · ln(1 + R)`: S, the share of old-text tokens
   whose rows the plan starves (`Σ q_j a_j`, q the old text's token distribution); B, how alike
   the corpus and the old text are (the Bhattacharyya coefficient `Σ √(p_j q_j)` of their token
   distributions); R, how often the plan revisits the corpus's own 3-grams (plan tokens ×
   `Σ f(g)²`, `vocabrisk.counting.repeats`): templated, narrow and repeated text is fitted more
   consistently, so its pushes add up. The total is the head's part plus the body's.

Where each of these came from, and what the ablation on the design runs kept: docs/VALIDITY.md
("v3"). A profile saved before the 3-gram sketch existed has no R; the forecast then takes every
3-gram as unique (R = the implied epochs) and says so.

Without calibration the documented defaults below apply and the band is wider.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np

from vocabrisk.prior.old_text import OldText
from vocabrisk.risk.calibration import Calibration
from vocabrisk.risk.wording import HOW_WELL

MAX_SHIFT = 30.0  # nats; a larger predicted logit change means "gone" and would only overflow
HIDDEN_SCALE = 1.0  # per-coordinate size of the final hidden state; norm gains start at 1


@dataclass(frozen=True)
class Body:
    """The body's term (6 in the module docstring) before `body_gain`, and what it is made of."""

    starved: float  # S: share of old-text tokens whose rows the plan starves
    alike: float  # B: Bhattacharyya coefficient of the corpus's and the old text's token distributions
    repeats: float  # R: the plan's revisits of the corpus's 3-grams
    repeats_known: bool  # False where the profile has no 3-gram sketch and R is the implied epochs
    unit: float  # Σ lr · S · B · ln(1 + R)

    @classmethod
    def of(
        cls, shares: np.ndarray, exposure: np.ndarray, old_usage: np.ndarray, lr_sum: float, plan_tokens: float,
        epochs: float, collision: float | None,
    ) -> Body:  # fmt: skip
        shares, old_usage = np.asarray(shares, dtype=np.float64), np.asarray(old_usage, dtype=np.float64)
        total = old_usage.sum()
        q = old_usage / total if total > 0 else old_usage
        starved = float(np.dot(q, exposure))
        alike = float(np.sum(np.sqrt(shares * q)))
        repeats = plan_tokens * collision if collision is not None else epochs
        return cls(starved, alike, repeats, collision is not None, lr_sum * starved * alike * math.log1p(repeats))

    def to_dict(self) -> dict:
        return {"starved_old_share": self.starved, "alike": self.alike, "repeats": self.repeats,
                "repeats_measured": self.repeats_known}  # fmt: skip


@dataclass(frozen=True)
class Forecast:
    """The forecast for one corpus under one plan, with what it was made of."""

    head: float  # nats of loss added on old text by the head's drift
    body: float  # nats added by the rest of the network
    low: float  # band on total
    high: float
    epochs: float  # how many times the plan repeats the corpus
    lr_sum: float
    shift: np.ndarray  # z_j: predicted change of each row's logit on old contexts
    terms: Body
    kappa: float  # the kappa used: calibrated, or the width rule's
    calibration: Calibration
    old_text: bool  # whether contexts came from old text (else the global prior stood in)
    ceiling: float = math.inf  # ln(vocabulary): the loss of a uniform guess; no rise of loss can be trusted past it

    @property
    def total(self) -> float:
        """Nats of loss added on old text, head and body."""
        return self.head + self.body

    @property
    def possible(self) -> bool:
        """Whether the forecast is a loss rise a model could show: at most a uniform guess's loss, ln(rows)."""
        return self.total <= self.ceiling

    @property
    def headline(self) -> str:
        """The forecast's nats as every report prints them: a number only where the number is possible."""
        return f"+{self.total:.3f}" if self.possible else f"beyond +{self.ceiling:.1f}"

    @property
    def basis(self) -> str:
        """What the forecast stands on, in words: its constants, and what it lacked."""
        parts = [f"{self.calibration.source} constants" if self.calibration.calibrated else "uncalibrated defaults"]
        if not self.old_text:
            parts.append("no old text (not local)")
        if not self.terms.repeats_known:
            parts.append("no 3-gram sketch in the profile (scan again to measure repetition)")
        return ", ".join(parts)

    @property
    def text(self) -> str:
        """The forecast in one line of plain text, for every report format."""
        if not self.possible:
            return (
                f"beyond what a forecast can say: more than +{self.ceiling:.2f} nats, the loss of a uniform guess "
                f"over the vocabulary: the plan would wipe out what the model knows, and the forecast's model does "
                f"not hold there ({self.basis})"
            )
        return (
            f"+{self.total:.3f} nats on the base model's own text (band {self.low:.3f}–{self.high:.3f}; "
            f"head +{self.head:.3f}, body +{self.body:.3f}; {self.basis})"
        )

    def to_dict(self) -> dict:
        possible = self.possible  # past the ceiling no number is given (issue 21): `beyond_possible` says why
        return {
            "total_nats": self.total if possible else None,
            "head_nats": self.head if possible else None,
            "body_nats": self.body if possible else None,
            "band": [self.low, self.high] if possible else None,
            "beyond_possible": not possible,
            "ceiling_nats": self.ceiling,
            "epochs": self.epochs,
            "calibration": self.calibration.source,
            "calibrated": self.calibration.calibrated,
            "constants": {"kappa": self.kappa, "body_gain": self.calibration.body_gain},
            "terms": self.terms.to_dict(),
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


@dataclass(frozen=True)
class OldContexts:
    """What the forecast reads of an old text, whatever the corpus: each old position's neighbourhood."""

    tokens: np.ndarray  # (positions, 2·CONTEXT_RADIUS + 1) token ids
    weight: np.ndarray  # 1.0 inside the position's document, 0.0 past its ends
    count: np.ndarray  # tokens of each neighbourhood inside its document

    @classmethod
    def of(cls, old: OldText) -> OldContexts:
        """OLD's contexts, made once per process for each old text, however many profiles hold it (the
        candidates of a `rank`, each loaded with a copy of the same reference's old text, share them)."""
        key = hashlib.blake2b(old.ids.tobytes() + b"|" + old.starts.tobytes(), digest_size=16).digest()
        if key not in _CONTEXTS:
            tokens, valid = old.neighbourhoods
            weight = valid.astype(np.float64)
            if len(_CONTEXTS) >= _CONTEXTS_KEPT:
                del _CONTEXTS[next(iter(_CONTEXTS))]
            _CONTEXTS[key] = cls(tokens, weight, weight.sum(axis=1))
        return _CONTEXTS[key]


_CONTEXTS: dict[bytes, OldContexts] = {}  # by the old text's content; a few MB each
_CONTEXTS_KEPT = 4


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
    contexts = OldContexts.of(old)
    tokens, weight, count = contexts.tokens, contexts.weight, contexts.count
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
    *,
    old_usage: np.ndarray | None = None,
    collision: float | None = None,
    width: int | None = None,
) -> Forecast:
    """The forecast of forgetting for a corpus with these token shares and per-row exposure.

    `old_usage` is the old text's token counts (the prior stands in without them), `collision`
    the corpus's 3-gram Σ f(g)² (`TokenCounts.collision`), `width` the head's hidden size.
    """
    calibration = calibration or Calibration()
    drive = Drive.of(shares, exposure, prior, plan, corpus_tokens)
    kappa = calibration.kappa_for(width)
    shift = kappa * drive.unit_shift
    head = float(competition(shift, np.asarray(shares) > 0, old, prior)[0])
    resolved = plan.resolve(corpus_tokens)
    terms = Body.of(
        shares, exposure, prior if old_usage is None else old_usage, drive.lr_sum,
        resolved.steps * resolved.tokens_per_step, drive.epochs, collision,
    )  # fmt: skip
    body = calibration.body_gain * terms.unit
    total = head + body
    return Forecast(
        head=head,
        body=body,
        low=total / calibration.band,
        high=total * calibration.band,
        epochs=drive.epochs,
        lr_sum=drive.lr_sum,
        shift=shift,
        terms=terms,
        kappa=kappa,
        calibration=calibration,
        old_text=old is not None and len(old.ids) > 0,
        ceiling=math.log(max(len(prior), 2)),
    )
