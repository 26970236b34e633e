"""Per-token exposure, corpus risk, bands.

Exposure of row j is the expected share of optimizer steps in which the token has not
appeared within Adam's second-moment memory, so that its row's tiny one-sided softmax
gradients are normalised into full-size updates:

    q_j = exp(-f_j * B)                    chance one step of B tokens lacks token j
    exposure_j = (1/S) * sum_{t=1..S} q_j ** min(t, M)

with f_j the token's share of the corpus, S optimizer steps and M = 1 / (1 - beta2) steps of
memory. A row starts exposed (Adam's moments start at zero) and is protected for about M
steps after each appearance. Corpus risk is the prior-weighted mean exposure,
`sum_j prior_j * exposure_j`: the share of the base model's token usage whose output rows
are expected to drift. It lies in [0, 1]; within one base model the prior is fixed, so
corpora rank by their counts alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vocabrisk.profile.profile import Profile
from vocabrisk.risk.plan import TrainingPlan

BANDS = ((0.05, "low"), (0.20, "medium"), (1.01, "high"))
STARVED_EXPOSURE = 0.5


def exposure(shares: np.ndarray, plan: TrainingPlan) -> np.ndarray:
    """Expected share of steps each row spends exposed (see the module docstring)."""
    steps = max(int(plan.steps), 1)
    memory = max(round(plan.memory_steps), 1)
    q = np.exp(-np.asarray(shares, dtype=np.float64) * plan.tokens_per_step)
    horizon = min(steps, memory)
    q_memory = q**memory
    q_horizon = q_memory if horizon == memory else q**horizon  # a run as long as the memory, or longer
    # sum_{t=1..horizon} q^t, written to stay exact as q → 1
    with np.errstate(divide="ignore", invalid="ignore"):
        ramp = np.where(q < 1.0, q * (1.0 - q_horizon) / (1.0 - q), float(horizon))
    plateau = (steps - horizon) * q_memory
    return np.clip((ramp + plateau) / steps, 0.0, 1.0)


def band(score: float) -> str:
    for limit, name in BANDS:
        if score < limit:
            return name
    return BANDS[-1][1]


@dataclass(frozen=True)
class RiskResult:
    score: float
    band: str
    exposure: np.ndarray
    prior: np.ndarray
    contribution: np.ndarray  # prior * exposure, per token id
    starved: np.ndarray  # bool: rows exposed more than half the run
    plan: TrainingPlan
    prior_source: str


def assess(profile: Profile, plan: TrainingPlan, shares: np.ndarray | None = None) -> RiskResult:
    """Risk of fine-tuning on the profiled corpus (or on `shares`, a what-if token distribution)."""
    plan = plan.resolve(profile.total_tokens)
    coverable = profile.coverable
    weights = distribution(np.where(coverable, profile.prior, 0.0))
    row_exposure = np.where(coverable, exposure(profile.shares if shares is None else shares, plan), 0.0)
    contribution = weights * row_exposure
    score = float(contribution.sum())
    return RiskResult(
        score=score,
        band=band(score),
        exposure=row_exposure,
        prior=weights,
        contribution=contribution,
        starved=coverable & (row_exposure > STARVED_EXPOSURE),
        plan=plan,
        prior_source=profile.prior_source,
    )


def distribution(counts: np.ndarray) -> np.ndarray:
    """Counts (or weights) as shares summing to 1; all zeros stay zeros."""
    counts = np.asarray(counts, dtype=np.float64)
    total = counts.sum()
    return counts / total if total > 0 else counts


def never_seen_share(profile: Profile) -> float:
    """Naive baseline: the share of coverable rows the corpus never contains."""
    coverable = profile.coverable
    return float(profile.absent_rows().sum() / max(int(coverable.sum()), 1))


def unigram_kl(profile: Profile, smoothing: float = 0.5) -> float:
    """Naive baseline: KL(prior || corpus unigram distribution), in nats, additively smoothed."""
    coverable = profile.coverable
    prior = np.where(coverable, profile.prior, 0.0)
    prior = prior / prior.sum()
    corpus = np.where(coverable, profile.counts.counts + smoothing, 0.0)
    corpus = corpus / corpus.sum()
    mask = prior > 0
    return float(np.sum(prior[mask] * np.log(prior[mask] / corpus[mask])))
