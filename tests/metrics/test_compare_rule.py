"""The formulas behind compare's flags: Student's t quantile, the run-to-run prediction band, the
practical floor, and the order in which a row's change is judged."""

from __future__ import annotations

import math

import numpy as np
import pytest

from metrics.gate.compare_rule import (
    BELOW_MIN_CHANGE,
    INCLUDES_ZERO,
    WITHIN_RUN_SPREAD,
    judge_change,
    practical_floor,
    run_spread_half_width,
    student_t_coverage,
    student_t_quantile,
)


@pytest.mark.parametrize(("confidence", "df", "t"), [
    (0.95, 1, 12.7062), (0.95, 2, 4.3027), (0.95, 3, 3.1824), (0.95, 4, 2.7764), (0.95, 9, 2.2622),
    (0.99, 5, 4.0321), (0.90, 30, 1.6973), (0.95, 1000, 1.9623), (0.999, 2, 31.5991),
])
def test_t_quantiles_match_the_tables(confidence: float, df: int, t: float) -> None:
    assert student_t_quantile(confidence, df) == pytest.approx(t, abs=1e-4)


def test_t_coverage_is_the_distribution_of_simulated_t() -> None:
    rng = np.random.default_rng(3)
    for df in (1, 2, 3, 6):
        samples = rng.standard_t(df, 200_000)
        for t in (0.5, 1.0, 2.5):
            assert student_t_coverage(t, df) == pytest.approx(float(np.mean(np.abs(samples) <= t)), abs=0.004)
    assert student_t_coverage(1.0, 1) == pytest.approx(0.5)  # Cauchy: P(|T| <= 1) = 1/2
    with pytest.raises(ValueError):
        student_t_coverage(1.0, 0)


def test_run_spread_half_width() -> None:
    assert run_spread_half_width([0.1], 0.95) is None  # one run: no spread to measure
    values = [1.0, 2.0, 3.0]  # s = 1, k = 3
    assert run_spread_half_width(values, 0.95) == pytest.approx(4.3027 * math.sqrt(1 + 1 / 3), abs=1e-4)
    assert run_spread_half_width([2.0, 2.0], 0.95) == 0.0


def test_practical_floor() -> None:
    assert practical_floor(0.2, duration=True, min_change=0.05, min_change_abs_s=0.001) == pytest.approx(0.01)
    assert practical_floor(0.01, duration=True, min_change=0.05, min_change_abs_s=0.001) == 0.001
    assert practical_floor(0.01, duration=False, min_change=0.05, min_change_abs_s=0.001) == pytest.approx(0.0005)
    assert practical_floor(-0.5, duration=False, min_change=0.1, min_change_abs_s=0.0) == pytest.approx(0.05)


def test_judge_change() -> None:
    judge = judge_change
    assert judge(0.05, (-0.01, 0.1), spread=None, floor=0.0, worse_when_higher=True) == ("", INCLUDES_ZERO)
    assert judge(0.05, (0.01, 0.1), spread=0.06, floor=0.0, worse_when_higher=True) == ("", WITHIN_RUN_SPREAD)
    assert judge(0.05, (0.01, 0.1), spread=0.04, floor=0.06, worse_when_higher=True) == ("", BELOW_MIN_CHANGE)
    assert judge(0.05, (0.01, 0.1), spread=0.04, floor=0.05, worse_when_higher=True) == ("regression", "")
    assert judge(0.05, (0.01, 0.1), spread=None, floor=0.0, worse_when_higher=False) == ("improvement", "")
    assert judge(-0.05, (-0.1, -0.01), spread=None, floor=0.0, worse_when_higher=True) == ("improvement", "")
