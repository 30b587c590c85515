"""The step-time fit: known parameters recovered from synthetic steps, and refusals."""

from __future__ import annotations

import numpy as np
import pytest

from loadgen.predict.calibrate import IdentifyError, fit_steps
from loadgen.predict.step_model import StepFeatures, StepModel
from loadgen.predict.steps import Step

TRUE = StepModel(fixed_s=0.004, prefill_s=2e-5, prefill_ctx_s=1e-9, decode_seq_s=5e-5, decode_kv_s=2e-7)


def _steps(n: int, noise: float, seed: int = 0) -> list[Step]:
    rng = np.random.default_rng(seed)
    steps = []
    for _ in range(n):
        prompt = int(rng.integers(64, 2048))
        p = int(rng.integers(0, 2)) * prompt
        f = StepFeatures(p, float(p * prompt), int(rng.integers(1, 64)), int(rng.integers(100, 50_000)))
        steps.append(Step(f, TRUE.step_s(f) * (1 + noise * rng.standard_normal())))
    return steps


def test_exact_steps_recover_the_parameters() -> None:
    fit = fit_steps(_steps(200, 0.0))
    for name in ("fixed_s", "prefill_s", "prefill_ctx_s", "decode_seq_s", "decode_kv_s"):
        assert fit.values[name] == pytest.approx(getattr(TRUE, name), rel=1e-6)
    assert fit.residual_rms_s == pytest.approx(0.0, abs=1e-12)


def test_noisy_steps_give_standard_errors_that_cover_the_truth() -> None:
    fit = fit_steps(_steps(2000, 0.02, seed=3))
    for name in ("fixed_s", "prefill_s", "decode_kv_s"):
        assert abs(fit.values[name] - getattr(TRUE, name)) < 4 * fit.std_err[name]
        assert fit.std_err[name] > 0


def test_one_prompt_length_cannot_separate_prefill_from_its_growth() -> None:
    # Every prefill is 512 tokens: PC = 512 · P, so the two columns are proportional.
    steps = [Step(StepFeatures(512 * (i % 2), 512.0 * 512 * (i % 2), 1 + i % 7, 1000 + 37 * i), 0.01) for i in range(50)]
    with pytest.raises(IdentifyError, match="prefill_s, prefill_ctx_s"):
        fit_steps(steps)
    fit = fit_steps(steps, fixed={"prefill_ctx_s": 0.0})
    assert "prefill_ctx_s" not in fit.std_err


def test_too_few_steps_are_refused() -> None:
    with pytest.raises(IdentifyError, match="3 measured engine steps cannot fit 5"):
        fit_steps(_steps(3, 0.0))


def test_roofline_bounds_by_hand() -> None:
    from loadgen.predict.bounds import kv_read_s, roofline_bounds, token_compute_s

    assert token_compute_s(8_000_000_000, 1e15) == pytest.approx(1.6e-5)  # 2 × 8e9 FLOPs at 1 PFLOP/s
    assert kv_read_s(131_072, 2e12) == pytest.approx(6.5536e-8)  # 128 KiB at 2 TB/s
    # Llama-3.1-8B keeps 32 layers × 2 × 8 KV heads × 128 × 2 bytes = 128 KiB per token.
    b = roofline_bounds("Llama-3.1-8B", "H100-SXM")
    from metrics.model.presets import resolve_gpu

    assert b["decode_kv_s"] == pytest.approx(131_072 / resolve_gpu("H100-SXM").bandwidth)


def test_a_parameter_the_steps_cannot_identify_is_held_at_its_bound() -> None:
    # No step decodes anything: decode_seq_s and decode_kv_s have zero columns.
    steps = [Step(StepFeatures(64 * (1 + i % 9), 0.0, 0, 0), 0.004 + 2e-5 * 64 * (1 + i % 9)) for i in range(40)]
    with pytest.raises(IdentifyError, match="decode_seq_s, decode_kv_s"):
        fit_steps(steps, {"prefill_ctx_s": 0.0})
    fit = fit_steps(steps, {"prefill_ctx_s": 0.0}, lower={"decode_seq_s": 1e-5, "decode_kv_s": 1e-7})
    assert fit.values["decode_seq_s"] == 1e-5 and fit.values["decode_kv_s"] == 1e-7
    assert fit.values["prefill_s"] == pytest.approx(2e-5)


def test_a_fit_below_its_bound_is_held_there() -> None:
    fit = fit_steps(_steps(200, 0.0), lower={"decode_kv_s": 1e-6})  # the truth is 2e-7
    assert fit.values["decode_kv_s"] == 1e-6 and "decode_kv_s" not in fit.std_err


def test_an_aggregate_is_one_row_weighted_by_the_root_of_its_distinct_steps() -> None:
    from loadgen.predict.calibrate import Aggregate, design

    # Four requests whose prompts ran in two shared steps of 100 and 300 tokens (each request's tuple lists
    # both): the row is the members' sum over 4 requests (the mean per request), times √2 for the two
    # distinct steps, not √4 (the four requests' means are two steps' observations); the observation is the
    # server's mean, times √2.
    steps = _steps(10, 0.0)
    two = (StepFeatures(100, 1e4), StepFeatures(300, 9e4))
    agg = Aggregate(two * 4, requests=4, mean_s=0.03, steps=2)
    x, y = design(steps, aggregates=(agg,))
    assert x.shape == (11, 6)
    root2 = 2 ** 0.5
    assert x[-1].tolist() == pytest.approx([4 * root2 / 4 * 2, 0.0, root2 * 4 * 400 / 4, root2 * 4 * 1e5 / 4, 0, 0])
    assert y[-1] == pytest.approx(0.03 * root2)
    fit = fit_steps(steps, aggregates=(agg,))
    assert (fit.points, fit.rows) == (10, 1) and fit.residual_rms_s >= 0


def test_the_steps_alone_say_which_prefill_parameters_they_cannot_identify() -> None:
    from loadgen.predict.calibrate import prefill_unidentified

    decode_only = [Step(StepFeatures(0, 0.0, 1 + i % 4, 100 + 37 * i), 0.01) for i in range(30)]
    assert prefill_unidentified(decode_only) == ["prefill_s", "prefill_ctx_s"]
    assert prefill_unidentified(decode_only, {"prefill_ctx_s": 0.0}) == ["prefill_s"]
    assert prefill_unidentified(_steps(50, 0.0)) == []
