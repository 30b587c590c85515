"""Intervals of a proportion (SLO attainment): Wilson and Clopper–Pearson against known values."""

from __future__ import annotations

import math

import pytest

from metrics.capacity_search.proportion import (
    beta_quantile,
    clopper_pearson_interval,
    proportion_interval,
    regularized_beta,
    two_sided_z,
    wilson_interval,
)


def _binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), summed exactly."""
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))


def test_z_of_the_usual_confidences() -> None:
    assert two_sided_z(0.95) == pytest.approx(1.959964, abs=1e-6)
    assert two_sided_z(0.99) == pytest.approx(2.575829, abs=1e-6)
    assert two_sided_z(0.90) == pytest.approx(1.644854, abs=1e-6)


@pytest.mark.parametrize(("a", "b", "x", "expected"), [
    (0.5, 0.5, 0.3, 2 / math.pi * math.asin(math.sqrt(0.3))),  # the arcsine distribution
    (1.0, 1.0, 0.37, 0.37),  # uniform
    (2.0, 1.0, 0.6, 0.36),  # x^a when b = 1
    (1.0, 3.0, 0.2, 1 - 0.8**3),  # 1 - (1 - x)^b when a = 1
])
def test_regularized_beta_closed_forms(a: float, b: float, x: float, expected: float) -> None:
    assert regularized_beta(a, b, x) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(("k", "n", "p"), [(3, 10, 0.2), (30, 100, 0.35), (90, 100, 0.93), (1, 50, 0.001),
                                           (499, 500, 0.995)])
def test_regularized_beta_is_the_binomial_tail(k: int, n: int, p: float) -> None:
    # P(X >= k) = I_p(k, n - k + 1): the identity Clopper–Pearson rests on.
    assert regularized_beta(k, n - k + 1, p) == pytest.approx(_binomial_tail(k, n, p), rel=1e-9, abs=1e-15)


def test_beta_quantile_inverts_the_cdf() -> None:
    for a, b, q in ((3.0, 8.0, 0.025), (90.0, 11.0, 0.975), (0.7, 2.5, 0.5)):
        assert regularized_beta(a, b, beta_quantile(q, a, b)) == pytest.approx(q, abs=1e-12)


@pytest.mark.parametrize(("k", "n", "lower", "upper"), [
    (5, 10, 0.187086, 0.812914),  # the textbook 5 of 10
    (0, 10, 0.0, 1 - 0.025 ** (1 / 10)),  # closed form at k = 0
    (10, 10, 0.025 ** (1 / 10), 1.0),  # and at k = n
    (1, 20, 1 - 0.975 ** (1 / 20), None),  # k = 1: P(X >= 1) = 1 - (1 - p)^n = 0.025
])
def test_clopper_pearson_known_values(k: int, n: int, lower: float, upper: float | None) -> None:
    lo, hi = clopper_pearson_interval(k, n, 0.95)
    assert lo == pytest.approx(lower, abs=1e-6)
    if upper is not None:
        assert hi == pytest.approx(upper, abs=1e-6)


def test_clopper_pearson_tails_are_exact() -> None:
    k, n = 87, 100
    lo, hi = clopper_pearson_interval(k, n, 0.95)
    assert _binomial_tail(k, n, lo) == pytest.approx(0.025, abs=1e-9)  # P(X >= k | lower) = 2.5 %
    assert 1 - _binomial_tail(k + 1, n, hi) == pytest.approx(0.025, abs=1e-9)  # P(X <= k | upper) = 2.5 %


@pytest.mark.parametrize(("k", "n", "lower", "upper"), [
    (5, 10, 0.236593, 0.763407),  # Wilson's 5 of 10
    (0, 10, 0.0, 0.277533),  # upper = z²/n / (1 + z²/n) at k = 0
    (9, 10, 0.595850, 0.982124),  # worked by hand from the formula
    (45, 50, 0.786398, 0.956524),
])
def test_wilson_known_values(k: int, n: int, lower: float, upper: float) -> None:
    lo, hi = wilson_interval(k, n, 0.95)
    assert (lo, hi) == (pytest.approx(lower, abs=1e-6), pytest.approx(upper, abs=1e-6))


def test_wilson_matches_its_formula() -> None:
    k, n, z = 37, 41, two_sided_z(0.9)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert wilson_interval(k, n, 0.9) == (pytest.approx(centre - half), pytest.approx(centre + half))


@pytest.mark.parametrize("method", ["wilson", "clopper-pearson"])
def test_intervals_behave(method: str) -> None:
    for k, n in ((0, 1), (3, 7), (50, 50), (912, 1000)):
        lo, hi = proportion_interval(k, n, 0.95, method)  # type: ignore[arg-type]
        assert 0.0 <= lo <= k / n <= hi <= 1.0
        mirror = proportion_interval(n - k, n, 0.95, method)  # type: ignore[arg-type]
        assert (lo, hi) == (pytest.approx(1 - mirror[1]), pytest.approx(1 - mirror[0]))
        wide = proportion_interval(k, n, 0.99, method)  # type: ignore[arg-type]
        assert wide[0] <= lo and wide[1] >= hi
    assert proportion_interval(0, 0, 0.95, method) == (0.0, 1.0)  # type: ignore[arg-type]


def test_exact_interval_is_the_wider() -> None:
    for k, n in ((5, 10), (45, 50), (480, 500)):
        w, cp = wilson_interval(k, n), clopper_pearson_interval(k, n)
        assert cp[0] <= w[0] and cp[1] >= w[1]


def test_bad_input_is_refused() -> None:
    for args in ((11, 10, 0.95), (-1, 10, 0.95), (5, 10, 1.0), (5, 10, 0.0)):
        with pytest.raises(ValueError):
            wilson_interval(*args)
        with pytest.raises(ValueError):
            clopper_pearson_interval(*args)
    with pytest.raises(ValueError, match="unknown interval"):
        proportion_interval(1, 2, 0.95, "agresti")  # type: ignore[arg-type]
