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
3. **Shift** `z_j = φ(kappa · Σ_t lr_t · r_j · s_j)`: the change of row j's logit on old contexts.
   Rows walk along plus or minus the typical hidden state, so the change is about the same in every
   context. `kappa` is the logit change per unit of summed learning rate: each of the hidden
   state's `d` coordinates moves the logit by about lr times its typical size, so by default
   `kappa = KAPPA_PER_WIDTH · d`; `vocabrisk calibrate` measures it per base model. The walk slows
   as it goes (v4): a starved row's gradient `p_j · h` shrinks by `e^z` as its logit falls while
   Adam's second moment still remembers the larger gradients of before, so its steps shrink with
   it; solving that (`dz/dt = -e^z / rms of e^z so far`) gives `φ(x) = -A ln(1 + |x|/A)`, `A =
   STARVED_SATURATION`. A row pushed up stops where the corpus's use of its token is met: it
   approaches `T_j = ln(q_j / prior_j)` as `T_j (1 - e^{-x/T_j})`.
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
   alike. Its term is `body_gain · lr · (1 - e^{-Σ lr / BODY_RELAXATION}) · S · R · ln(1 + max(1, E)) · e^{-H₁/2}`:
   the body relaxes toward the corpus's optimum at a pace set by the summed learning rate, and the
   loss it adds there is proportional to the learning rate (the stationary excess of a noisy
   optimizer: a run at three times the rate forgets about three times more once relaxed, which a
   term in Σ lr alone cannot say; docs/VALIDITY.md "v4"). lr is the mean rate so far. S, the share of old-text tokens
   whose rows the plan starves (`Σ q_j a_j`, q the old text's token distribution); R, how far the
   corpus's lessons reach the old text (v9): `R = x·B + (1 - x)·LIKENESS_REFERENCE`, two pathways
   added. Transfer, B: how alike the corpus and the old text are (the Bhattacharyya coefficient
   `Σ √(p_j q_j)` of their token distributions); a text the base model predicts well rests on specific
   features that a corpus overwrites only where its contexts resemble the old text's. Drift, a
   constant: a text the model predicts badly rests on its broad next-token distribution, which any
   corpus that starves its tokens pulls away, however unlike it is. The weight x is set by the base
   model's mean loss L on the old text over 256-token windows (`transfer_weight`,
   `vocabrisk.verify.old_loss`): 1 up to TRANSFER_UNTIL nats, 0 from DRIFT_FROM, linear between, and at
   most 1 - DRIFT_FLOOR on every old text (v10: a text the model predicts well still drifts a little; on
   the design runs this floor sized code's forgetting better, docs/validity/v10/form.txt); where L is not
   known (neither `calibrate`, `--old-loss` nor the CLI's measurement by default gave it) x is
   1 - DRIFT_FLOOR. LIKENESS_REFERENCE is the design corpora's median B, so that a corpus of typical
   likeness keeps its term whatever x.
   On five old texts measured with the same 16 corpora, the base loss ordered exactly how far the
   measured forgetting follows B rather than the never-seen share; the weights that rank best inside
   the forecast follow it only roughly, and the ramp was chosen by rank on them, after a rule fixed
   first had failed (docs/validity/v9/form.txt); E, the plan's passes over the corpus so far (tokens
   trained on / corpus tokens):
   each pass past the first shows the network the same contexts again and their pushes add up, while
   less than one pass of a large corpus forgets as one pass of it does (v6: design sources cut at a
   fifth of an epoch and at one forgot alike, and ten passes forgot 2.4 to 7.5 times one;
   docs/VALIDITY.md "v6"). e^{-H₁/2} (v7), H₁ the entropy of the corpus's token distribution
   (`token_entropy`): a step's gradient on the shared network is a sum over the tokens the corpus
   spreads its text across, about e^{H₁} of them pulling in their own directions, so its component
   along any one direction, the one an old context feels, falls as one over the square root of their
   number. Narrow text (tables, word lists, templates) is fitted with pushes that add up and moves the
   shared network far; varied text pulls it in directions that partly cancel. v5 and v6 read this
   from H, the next-token entropy given the token before, which needed a 2-gram count of the whole
   corpus; on the design runs e^{-H₁/2} ranks forgetting as well or better (docs/VALIDITY.md "v7"),
   and the scan counts no 2-grams since.
7. **Adaptation**: an instruction-tuned base model trained on any plain text first gets *better* on
   plain old text: its loss falls by `G (1 - e^{-Σ lr / ADAPTATION_PACE})` nats, whatever the
   corpus. G is the base model's on its old text (SmolLM2-135M-Instruct on the design pools: 0.072 on
   English wiki, 0.043 on code; docs/validity/v10/form.txt), so `vocabrisk calibrate` measures it: the
   old text's loss at each probe's first checkpoint (`EARLY_STEP`), where the adaptation is done and the
   body has barely begun, less the head's and the body's forecast there (`risk.calibration`).
   Uncalibrated it is 0, so that a forecast never nets forgetting against a gain the base model was not
   measured to have. The total is the head's part plus the body's, less the adaptation; it can be
   negative early in a plan.
