"""Fit the forecast's constants to a base model from a few measured probe fine-tunes.

`kappa` (logit change per unit of summed learning rate) is fitted to the probes' head-only
forgetting, then `body_gain` to their total forgetting given the fitted head, each by least
squared log error over a grid: the forecast must be right within a factor, not in absolute nats,
and a grid cannot fall into a local minimum. The band is exp(2 × RMS log error) of the fitted
forecast on the probes, at least `CALIBRATED_BAND_FLOOR`.

Fitting needs only numbers (`fit`); running the probes needs torch (`vocabrisk.verify`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from vocabrisk.forecast import CALIBRATED_BAND_FLOOR, Calibration

KAPPAS = np.geomspace(0.5, 5000, 29)
GAINS = np.concatenate([[0.0], np.geomspace(0.01, 1000, 76)])
FLOOR = 1e-4  # nats: measured forgetting below this is noise


@dataclass(frozen=True)
class ProbeRun:
    """One measured probe fine-tune, with the forecast's two terms before their constants."""

    name: str
    head: float  # measured head-only forgetting, nats
    total: float  # measured total forgetting, nats
    body: float  # the body's term per unit of body_gain (`forecast.Body.unit`)
    competition: Callable[[np.ndarray], np.ndarray]  # kappas -> the head's term (mean KL over old positions)


def _log_error(predicted: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """Sum over probes of squared log ratios; predicted may carry leading grid axes."""
    ratio = np.maximum(predicted, 1e-12) / np.maximum(measured, FLOOR)
    return np.sum(np.log(ratio) ** 2, axis=-1)


def fit(probes: Sequence[ProbeRun], fingerprint: str | None = None) -> Calibration:
    """The calibration that best explains the probes (see the module docstring)."""
    if len(probes) < 2:
        raise ValueError("calibration needs at least two probe runs")
    head = np.array([p.head for p in probes])
    total = np.array([p.total for p in probes])
    body = np.array([p.body for p in probes])
    head_grid = np.array([p.competition(KAPPAS) for p in probes]).T  # (kappas, probes)
    k = int(np.argmin(_log_error(head_grid, head)))
    predicted_head = head_grid[k]
    total_grid = predicted_head[None, :] + GAINS[:, None] * body[None, :]  # (gains, probes)
    b = int(np.argmin(_log_error(total_grid, total)))
    residual = np.log(np.maximum(total_grid[b], 1e-12) / np.maximum(total, FLOOR))
    band = max(math.exp(2 * math.sqrt(float(np.mean(residual**2)))), CALIBRATED_BAND_FLOOR)
    return Calibration(
        kappa=float(KAPPAS[k]),
        body_gain=float(GAINS[b]),
        band=band,
        source=f"calibrated on {len(probes)} probe runs",
        fingerprint=fingerprint,
        probes=[
            {
                "name": p.name,
                "head": p.head,
                "total": p.total,
                "forecast_head": float(predicted_head[i]),
                "forecast_total": float(total_grid[b, i]),
            }
            for i, p in enumerate(probes)
        ],
    )
