"""Steps whose measured time is far off every fit are left out of it (loadgen.predict.calibrate).

A few steps are measured wrong, not slowly: on a busy client the chunks of two neighbouring steps cluster
into one (its D and K doubled, its duration one step), and a stalled server (a pause of the process, the
machine's other load) stretches one gap. Least squares weighs such a step by its squared residual, so a
few of them pull the slopes: on the sim server under load they held `decode_kv_s` at a fifth of the
simulated GPU's KV read per token, and predicted a long-context workload's capacity 18 % too high.
`trim` fits, leaves out the steps whose residual lies more than K robust standard deviations
(1.4826 × the median absolute deviation, at least 1 µs) from the median residual, and refits, until nothing more is left
out or ROUNDS are done; a refit the remaining steps cannot identify keeps the last fit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from loadgen.predict.calibrate import Fit, IdentifyError
from loadgen.predict.step_model import model_of
from loadgen.predict.steps import Step

K = 3.0
ROUNDS = 3
MAD_SIGMA = 1.4826  # σ of a normal distribution per median absolute deviation
MIN_SIGMA_S = 1e-6  # no step is timed closer than this: residuals of an exact fit are rounding, not outliers


def outliers(fit: Fit, steps: list[Step], k: float = K) -> np.ndarray:
    """Mask of the steps whose residual under `fit` lies more than k robust σ from the median residual."""
    model = model_of(fit.values, overlap=fit.overlap)
    resid = np.array([s.duration_s - model.step_s(s.features) for s in steps], dtype=np.float64)
    dev = np.abs(resid - np.median(resid))
    sigma = max(MAD_SIGMA * float(np.median(dev)), MIN_SIGMA_S)
    return dev > k * sigma


@dataclass(frozen=True, slots=True)
class Trimmed:
    """The fit after trimming, each form's residual RMS, and the steps fitted (the rest were left out)."""

    fit: Fit
    forms: dict[str, float]
    kept: list[Step]


def trim(fit_fn: Callable[..., tuple[Fit, dict[str, float]]], steps: list[Step], *args: Any,
         rounds: int = ROUNDS, **kwargs: Any) -> Trimmed:
    """`fit_fn(steps, *args, **kwargs)` (calibrate.fit_best), refitted without the outlier steps."""
    fit, forms = fit_fn(steps, *args, **kwargs)
    for _ in range(rounds):
        drop = outliers(fit, steps)
        if not drop.any():
            break
        kept = [s for s, d in zip(steps, drop.tolist(), strict=True) if not d]
        try:
            fit, forms = fit_fn(kept, *args, **kwargs)
        except IdentifyError:
            break
        steps = kept
    return Trimmed(fit, forms, steps)


def left_out_prefill(steps: list[Step], kept: list[Step]) -> tuple[int, int]:
    """(left out, all) of the steps that carry prefill tokens."""
    carrying = sum(s.features.prefill_tokens > 0 for s in steps)
    return carrying - sum(s.features.prefill_tokens > 0 for s in kept), carrying