8. **Replay** (the `--mix` what-if): text of the old text's own kind mixed into the plan at share ρ
   protects the body, because its gradient pulls the shared network back on the contexts it shows,
   and Adam makes even a small share of a consistent gradient a full-size step. The body's term is
   the corpus's own (the replay does not make the corpus's lessons transfer further) over its
   1 - ρ of the plan's tokens (fewer passes), times
   `1 - c (1 - e^{-ρ/REPLAY_ONSET})`: protection sets in within a few percent and then saturates at
   the replay's coverage `c` of the old text, `(B(replay, old) / B(old, old))²`, the squared cosine
   between the two token distributions' square roots, against what another sample of the old text
   itself scores (its halves, by document). Wiki replay covers wiki old text at 0.72 and code old
   text at 0.14 (docs/VALIDITY.md "Replay"); token shares alone (the head's and S's view of the mix)
   said a fifth to a tenth of the measured reductions.

The forecast is a curve over the plan (`Forecast.curve`): every term at each checkpoint step
(`checkpoints`), from the Σ lr and tokens seen by then under the plan's schedule. The headline is
its last point.

Where each of these came from, and what the ablation on the design runs kept: docs/VALIDITY.md
("v3" to "v10"). v8 has v7's terms: its design pass (on v3 and pools E to J) found no body term that ranks
both old texts better, and a calibrated gain no longer stops at the end of a fixed grid
(`risk.calibration`). v9 adds the drift pathway of term 6, weighted by the base model's loss on the old
text; designed on seen runs only (v3, pools E to K, five old texts), its held-out test is pool L. v10 (designed
on v3 and pools E to L) measures term 7 per old text in `calibrate` and gives the drift pathway a floor; its
held-out test is pool M (docs/validity/v4/PROTOCOL-pool-m.md; docs/VALIDITY.md, "Held out: pool M").

Without calibration the documented defaults below apply and the band is wider.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, replace

import numpy as np

from vocabrisk.prior.old_text import OldText
from vocabrisk.risk.calibration import Calibration
from vocabrisk.risk.exposure import distribution
from vocabrisk.risk.wording import HOW_WELL

