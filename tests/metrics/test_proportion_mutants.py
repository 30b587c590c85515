"""capacity_search.proportion at its edges: the beta function's domain and ends, the quantile's levels 0
and 1, and Clopper–Pearson for a single request, all from closed forms (I_x(a, 1) = x^a,
I_x(1, b) = 1 − (1 − x)^b)."""

from __future__ import annotations

import math
import re

import pytest

from metrics.capacity_search.proportion import (
    beta_quantile,
    clopper_pearson_interval,
    proportion_interval,
    regularized_beta,
    two_sided_z,
    wilson_interval,
)


@pytest.mark.parametrize(("a", "b"), [(0.0, 1.0), (1.0, 0.0), (0.0, 0.0), (-1.0, 2.0), (2.0, -1.0)])
def test_beta_parameters_must_be_positive(a: float, b: float) -> None:
    with pytest.raises(ValueError, match=f"beta parameters must be positive, got {a}, {b}"):
        regularized_beta(a, b, 0.5)


def test_regularized_beta_at_and_beyond_its_ends() -> None:
    for x in (0.0, -0.5):
        assert regularized_beta(2.0, 3.0, x) == 0.0
    for x in (1.0, 1.5):
        assert regularized_beta(2.0, 3.0, x) == 1.0
    # Both branches of the continued fraction: x^3 below the switch point (a + 1)/(a + b + 2) = 2/3 ...
    assert regularized_beta(3.0, 1.0, 0.5) == pytest.approx(0.125, abs=1e-14)
    # ... and above it, 1 − (1 − x)^4 at x = 0.9.
    assert regularized_beta(1.0, 4.0, 0.9) == pytest.approx(1 - 0.1**4, abs=1e-14)


def test_beta_quantile_levels_zero_and_one() -> None:
    # I_x(a, b) is 0 only at x = 0 and 1 only at x = 1; with a = 50, x^50 underflows below x ≈ 1e-6,
    # which a bisection that also moves up on I_x = q would mistake for level 0.
    assert beta_quantile(0.0, 50.0, 2.0) == pytest.approx(0.0, abs=1e-15)
    assert beta_quantile(1.0, 2.0, 2.0) == pytest.approx(1.0, abs=1e-6)
    # I_x(a, 1) = x^a: the median of Beta(2, 1) is √0.5.
    assert beta_quantile(0.5, 2.0, 1.0) == pytest.approx(math.sqrt(0.5), abs=1e-12)
    for q in (-0.01, 1.01, 1.5, 2.0):
        with pytest.raises(ValueError, match=rf"quantile level must be in \[0, 1\], got {q}"):
            beta_quantile(q, 2.0, 2.0)


def test_clopper_pearson_of_one_request() -> None:
    # n = 1: P(X >= 1 | p) = p, so the lower end of 1 of 1 is the tail 0.025 itself; 0 of 1 mirrors it.
    assert clopper_pearson_interval(1, 1, 0.95) == (pytest.approx(0.025, abs=1e-12), 1.0)
    assert clopper_pearson_interval(0, 1, 0.95) == (0.0, pytest.approx(0.975, abs=1e-12))
    # n = 2, k = 1: lower solves 1 − (1 − p)² = 0.05 (90 %: 5 % per side); upper is its mirror.
    lower = 1 - math.sqrt(0.95)
    assert clopper_pearson_interval(1, 2, 0.90) == (pytest.approx(lower, abs=1e-12),
                                                    pytest.approx(1 - lower, abs=1e-12))
    assert clopper_pearson_interval(0, 0, 0.95) == (0.0, 1.0)


def test_wilson_of_one_request() -> None:
    # 1 of 1: lower = n / (n + z²) (the smaller root of (1 − p)² = z²·p(1 − p)/n).
    z = 1.959963984540054
    assert wilson_interval(1, 1, 0.95) == (pytest.approx(1 / (1 + z * z), abs=1e-12), 1.0)
    assert proportion_interval(1, 1, 0.95, "wilson") == wilson_interval(1, 1, 0.95)


@pytest.mark.parametrize("n", range(1, 60))
def test_wilson_ends_are_exact_at_none_and_all(n: int) -> None:
    # At k = 0 the lower end is 0 and at k = n the upper end is 1 exactly: the closed form's centre ∓ half
    # only reaches them up to rounding (for n = 10 or 13 it misses by one ulp), and a capacity search's
    # verdict reads these ends.
    assert wilson_interval(0, n, 0.95)[0] == 0.0
    assert wilson_interval(n, n, 0.95)[1] == 1.0
    assert clopper_pearson_interval(0, n, 0.95)[0] == 0.0
    assert clopper_pearson_interval(n, n, 0.95)[1] == 1.0


@pytest.mark.parametrize("confidence", [0.0, 1.0, -0.5, 1.5])
def test_confidence_outside_the_open_interval_is_refused(confidence: float) -> None:
    message = re.escape(f"confidence must be in (0, 1), got {confidence}")
    with pytest.raises(ValueError, match=message):
        two_sided_z(confidence)
    with pytest.raises(ValueError, match=message):
        wilson_interval(1, 2, confidence)


@pytest.mark.parametrize(("k", "n"), [(11, 10), (-1, 10), (0, -1), (-2, -1)])
def test_counts_outside_zero_to_n_are_refused(k: int, n: int) -> None:
    for interval in (wilson_interval, clopper_pearson_interval):
        with pytest.raises(ValueError, match=re.escape(f"need 0 <= successes <= n, got {k} of {n}")):
            interval(k, n, 0.95)


def test_the_method_reaches_its_interval_with_its_confidence() -> None:
    # Clopper–Pearson 1 of 2 at 90 %: 1 − √0.95 (see above); at the default 95 % it would be 1 − √0.975.
    lo, hi = proportion_interval(1, 2, 0.90, "clopper-pearson")
    assert lo == pytest.approx(1 - math.sqrt(0.95), abs=1e-12) and hi == pytest.approx(math.sqrt(0.95), abs=1e-12)
    # Wilson 1 of 1 at 90 %: 1 / (1 + z²) with z = 1.644854.
    z90 = 1.6448536269514722
    assert proportion_interval(1, 1, 0.90, "wilson")[0] == pytest.approx(1 / (1 + z90**2), abs=1e-12)
    with pytest.raises(ValueError, match=re.escape(
            "unknown interval method 'agresti'; choose wilson or clopper-pearson")):
        proportion_interval(1, 2, 0.95, "agresti")  # type: ignore[arg-type]
