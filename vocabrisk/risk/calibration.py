"""The forecast's per-model constants: their defaults, where each model's are kept, and how a few measured
probe fine-tunes fit them.

`kappa` (logit change per unit of summed learning rate) is fitted to the probes' head-only
forgetting, then `body_gain` to their total forgetting given the fitted head and the model's
`adaptation` (the nats any plain text takes off the old text's loss early on), each by least
squared log error over a grid: the forecast must be right within a factor, not in absolute nats,
and a grid cannot fall into a local minimum. The band is exp(2 × RMS log error) of the fitted
forecast on the probes, at least `CALIBRATED_BAND_FLOOR`.

Fitting needs only numbers (`fit`); running the probes needs torch (`vocabrisk.verify`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from vocabrisk._version import __version__
from vocabrisk.storage.cache import cache_folder
from vocabrisk.storage.outputs import write_atomic

KAPPA_PER_WIDTH = 0.22  # kappa per hidden coordinate, uncalibrated; see docs/VALIDITY.md ("v4")
DEFAULT_WIDTH = 512  # the width assumed where a model's head is not known
DEFAULT_BODY_GAIN = (
    124100.0  # nats per unit of lr · (1 - e^{-Σlr/L}) · S · B · ln(1 + max(1, E)) · e^{-H₁/2}, uncalibrated (v7 design)
)
DEFAULT_ADAPTATION = 0.0  # nats of adaptation gain (forecast term 7) where none was measured (SmolLM2-Instruct: 0.07)
DEFAULT_BAND = 4.0  # uncalibrated: the truth is expected within ×/÷ 4
FORM = "v7"  # the forecast's form: a calibration fitted to another form's terms does not apply
CALIBRATED_BAND_FLOOR = 1.5


@dataclass(frozen=True)
class Calibration:
    """Per-base-model constants of the forecast, measured by `vocabrisk calibrate` or defaulted.

    `kappa` None means the width rule, `KAPPA_PER_WIDTH` × the head's width.
    """

    kappa: float | None = None
    body_gain: float = DEFAULT_BODY_GAIN
    adaptation: float = DEFAULT_ADAPTATION
    band: float = DEFAULT_BAND  # multiplicative: the forecast's band is [value / band, value · band]
    source: str = "default"
    fingerprint: str | None = None
    probes: list[dict] = field(default_factory=list)
    left_out: dict | None = None  # how the fit forecasts probes of a source it was not fitted on (`leave_one_out`)
    tool_version: str = __version__
    form: str = FORM

    @property
    def calibrated(self) -> bool:
        return self.source != "default"

    def kappa_for(self, width: int | None) -> float:
        return self.kappa if self.kappa is not None else KAPPA_PER_WIDTH * (width or DEFAULT_WIDTH)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Calibration:
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})


def calibration_path(fingerprint: str) -> Path:
    return cache_folder() / "calibration" / f"{fingerprint}.json"


def load_calibration(fingerprint: str | None) -> Calibration:
    """The saved calibration of a tokenizer/model fingerprint, else the defaults.

    A calibration fitted to an earlier form of the forecast (other terms, other constants) is not
    used: the defaults apply until `vocabrisk calibrate` runs again.
    """
    if fingerprint:
        path = calibration_path(fingerprint)
        if path.is_file():
            saved = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(saved, dict) and saved.get("form") == FORM:
                return Calibration.from_dict(saved)
    return Calibration()


def save_calibration(calibration: Calibration) -> Path:
    path = calibration_path(calibration.fingerprint or "unknown")
    return write_atomic(path, json.dumps(calibration.to_dict(), indent=1) + "\n", "calibration")


KAPPAS = np.geomspace(0.5, 5000, 29)
GAINS = np.concatenate([[0.0], np.geomspace(0.01, 1e5, 106)])
FLOOR = 1e-4  # nats: measured forgetting below this is noise


@dataclass(frozen=True)
class ProbeRun:
    """One measured probe fine-tune, with the forecast's two terms before their constants."""

    name: str
    head: float  # measured head-only forgetting, nats
    total: float  # measured total forgetting, nats
    body: float  # the body's term per unit of body_gain (`forecast.Body.unit`)
    competition: Callable[[np.ndarray], np.ndarray]  # kappas -> the head's term (mean KL over old positions)
    source: str = ""  # the probe text the run trained on: runs of one source are left out together

    def forecast(self, calibration: Calibration) -> float:
        """The total this run's forecast makes under CALIBRATION's constants."""
        head = float(self.competition(np.array([calibration.kappa]))[0])
        return head + calibration.body_gain * self.body - calibration.adaptation


def _log_error(predicted: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """Sum over probes of squared log ratios; predicted may carry leading grid axes."""
    ratio = np.maximum(predicted, 1e-12) / np.maximum(measured, FLOOR)
    return np.sum(np.log(ratio) ** 2, axis=-1)


def fit(
    probes: Sequence[ProbeRun], fingerprint: str | None = None, adaptation: float = DEFAULT_ADAPTATION
) -> Calibration:
    """The calibration that best explains the probes (see the module docstring), with ADAPTATION fixed:
    probes measured at one step of one plan cannot tell it from the body's gain."""
    if len(probes) < 2:
        raise ValueError("calibration needs at least two probe runs")
    head = np.array([p.head for p in probes])
    total = np.array([p.total for p in probes])
    body = np.array([p.body for p in probes])
    head_grid = np.array([p.competition(KAPPAS) for p in probes]).T  # (kappas, probes)
    k = int(np.argmin(_log_error(head_grid, head)))
    predicted_head = head_grid[k]
    total_grid = predicted_head[None, :] + GAINS[:, None] * body[None, :] - adaptation  # (gains, probes)
    b = int(np.argmin(_log_error(total_grid, total)))
    residual = np.log(np.maximum(total_grid[b], 1e-12) / np.maximum(total, FLOOR))
    band = max(math.exp(2 * math.sqrt(float(np.mean(residual**2)))), CALIBRATED_BAND_FLOOR)
    return Calibration(
        kappa=float(KAPPAS[k]),
        body_gain=float(GAINS[b]),
        adaptation=adaptation,
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


def leave_one_out(probes: Sequence[ProbeRun], adaptation: float = DEFAULT_ADAPTATION) -> dict | None:
    """Each source's probe runs forecast by the constants fitted on the other sources' runs: how well a
    calibration ranks and sizes forgetting on text it has not seen. None with fewer than 3 sources."""
    sources = sorted({p.source or p.name for p in probes})
    if len(sources) < 3:
        return None
    predicted, measured = [], []
    for source in sources:
        rest = [p for p in probes if (p.source or p.name) != source]
        if len(rest) < 2:
            return None
        fitted = fit(rest, adaptation=adaptation)
        for p in probes:
            if (p.source or p.name) == source:
                predicted.append(p.forecast(fitted))
                measured.append(p.total)
    predicted, measured = np.array(predicted), np.array(measured)
    ranks = [np.argsort(np.argsort(values, kind="stable"), kind="stable") for values in (predicted, measured)]
    spearman = float(np.corrcoef(*ranks)[0, 1]) if len(predicted) > 2 and np.ptp(ranks[1]) > 0 else None
    ratio = predicted / np.where(measured > 0, measured, np.nan)
    within = float(np.mean((measured > 0) & (ratio >= 0.5) & (ratio <= 2.0)))
    return {"sources": len(sources), "runs": len(predicted), "spearman": spearman, "within_x2": within}