MAX_SHIFT = 30.0  # nats; a larger predicted logit change means "gone" and would only overflow
HIDDEN_SCALE = 1.0  # per-coordinate size of the final hidden state; norm gains start at 1
STARVED_SATURATION = 1.6  # A of φ: the numerical solution of the starved row's Adam walk, fitted by A ln(1 + x/A)
BODY_RELAXATION = 0.011  # Σ lr over which the body relaxes by 1/e; fitted on the v4 design curves
ADAPTATION_PACE = 1.5e-4  # Σ lr over which adaptation to plain text reaches 1 - 1/e; v4 design curves
REPLAY_ONSET = 0.03  # replay share at which its protection reaches 1 - 1/e of its coverage; 13 measured replay runs
ENTROPY_WEIGHT = 0.5  # the body's e^{-ENTROPY_WEIGHT · H₁}: one over the square root of the corpus's token perplexity
LIKENESS_REFERENCE = 0.3  # the drift pathway's stand-in for B: the v9 design corpora's median B (0.307, 0.316)
TRANSFER_UNTIL = 3.00  # nats: up to this base loss on the old text the body forgets by transfer alone (v9 design)
DRIFT_FROM = 3.55  # nats: from this base loss on, by drift alone (v9 design, docs/validity/v9/form.txt)
OVERLAP_POWER = 0.5  # term 5: an old context feels the shifts as P_in to this power (√P_in)
DRIFT_FLOOR = 0.1  # the drift pathway's least weight on any old text (v10 design, docs/validity/v10/form.txt)
EARLY_STEP = 5  # the first checkpoint: where `calibrate` reads the adaptation off its probes (term 7)


def transfer_weight(old_loss: float | None) -> float:
    """x of term 6: the transfer pathway's weight for an old text on which the base model's mean loss is
    OLD_LOSS nats per token; its most, 1 - DRIFT_FLOOR, where the loss is not known."""
    ramp = 1.0 if old_loss is None else (DRIFT_FROM - old_loss) / (DRIFT_FROM - TRANSFER_UNTIL)
    return min(1.0 - DRIFT_FLOOR, max(0.0, ramp))


def checkpoints(steps: int) -> tuple[int, ...]:
    """The steps a forecast curve reports: EARLY_STEP, 10, 20, … (doubling) below the plan's last step, and it."""
    points, step = [], EARLY_STEP
    while step < steps:
        points.append(step)
        step *= 2
    return (*points, max(int(steps), 1))


def saturate(x: np.ndarray, target: np.ndarray | None) -> np.ndarray:
    """Row shifts φ(x) of a walk X of summed learning rate × kappa (term 3 of the module docstring).

    Rows pushed down slow logarithmically; rows pushed up approach their TARGET, ln(q/prior)
    (linear where no target is given)."""
    x = np.asarray(x, dtype=np.float64)
    down = -STARVED_SATURATION * np.log1p(np.abs(x) / STARVED_SATURATION)
    if target is None:
        up = x
    else:
        t = np.broadcast_to(np.maximum(np.asarray(target, dtype=np.float64), 1e-9), x.shape)
        up = t * -np.expm1(-np.maximum(x, 0.0) / t)
    return np.where(x < 0, down, up)


@dataclass(frozen=True)
class Body:
    """The body's term (6 in the module docstring) before `body_gain`, and what it is made of."""

    starved: float  # S: share of old-text tokens whose rows the plan starves
    alike: float  # B: Bhattacharyya coefficient of the corpus's and the old text's token distributions
    passes: float  # E: the plan's passes over the corpus by its last step (its implied epochs)
    entropy: float  # H₁: the entropy of the corpus's token distribution, nats
    unit: float  # at the plan's last step: lr · (1 - e^{-Σlr/BODY_RELAXATION}) · S · R · ln(1 + max(1, E)) · e^{-H₁/2}
    curve: tuple[float, ...] = ()  # the term at each of the drive's checkpoints
    transfer: float = 1.0  # x: the transfer pathway's weight in R (`transfer_weight`)

    @property
    def reach(self) -> float:
        return reach(self.alike, self.transfer)

    @classmethod
    def of(
        cls, shares: np.ndarray, exposure: np.ndarray, old_usage: np.ndarray, drive: Drive, own: float = 1.0,
        transfer: float = 1.0,
    ) -> Body:  # fmt: skip
        """The term for a corpus with these token SHARES and EXPOSURE, taking OWN of the plan's tokens (less
        than 1 where a what-if mixes replay in: its passes over the corpus are fewer), with the transfer
        pathway's weight TRANSFER."""
        shares, old_usage = np.asarray(shares, dtype=np.float64), np.asarray(old_usage, dtype=np.float64)
        q = distribution(old_usage)
        starved = float(np.dot(q, exposure))
        similar = alike(shares, q)
        seen = np.asarray(drive.tokens_seen, dtype=np.float64)
        passes = own * seen / max(drive.corpus_tokens, 1)
        h = token_entropy(shares)
        lr_sums, steps = np.asarray(drive.lr_sums), np.asarray(drive.steps, dtype=np.float64)
        pace = (lr_sums / steps) * -np.expm1(-lr_sums / BODY_RELAXATION)
        repeated = np.log1p(np.maximum(passes, 1.0))
        curve = pace * starved * reach(similar, transfer) * repeated * math.exp(-ENTROPY_WEIGHT * h)
        return cls(starved, similar, float(passes[-1]), h, float(curve[-1]), tuple(curve.tolist()), transfer)

    def to_dict(self) -> dict:
        return {"starved_old_share": self.starved, "alike": self.alike, "transfer_weight": self.transfer,
                "reach": self.reach, "passes": self.passes, "token_entropy": self.entropy}  # fmt: skip


