"""The forecast's per-model constants: their defaults, where each model's are kept, and how a few measured
probe fine-tunes fit them.

`kappa` (logit change per unit of summed learning rate) is fitted to the probes' head-only
forgetting, then `body_gain` to their total forgetting given the fitted head and the model's
`adaptation` (the nats any plain text takes off the old text's loss early on), each by least
squared log error over a grid: the forecast must be right within a factor, not in absolute nats,
and a grid cannot fall into a local minimum. The gain's grid is drawn around the gains the probes
themselves ask for, then refined around the best point: the body term's unit changed with every form
(v4's gain was about 2e3, v7's is about 1e5 to 2e5), and a fixed grid ending at 1e5 left v7's fitted gain
pinned at its end (docs/VALIDITY.md, "v8"). The band is exp(2 × RMS log error) of the fitted forecast
on the probes, at least `CALIBRATED_BAND_FLOOR`.

The adaptation is measured where the probes were also measured early in their runs (`EarlyPoint`, v10): at
the forecast's first checkpoint it is done while the body has barely begun, so the median of what the head
and the body leave unexplained there is its gain. It and the body's gain, which depends on it a little, are
fitted in turn.

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
    130600.0  # nats per unit of lr · (1 - e^{-Σlr/L}) · S · R · ln(1 + max(1, E)) · e^{-H₁/2}, uncalibrated (v9 design)
)
DEFAULT_ADAPTATION = 0.0  # nats of adaptation gain (forecast term 7) where none was measured
DEFAULT_BAND = 4.0  # uncalibrated: the truth is expected within ×/÷ 4
FORM = "v10"  # the forecast's form: a calibration fitted to another form (or to v7 on its clamped grid) is not used
CALIBRATED_BAND_FLOOR = 1.5


@dataclass(frozen=True)
class Calibration:
    """Per-base-model constants of the forecast, measured by `vocabrisk calibrate` or defaulted.

    `kappa` None means the width rule, `KAPPA_PER_WIDTH` × the head's width. `old_loss` is the base model's
    mean loss on the old text, nats per token: it weighs the body's two pathways (`forecast.transfer_weight`).
    `weights` is the key of the checkpoint it was fitted on (`model.identity.weights_key`); `set_aside` says why
    a saved calibration was not used, where one was found.
    """

    kappa: float | None = None
    body_gain: float = DEFAULT_BODY_GAIN
    adaptation: float = DEFAULT_ADAPTATION
    band: float = DEFAULT_BAND  # multiplicative: the forecast's band is [value / band, value · band]
    old_loss: float | None = None  # measured by `calibrate` on its old text, or given with --old-loss
    source: str = "default"
    fingerprint: str | None = None
    weights: str | None = None
    probes: list[dict] = field(default_factory=list)
    left_out: dict | None = None  # how the fit forecasts probes of a source it was not fitted on (`leave_one_out`)
    tool_version: str = __version__
    form: str = FORM
    set_aside: str | None = None

    @property
    def calibrated(self) -> bool:
        return self.source != "default"

    @property
    def described(self) -> str:
        """Which constants a forecast used, in words."""
        if self.calibrated:
            return f"{self.source} constants"
        return "uncalibrated defaults" + (f" ({self.set_aside})" if self.set_aside else "")

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


def load_calibration(fingerprint: str | None, weights: str | None = None) -> Calibration:
    """The saved calibration of a tokenizer/model fingerprint, else the defaults.

    A calibration fitted on other weights of the model (WEIGHTS, where the model's files were read, against
    the key it recorded) is set aside: a checkpoint trained again in place keeps the fingerprint, while its
    constants and its loss on the old text moved. So is one fitted to another form of the forecast (other
    terms, other constants), but the base loss on the old text it measured is kept: that is the model's, not
    the form's. Either way the forecast says why, and the defaults apply until `vocabrisk calibrate` runs again.
    """
    if fingerprint:
        path = calibration_path(fingerprint)
        if path.is_file():
            saved = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(saved, dict):
                fitted = saved.get("weights")
                if weights and fitted and fitted != weights:
                    return Calibration(
                        set_aside="the saved calibration was fitted on other weights of this model: "
                        "run `vocabrisk calibrate` again"
                    )
                if saved.get("form") != FORM:
                    old_loss = saved.get("old_loss")
                    return Calibration(
                        old_loss=old_loss if isinstance(old_loss, (int, float)) else None,
                        set_aside=f"the saved calibration was fitted to forecast {saved.get('form') or 'v7 or before'}"
                        f", not {FORM}: run `vocabrisk calibrate` again",
                    )
                return Calibration.from_dict(saved)
    return Calibration()


def save_calibration(calibration: Calibration) -> Path:
    path = calibration_path(calibration.fingerprint or "unknown")
    return write_atomic(path, json.dumps(calibration.to_dict(), indent=1) + "\n", "calibration")


KAPPAS = np.geomspace(0.5, 5000, 29)
GAIN_REACH = 100.0  # the gain grid spans this factor below the smallest and above the largest gain a probe asks for
GAIN_POINTS = 121  # points of the gain grid, and of its refinement between the best point's neighbours
FLOOR = 1e-4  # nats: measured forgetting below this is noise


ADAPTATION_ROUNDS = 3  # the adaptation and the body's gain fitted in turn, from no adaptation


@dataclass(frozen=True)
class EarlyPoint:
    """A probe's forgetting measured at the forecast's first checkpoint (`forecast.EARLY_STEP`), with the forecast's
    two terms there before their constants: what the adaptation (forecast term 7) is measured from."""

    total: float  # measured total forgetting at that step, nats
    body: float  # the body's term there per unit of body_gain
    competition: Callable[[np.ndarray], np.ndarray]  # kappas -> the head's term there


@dataclass(frozen=True)
class ProbeRun:
    """One measured probe fine-tune, with the forecast's two terms before their constants."""

    name: str
    head: float  # measured head-only forgetting, nats
    total: float  # measured total forgetting, nats
    body: float  # the body's term per unit of body_gain (`forecast.Body.unit`)
    competition: Callable[[np.ndarray], np.ndarray]  # kappas -> the head's term (mean KL over old positions)
    source: str = ""  # the probe text the run trained on: runs of one source are left out together
    early: EarlyPoint | None = None  # measured early in the run, where calibrate measures the adaptation

    def forecast(self, calibration: Calibration) -> float:
        """The total this run's forecast makes under CALIBRATION's constants."""
        head = float(self.competition(np.array([calibration.kappa]))[0])
        return head + calibration.body_gain * self.body - calibration.adaptation


