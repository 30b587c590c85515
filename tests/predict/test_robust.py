"""Outlier steps left out of the step-time fit: steps merged in pairs (D and K doubled, one step's
duration) and stalls pull a plain least-squares fit's slopes; the trimmed fit recovers the parameters."""

from __future__ import annotations

import numpy as np
import pytest

from loadgen.predict.calibrate import fit_best
from loadgen.predict.robust import outliers, trimmed_fit
from loadgen.predict.step_model import StepFeatures, StepModel
from loadgen.predict.steps import Step

TRUE = StepModel(fixed_s=0.085, prefill_s=2e-5, decode_kv_s=6.4e-7)


def _steps(n: int, bad: float, seed: int = 0) -> list[Step]:
    """Steps of the TRUE model with 1 % noise; a share `bad` of them measured wrong."""
    rng = np.random.default_rng(seed)
    steps = []
    for _ in range(n):
        d = int(rng.integers(1, 50))
        p = int(rng.integers(0, 2)) * int(rng.integers(64, 512 - d))
        f = StepFeatures(p, float(p * p), d, d * int(rng.integers(100, 600)))
        t = TRUE.step_s(f) * (1 + 0.01 * rng.standard_normal())
        if rng.random() < bad:  # two steps clustered as one, or a stall
            f, t = (StepFeatures(2 * p, 2 * f.prefill_ctx, 2 * d, 2 * f.kv_tokens), t) if rng.random() < 0.5 \
                else (f, t + float(rng.uniform(0.05, 0.3)))
        steps.append(Step(f, t))
    return steps


def test_outlier_steps_are_left_out_and_the_slopes_recovered() -> None:
    steps = _steps(400, bad=0.15)
    plain, _ = fit_best(steps, {"prefill_ctx_s": 0.0})
    fit, _ = trimmed_fit(fit_best, steps, {"prefill_ctx_s": 0.0})
    assert plain.values["decode_kv_s"] != pytest.approx(TRUE.decode_kv_s, rel=0.2)  # what the outliers do
    assert fit.values["decode_kv_s"] == pytest.approx(TRUE.decode_kv_s, rel=0.1)
    assert fit.values["fixed_s"] == pytest.approx(TRUE.fixed_s, rel=0.02)
    assert 320 <= fit.points < 400


def test_clean_steps_lose_almost_nothing() -> None:
    steps = _steps(200, bad=0.0, seed=1)
    fit, _ = trimmed_fit(fit_best, steps, {"prefill_ctx_s": 0.0})
    assert fit.points >= 196 and fit.values["decode_kv_s"] == pytest.approx(TRUE.decode_kv_s, rel=0.05)
    exact = [Step(s.features, TRUE.step_s(s.features)) for s in steps]
    assert not outliers(fit_best(exact)[0], exact).any()  # a perfect fit (MAD 0) leaves nothing out