def reach(alike: float, transfer: float) -> float:
    """R of term 6: how far a corpus's lessons reach the old text, the transfer (B, ALIKE) and drift pathways
    added with weights TRANSFER and 1 - TRANSFER."""
    return transfer * alike + (1.0 - transfer) * LIKENESS_REFERENCE


def token_entropy(shares: np.ndarray) -> float:
    """H₁ = -Σ p_j ln p_j of a token distribution (SHARES, normalised here), in nats; 0 for an empty one."""
    p = distribution(np.asarray(shares, dtype=np.float64))
    p = p[p > 0]
    return float(-np.dot(p, np.log(p)))


def alike(p: np.ndarray, q: np.ndarray) -> float:
    """The Bhattacharyya coefficient Σ √(p_j q_j) of two token distributions."""
    return float(np.sum(np.sqrt(np.asarray(p, dtype=np.float64) * np.asarray(q, dtype=np.float64))))


def self_alike(old: OldText | None, rows: int) -> float:
    """B of one half of the old text against the other (documents in turn; a single document's tokens
    by halves): what a text of exactly the old text's kind scores at this sample size. 1 without old text."""
    if old is None or len(old.ids) < 2:
        return 1.0
    documents = np.split(old.ids, old.starts[1:-1])
    if len(documents) >= 2:
        halves = np.concatenate(documents[0::2]), np.concatenate(documents[1::2])
    else:
        halves = old.ids[: len(old.ids) // 2], old.ids[len(old.ids) // 2 :]
    return alike(*(distribution(np.bincount(h[h < rows], minlength=rows)) for h in halves))


@dataclass(frozen=True)
class Replay:
    """Term 8: replay text taking SHARE of every step, and how much of the old text it covers."""

    share: float
    coverage: float  # c: (B(replay, old) / B(old half, other half))², in [0, 1]
    shares: np.ndarray  # the corpus's own token shares and exposure: what drives the body
    exposure: np.ndarray

    @classmethod
    def of(cls, share: float, replay: np.ndarray, old_usage: np.ndarray, own: float, shares, exposure) -> Replay:
        """SHARE of replay text with token shares REPLAY, against the old text (OLD_USAGE its counts, OWN
        what its halves score, `self_alike`: the same for every share and replay, so computed once)."""
        between = alike(distribution(replay), distribution(old_usage))
        coverage = min(1.0, (between / own) ** 2) if own > 0 else float(between > 0)
        return cls(share, coverage, np.asarray(shares, dtype=np.float64), np.asarray(exposure, dtype=np.float64))

    @property
    def protection(self) -> float:
        """The share of the corpus's body forgetting the replay leaves: 1 - c (1 - e^{-share/REPLAY_ONSET})."""
        return 1.0 - self.coverage * -math.expm1(-self.share / REPLAY_ONSET)

    def to_dict(self) -> dict:
        return {"share": self.share, "coverage": self.coverage, "body_kept": self.protection}


@dataclass(frozen=True)
class Point:
    """The forecast at one step of the plan."""

    step: int
    lr_sum: float
    head: float
    body: float
    adaptation: float

    @property
    def total(self) -> float:
        return self.head + self.body - self.adaptation

    def to_dict(self) -> dict:
        return {"step": self.step, "total_nats": self.total, "head_nats": self.head, "body_nats": self.body,
                "adaptation_nats": self.adaptation}  # fmt: skip


@dataclass(frozen=True)
class Forecast:
    """The forecast for one corpus under one plan, with what it was made of."""

    head: float  # nats of loss added on old text by the head's drift
    body: float  # nats added by the rest of the network
    adaptation: float  # nats the plan takes off old text's loss by adapting the model to plain text
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
    curve: tuple[Point, ...] = ()  # the forecast at each checkpoint of the plan; the last is the headline
    budget: float | None = None  # nats the user allows (`--budget`): the curve says where it is crossed
    replay: Replay | None = None  # the what-if's replay (term 8), None for the corpus as it is

    @property
    def total(self) -> float:
        """Nats of loss added on old text: head and body, less the adaptation."""
        return self.head + self.body - self.adaptation

    def crossing(self, budget: float) -> Point | None:
        """The first checkpoint whose forecast total exceeds BUDGET nats, or None within the plan."""
        return next((point for point in self.curve if point.total > budget), None)

    @property
    def possible(self) -> bool:
        """Whether the forecast is a loss rise a model could show: at most a uniform guess's loss, ln(rows)."""
        return self.total <= self.ceiling

    @property
    def headline(self) -> str:
        """The forecast's nats as every report prints them: a number only where the number is possible."""
        return f"{self.total:+.3f}" if self.possible else f"beyond +{self.ceiling:.1f}"

    @property
    def basis(self) -> str:
        """What the forecast stands on, in words: its constants, and what it lacked."""
        parts = [self.calibration.described]
        if self.old_text:
            loss = self.calibration.old_loss
            known = "unknown (--old-loss measure)" if loss is None else f"{loss:.2f} nats"
            parts.append(f"base loss on old text {known}: body {self.terms.transfer:.0%} transfer")
        if not self.old_text:
            parts.append("no old text (not local)")
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
            f"{self.total:+.3f} nats on the base model's own text (band {self.low:.3f}–{self.high:.3f}; "
            f"head +{self.head:.3f}, body +{self.body:.3f}{self._adapted}; {self.basis})"
        )

    @property
    def along(self) -> str:
        """The curve in one line of plain text, and where it crosses the budget if one was given."""
        if not self.possible:
            return "beyond what a forecast can say by the plan's end"
        points = " · ".join(f"{p.step:,} {p.total:+.3f}" for p in self.curve)
        if self.budget is None:
            return f"nats at step {points}"
        crossed = self.crossing(self.budget)
        verdict = (
            f"crosses the budget of {self.budget:g} nats by step {crossed.step:,}"
            if crossed
            else f"stays within the budget of {self.budget:g} nats to step {self.curve[-1].step:,}"
        )
        return f"nats at step {points}; {verdict}"

    @property
    def _adapted(self) -> str:
        return f", adaptation -{self.adaptation:.3f}" if self.adaptation else ""

    def to_dict(self) -> dict:
        possible = self.possible  # past the ceiling no number is given (issue 21): `beyond_possible` says why
        return {
            "total_nats": self.total if possible else None,
            "head_nats": self.head if possible else None,
            "body_nats": self.body if possible else None,
            "adaptation_nats": self.adaptation if possible else None,
            "curve": [point.to_dict() for point in self.curve] if possible else None,
            "budget": None
            if self.budget is None
            else {
                "nats": self.budget,
                "crossed_at_step": crossed.step if (crossed := self.crossing(self.budget)) else None,
            },
            "band": [self.low, self.high] if possible else None,
            "beyond_possible": not possible,
            "ceiling_nats": self.ceiling,
            "epochs": self.epochs,
            "calibration": self.calibration.source,
            "calibrated": self.calibration.calibrated,
            **({"calibration_set_aside": self.calibration.set_aside} if self.calibration.set_aside else {}),
            "constants": {
                "kappa": self.kappa,
                "body_gain": self.calibration.body_gain,
                "adaptation": self.calibration.adaptation,
                "old_loss": self.calibration.old_loss,
            },
            "terms": self.terms.to_dict(),
            **({"replay": self.replay.to_dict()} if self.replay else {}),
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
    shift: np.ndarray, contained: np.ndarray, old: OldText | None, prior: np.ndarray, scales=(1.0,),
    target: np.ndarray | None = None,
) -> np.ndarray:  # fmt: skip
    """Mean over old positions of KL(p ‖ p·e^{u·z}/Z), for z = φ(scale × SHIFT) and each of SCALES.

    p and the overlap u come from each position's neighbourhood (term 4 and 5 of the module
    docstring); without old text the global prior stands in for every context (u = 1). φ is
    `saturate` with the up-pushed rows' TARGET.
    """
    scales = np.atleast_1d(np.asarray(scales, dtype=np.float64))
    shift = np.asarray(shift, dtype=np.float64)
    if old is None or len(old.ids) == 0:
        result = []
        for scale in scales:
            z = np.clip(saturate(scale * shift, target), -MAX_SHIFT, MAX_SHIFT)
            top = float(np.max(z))
            result.append(top + math.log(float(np.dot(prior, np.exp(z - top)))) - float(np.dot(prior, z)))
        return np.maximum(np.array(result), 0.0)
    contexts = OldContexts.of(old)
    tokens, weight, count = contexts.tokens, contexts.weight, contexts.count
    overlap = (((weight * np.asarray(contained)[tokens]).sum(axis=1) / count) ** OVERLAP_POWER)[:, None]
    result = []
    for scale in scales:
        z = np.clip(saturate(scale * shift, target), -MAX_SHIFT, MAX_SHIFT)
        uz = overlap * z[tokens] * weight  # zero outside the document
        top = np.max(uz, axis=1, keepdims=True)  # ≥ the largest valid value; exp cannot overflow
        grow = (np.exp(uz - top) * weight).sum(axis=1)
        kl = top[:, 0] + np.log(grow / count) - uz.sum(axis=1) / count
        result.append(float(np.mean(np.maximum(kl, 0.0))))
    return np.array(result)