def _log_error(predicted: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """Sum over probes of squared log ratios; predicted may carry leading grid axes."""
    ratio = np.maximum(predicted, 1e-12) / np.maximum(measured, FLOOR)
    return np.sum(np.log(ratio) ** 2, axis=-1)


def _gain_grid(head: np.ndarray, total: np.ndarray, body: np.ndarray, adaptation: float) -> np.ndarray:
    """0 and a geometric grid GAIN_REACH below and above the gains that would explain each probe alone (its total
    less its forecast head, plus the adaptation, over its body term), where any probe asks for one."""
    asked = (np.maximum(total, FLOOR) - head + adaptation) / np.where(body > 0, body, np.nan)
    asked = asked[np.isfinite(asked) & (asked > 0)]
    if not len(asked):
        return np.zeros(1)
    return np.concatenate([[0.0], np.geomspace(asked.min() / GAIN_REACH, asked.max() * GAIN_REACH, GAIN_POINTS)])


def _best_of(gains: np.ndarray, head: np.ndarray, total: np.ndarray, body: np.ndarray, adaptation: float) -> int:
    """The index of the body gain among GAINS of least squared log error, given the fitted HEAD."""
    predicted = head[None, :] + gains[:, None] * body[None, :] - adaptation  # (gains, probes)
    return int(np.argmin(_log_error(predicted, total)))


def _best_gain(head: np.ndarray, total: np.ndarray, body: np.ndarray, adaptation: float) -> float:
    """The body gain of least squared log error given the fitted HEAD: the best point of `_gain_grid`, then the
    best of a finer grid between that point's neighbours (0 stays a candidate)."""
    gains, best = _gain_grid(head, total, body, adaptation), 0.0
    for _ in range(2):
        b = _best_of(gains, head, total, body, adaptation)
        best = float(gains[b])
        if len(gains) < 3:
            break
        low, high = gains[max(b - 1, 1)], gains[min(b + 1, len(gains) - 1)]
        gains = np.concatenate([[0.0], np.geomspace(low, high, GAIN_POINTS)])
    return best


def measured_adaptation(probes: Sequence[ProbeRun], kappa: float, gain: float) -> float | None:
    """Term 7's gain from the probes' early points under KAPPA and the body's GAIN: the median of what the head and
    body leave unexplained there, at least 0; None where no probe was measured early."""
    early = [p.early for p in probes if p.early is not None]
    if not early:
        return None
    left = [e.total - float(e.competition(np.array([kappa]))[0]) - gain * e.body for e in early]
    return max(0.0, -float(np.median(left)))


def fit(
    probes: Sequence[ProbeRun],
    fingerprint: str | None = None,
    adaptation: float | None = None,
    old_loss: float | None = None,
) -> Calibration:
    """The calibration that best explains the probes (see the module docstring). ADAPTATION None measures it from
    the probes' early points (`measured_adaptation`), DEFAULT_ADAPTATION where they have none; a number fixes it.
    OLD_LOSS, the base model's loss on the probes' old text, is kept with it (the probes' body terms must have been
    made with it)."""
    if len(probes) < 2:
        raise ValueError("calibration needs at least two probe runs")
    head = np.array([p.head for p in probes])
    total = np.array([p.total for p in probes])
    body = np.array([p.body for p in probes])
    head_grid = np.array([p.competition(KAPPAS) for p in probes]).T  # (kappas, probes)
    k = int(np.argmin(_log_error(head_grid, head)))
    predicted_head = head_grid[k]
    measure = adaptation is None
    adaptation = DEFAULT_ADAPTATION if measure else adaptation
    gain = _best_gain(predicted_head, total, body, adaptation)
    for _ in range(ADAPTATION_ROUNDS if measure else 0):
        measured = measured_adaptation(probes, float(KAPPAS[k]), gain)
        if measured is None:
            break
        adaptation = measured
        gain = _best_gain(predicted_head, total, body, adaptation)
    predicted_total = predicted_head + gain * body - adaptation
    residual = np.log(np.maximum(predicted_total, 1e-12) / np.maximum(total, FLOOR))
    band = max(math.exp(2 * math.sqrt(float(np.mean(residual**2)))), CALIBRATED_BAND_FLOOR)
    return Calibration(
        kappa=float(KAPPAS[k]),
        body_gain=gain,
        adaptation=adaptation,
        band=band,
        old_loss=old_loss,
        source=f"calibrated on {len(probes)} probe runs",
        fingerprint=fingerprint,
        probes=[
            {
                "name": p.name,
                "head": p.head,
                "total": p.total,
                "forecast_head": float(predicted_head[i]),
                "forecast_total": float(predicted_total[i]),
                **({"early_total": p.early.total} if p.early is not None else {}),
            }
            for i, p in enumerate(probes)
        ],
    )


def leave_one_out(
    probes: Sequence[ProbeRun], adaptation: float | None = None, old_loss: float | None = None
) -> dict | None:
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
        fitted = fit(rest, adaptation=adaptation, old_loss=old_loss)
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
