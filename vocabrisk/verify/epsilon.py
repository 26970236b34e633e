"""The head-only epsilon from measured gradient scales (the count-based estimate and the formula,
`eps_keeping_step`, are in `vocabrisk.advice`).

Adam moves a row with a steady gradient g by about `g / (g + eps)` of a full step. The fed
rows that carry most of the corpus's tokens (gradient RMS above the token-mass median, read
from a real run) should keep `KEEP_STEP` of their step, so

    eps = g_fed * (1 - KEEP_STEP) / KEEP_STEP

Starved rows, whose gradients are orders of magnitude smaller, then keep only
`g_starved / (g_starved + eps)` of theirs. Why the median and not the rarest fed rows: rows
fed only a handful of times have gradients close to the starved rows' (on the demo's Korean
sample, 7e-6 at the rarest tenth of token mass against 3e-7 starved), so protecting them
leaves the starved rows most of their step; docs/VALIDITY.md measures the trade.
"""

from __future__ import annotations

import numpy as np

from vocabrisk.advice import FED_MASS, KEEP_STEP, eps_keeping_step, weighted_quantile


def measured_head_eps(grad_rms: np.ndarray, counts: np.ndarray, fed: np.ndarray, starved: np.ndarray) -> dict | None:
    """The recommended head eps and the gradient scales behind it; None without fed or starved rows."""
    if not fed.any() or not starved.any():
        return None
    g_fed = weighted_quantile(grad_rms[fed], counts[fed].astype(np.float64), FED_MASS)
    g_starved = float(np.median(grad_rms[starved]))
    value = eps_keeping_step(g_fed)
    return {
        "value": value,
        "fed_gradient": g_fed,
        "starved_gradient": g_starved,
        "fed_median_gradient": float(np.median(grad_rms[fed])),
        "starved_step_kept": g_starved / (g_starved + value),
        "fed_step_kept": g_fed / (g_fed + value),
        "derivation": f"largest eps keeping {KEEP_STEP:.0%} of the Adam step of the fed rows carrying most "
        f"token mass (measured head-gradient RMS {g_fed:.1e} at the token-mass median); starved rows "
        f"(median RMS {g_starved:.1e}) keep {g_starved / (g_starved + value):.1%}",
    }