@dataclass(frozen=True)
class Drive:
    """What the plan does to each row before the base model's constants, at each checkpoint."""

    unit_shift: np.ndarray  # Σ_t lr_t · r_j · s_j over the whole plan (terms 1 to 3 without kappa or φ)
    target: np.ndarray  # ln(q_j / prior_j): where an up-pushed row stops
    epochs: float
    lr_sum: float
    steps: tuple[int, ...]  # the checkpoints
    lr_sums: tuple[float, ...]  # Σ lr up to each checkpoint
    tokens_seen: tuple[int, ...]  # tokens trained on up to each checkpoint
    corpus_tokens: int

    @classmethod
    def of(cls, shares: np.ndarray, exposure: np.ndarray, prior: np.ndarray, plan, corpus_tokens: int) -> Drive:
        plan = plan.resolve(corpus_tokens)
        steps = checkpoints(plan.steps)
        rates = np.cumsum(plan.lr_at(np.arange(plan.steps)))
        lr_sums = tuple(float(rates[s - 1]) for s in steps)
        lr_sum = plan.mean_lr * plan.steps
        eps = plan.head_eps if plan.head_eps is not None else plan.eps
        shares, prior = np.asarray(shares, dtype=np.float64), np.asarray(prior, dtype=np.float64)
        if plan.head_trains:
            unit = lr_sum * step_size(prior, eps) * push(shares, prior, exposure)
        else:
            unit = np.zeros_like(prior, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            target = np.where((shares > 0) & (prior > 0), np.log(shares / prior), 0.0)
        seen = tuple(s * plan.tokens_per_step for s in steps)
        return cls(unit, target, plan.implied_epochs(corpus_tokens) or 0.0, lr_sum, steps, lr_sums, seen, corpus_tokens)

    def head(self, kappas, contained: np.ndarray, old: OldText | None, prior: np.ndarray) -> np.ndarray:
        """The head's term at the plan's last step for each of KAPPAS (what calibration fits)."""
        return competition(self.unit_shift, contained, old, prior, kappas, self.target)

    def early_head(self, kappas, contained: np.ndarray, old: OldText | None, prior: np.ndarray) -> np.ndarray:
        """The head's term at the first checkpoint for each of KAPPAS (where calibration measures term 7)."""
        direction = self.unit_shift / self.lr_sum if self.lr_sum > 0 else self.unit_shift
        scales = np.asarray(kappas, dtype=np.float64) * self.lr_sums[0]
        return competition(direction, contained, old, prior, scales, self.target)

    def head_curve(self, kappa: float, contained: np.ndarray, old: OldText | None, prior: np.ndarray) -> np.ndarray:
        """The head's term at each checkpoint for one KAPPA."""
        direction = self.unit_shift / self.lr_sum if self.lr_sum > 0 else self.unit_shift
        return competition(direction, contained, old, prior, kappa * np.asarray(self.lr_sums), self.target)

    def adaptation(self, gain: float) -> np.ndarray:
        """Term 7 at each checkpoint: the nats a plan takes off by adapting the model to plain text."""
        return gain * -np.expm1(-np.asarray(self.lr_sums) / ADAPTATION_PACE)


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
    width: int | None = None,
    budget: float | None = None,
    curve: bool = True,
    replay: Replay | None = None,
) -> Forecast:
    """The forecast of forgetting for a corpus with these token shares and per-row exposure, along the plan
    (with `curve` False, at its last step alone: the same numbers there, for a ninth of the head's work).

    `old_usage` is the old text's token counts (the prior stands in without them), `width` the head's hidden
    size, `budget` the nats the user allows (where the curve crosses it is reported), `replay` the share of
    replay text a what-if mixes in (SHARES and EXPOSURE are then the mix's; term 8).
    """
    calibration = calibration or Calibration()
    drive = Drive.of(shares, exposure, prior, plan, corpus_tokens)
    if not curve:  # every checkpoint's terms are computed apart: the last one's do not need the others
        drive = replace(drive, steps=drive.steps[-1:], lr_sums=drive.lr_sums[-1:], tokens_seen=drive.tokens_seen[-1:])
    kappa = calibration.kappa_for(width)
    contained = np.asarray(shares) > 0
    heads = drive.head_curve(kappa, contained, old, prior)
    driver = (shares, exposure) if replay is None else (replay.shares, replay.exposure)
    own = 1.0 if replay is None else 1.0 - replay.share
    usage = prior if old_usage is None else old_usage
    terms = Body.of(*driver, usage, drive, own, transfer_weight(calibration.old_loss))
    kept = 1.0 if replay is None else replay.protection
    bodies = calibration.body_gain * kept * np.asarray(terms.curve)
    adapted = drive.adaptation(calibration.adaptation)
    curve = tuple(
        Point(step, lr, float(h), float(b), float(a))
        for step, lr, h, b, a in zip(drive.steps, drive.lr_sums, heads, bodies, adapted, strict=True)
    )
    last = curve[-1]
    total = last.total
    spread = max(abs(total), last.head + last.body)  # the band is on the forecast's size, adaptation or not
    return Forecast(
        head=last.head,
        body=last.body,
        adaptation=last.adaptation,
        low=total - spread * (1 - 1 / calibration.band),
        high=total + spread * (calibration.band - 1),
        epochs=drive.epochs,
        lr_sum=drive.lr_sum,
        shift=saturate(kappa * drive.unit_shift, drive.target),
        terms=terms,
        kappa=kappa,
        calibration=calibration,
        old_text=old is not None and len(old.ids) > 0,
        ceiling=math.log(max(len(prior), 2)),
        curve=curve,
        budget=budget,
        replay=replay,
    )
