"""compare_rule against closed forms and by hand: Student's t coverage for df = 1 … 6 written out
(P(|T| ≤ t) = (2/π)·atan t for df = 1, t/√(2 + t²) for df = 2, t(t² + 6)/(t² + 4)^(3/2) for df = 4, …),
quantiles from the printed tables to six digits, and every bound of judge_change taken on both sides."""

from __future__ import annotations

import math
import re

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


def _closed_form(t: float, df: int) -> float:
    """P(|T| <= t) for df = 1 … 6, each written out from the t density's integral."""
    th = math.atan(t / math.sqrt(df))
    s, c = math.sin(th), math.cos(th)
    return {
        1: 2 / math.pi * math.atan(t),
        2: t / math.sqrt(2 + t * t),
        3: 2 / math.pi * (th + s * c),
        4: t * (t * t + 6) / (t * t + 4) ** 1.5,
        5: 2 / math.pi * (th + s * c * (1 + 2 / 3 * c * c)),
        6: s * (1 + c * c / 2 + 3 / 8 * c**4),
    }[df]


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("t", [0.3, 1.0, 2.0, 4.0])
def test_coverage_closed_forms(df: int, t: float) -> None:
    assert student_t_coverage(t, df) == pytest.approx(_closed_form(t, df), abs=1e-13)


def test_coverage_at_and_below_zero_and_far_out() -> None:
    for df in (1, 2, 7):
        assert student_t_coverage(0.0, df) == 0.0
        assert student_t_coverage(-1.0, df) == 0.0
        assert student_t_coverage(1e9, df) == pytest.approx(1.0, abs=1e-8)
        assert student_t_coverage(1e9, df) <= 1.0
    # A probability is at most 1, also where the series' rounding lands one ulp above it (found by a scan).
    assert student_t_coverage(3162.2776601683795, 6) <= 1.0
    assert student_t_coverage(27.184632681813525, 23) <= 1.0
    for df in (0, -1):
        with pytest.raises(ValueError, match=f"degrees of freedom must be >= 1, got {df}"):
            student_t_coverage(1.0, df)


@pytest.mark.parametrize(("confidence", "df", "t"), [
    (0.95, 5, 2.570582), (0.95, 6, 2.446912), (0.95, 7, 2.364624), (0.95, 8, 2.306004),
    (0.95, 10, 2.228139), (0.95, 20, 2.085963), (0.99, 3, 5.840909), (0.90, 1, 6.313752),
    (0.50, 1, 1.0), (0.50, 2, 0.816497),  # Cauchy's quartile; √(2/3) for df = 2
])
def test_quantiles_to_six_digits(confidence: float, df: int, t: float) -> None:
    assert student_t_quantile(confidence, df) == pytest.approx(t, abs=2e-6)


def test_quantile_bisects_to_full_precision() -> None:
    # df = 2 inverts in closed form: P(|T| <= t) = c  <=>  t = c·√(2 / (1 − c²)).
    for c in (0.2, 0.8, 0.95, 0.999):
        assert student_t_quantile(c, 2) == pytest.approx(c * math.sqrt(2 / (1 - c * c)), rel=1e-11)
    # df = 1: t = tan(π·c/2).
    assert student_t_quantile(0.99, 1) == pytest.approx(math.tan(math.pi * 0.99 / 2), rel=1e-11)


@pytest.mark.parametrize("confidence", [0.0, 1.0, -0.1, 1.5])
def test_quantile_refuses_a_confidence_outside_zero_one(confidence: float) -> None:
    with pytest.raises(ValueError, match=re.escape(f"confidence must be in (0, 1), got {confidence}")):
        student_t_quantile(confidence, 3)


def test_run_spread_by_hand() -> None:
    assert run_spread_half_width([], 0.95) is None
    # Two runs 0.2 and 0.4: mean 0.3, s = √(2 · 0.01 / 1) = 0.141421; t(1) at 95 % = 12.706205.
    assert run_spread_half_width([0.2, 0.4], 0.95) == pytest.approx(
        12.706205 * math.sqrt(0.02) * math.sqrt(1.5), rel=1e-6)
    # Five runs 1, 2, 3, 4, 10: mean 4, squares 9+4+1+0+36 = 50, s = √(50/4); t(4) at 90 % = 2.131847.
    assert run_spread_half_width([1.0, 2.0, 3.0, 4.0, 10.0], 0.90) == pytest.approx(
        2.131847 * math.sqrt(12.5) * math.sqrt(1.2), rel=1e-6)


def test_practical_floor_by_hand() -> None:
    # A fraction of the baseline's size, whichever its sign; the absolute floor only for durations.
    assert practical_floor(-0.4, duration=True, min_change=0.1, min_change_abs_s=0.001) == pytest.approx(0.04)
    assert practical_floor(0.0, duration=True, min_change=0.1, min_change_abs_s=0.002) == 0.002
    assert practical_floor(0.0, duration=False, min_change=0.1, min_change_abs_s=0.002) == 0.0
    assert practical_floor(3.0, duration=False, min_change=0.0, min_change_abs_s=5.0) == 0.0


def test_judge_change_at_every_bound() -> None:
    def judge(delta: float, ci: tuple[float, float], spread: float | None = None, floor: float = 0.0,
              worse_when_higher: bool = True) -> tuple[str, str]:
        return judge_change(delta, ci, spread=spread, floor=floor, worse_when_higher=worse_when_higher)

    # An interval that ends at zero includes it; one just past zero does not.
    assert judge(0.05, (0.0, 0.1)) == ("", INCLUDES_ZERO)
    assert judge(-0.05, (-0.1, 0.0)) == ("", INCLUDES_ZERO)
    assert judge(0.05, (1e-12, 0.1)) == ("regression", "")
    assert judge(-0.05, (-0.1, -1e-12)) == ("improvement", "")
    # A change exactly at the spread is within it; the spread is compared with |change|.
    assert judge(0.05, (0.01, 0.1), spread=0.05) == ("", WITHIN_RUN_SPREAD)
    assert judge(-0.05, (-0.1, -0.01), spread=0.05) == ("", WITHIN_RUN_SPREAD)
    assert judge(-0.05, (-0.1, -0.01), spread=0.049) == ("improvement", "")
    assert judge(0.05, (0.01, 0.1), spread=0.0) == ("regression", "")
    # A change exactly at the floor is flagged, below it is not; |change| again.
    assert judge(-0.05, (-0.1, -0.01), floor=0.05) == ("improvement", "")
    assert judge(-0.05, (-0.1, -0.01), floor=0.0500001) == ("", BELOW_MIN_CHANGE)
    # No change at all is never a flag, even when an interval excludes zero and there is no floor.
    assert judge(0.0, (0.01, 0.1)) == ("", BELOW_MIN_CHANGE)
    # Direction: higher is better for attainment-like rows.
    assert judge(0.05, (0.01, 0.1), worse_when_higher=False) == ("improvement", "")
    assert judge(-0.05, (-0.1, -0.01), worse_when_higher=False) == ("regression", "")
