"""Confidence intervals for a proportion: SLO attainment is `good` successes out of `n` measured requests.

Two intervals, both two-sided at confidence `c` (each side misses with probability at most (1 − c)/2):

- **Wilson score** (the default of `goodput capacity`): the set of p for which the normal test of the
  observed proportion does not reject, solved in closed form,
  centre = (p̂ + z²/2n) / (1 + z²/n), half-width = z / (1 + z²/n) · √(p̂(1 − p̂)/n + z²/4n²),
  with z the standard normal quantile at 1 − (1 − c)/2. Close to nominal coverage even near 0 and 1,
  where the plain p̂ ± z·√(p̂(1 − p̂)/n) collapses to a point.
- **Clopper–Pearson** ("exact"): the p at which the binomial tail of the observation is exactly
  (1 − c)/2, i.e. lower = Beta⁻¹((1 − c)/2; k, n − k + 1), upper = Beta⁻¹(1 − (1 − c)/2; k + 1, n − k),
  with 0 and 1 at the ends. Never below nominal coverage, hence wider.

Both assume the n outcomes are independent draws with one success probability. Requests of one load
test are not quite that (a queue that builds up makes its neighbours late together); docs/capacity-search.md
says what that means for the search.

The inverse of the regularised incomplete beta function is found by bisection on its continued-fraction
evaluation, so no statistics library is needed.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Literal

Method = Literal["wilson", "clopper-pearson"]
METHODS: tuple[Method, ...] = ("wilson", "clopper-pearson")

_CF_MAX_TERMS = 400
_CF_EPS = 1e-15
_TINY = 1e-300
_BISECTION_STEPS = 80  # 2^-80 of [0, 1]: far below any figure a report shows


def _check(successes: int, n: int, confidence: float) -> None:
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


def two_sided_z(confidence: float) -> float:
    """The standard normal quantile z with P(|Z| ≤ z) = confidence (1.959964 at 0.95)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of successes / n; (0, 1) when n is 0 (nothing is known)."""
    _check(successes, n, confidence)
    if n == 0:
        return 0.0, 1.0
    z = two_sided_z(confidence)
    p = successes / n
    z2n = z * z / n
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n))
    # At k = 0 and k = n one end is exactly 0 or 1; rounding must not move it off.
    lower = 0.0 if successes == 0 else max(0.0, centre - half)
    upper = 1.0 if successes == n else min(1.0, centre + half)
    return lower, upper


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b) (its even and odd terms, evaluated by the modified Lentz
    method); converges fast for x < (a + 1) / (a + b + 2)."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    result = d
    for m in range(1, _CF_MAX_TERMS + 1):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            result *= c * d
        if abs(c * d - 1.0) < _CF_EPS:
            break
    return result


def regularized_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the CDF at x of a Beta(a, b) variable (a, b > 0)."""
    if a <= 0 or b <= 0:
        raise ValueError(f"beta parameters must be positive, got {a}, {b}")
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_continued_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_continued_fraction(b, a, 1.0 - x) / b


def beta_quantile(q: float, a: float, b: float) -> float:
    """The x with I_x(a, b) = q, by bisection (I_x is increasing in x)."""
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile level must be in [0, 1], got {q}")
    lo, hi = 0.0, 1.0
    for _ in range(_BISECTION_STEPS):
        mid = (lo + hi) / 2.0
        if regularized_beta(a, b, mid) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def clopper_pearson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Clopper–Pearson interval of successes / n; (0, 1) when n is 0."""
    _check(successes, n, confidence)
    if n == 0:
        return 0.0, 1.0
    tail = (1.0 - confidence) / 2.0
    k = successes
    lower = 0.0 if k == 0 else beta_quantile(tail, k, n - k + 1)
    upper = 1.0 if k == n else beta_quantile(1.0 - tail, k + 1, n - k)
    return lower, upper


def proportion_interval(successes: int, n: int, confidence: float, method: Method) -> tuple[float, float]:
    if method == "wilson":
        return wilson_interval(successes, n, confidence)
    if method == "clopper-pearson":
        return clopper_pearson_interval(successes, n, confidence)
    raise ValueError(f"unknown interval method {method!r}; choose {' or '.join(METHODS)}")
