"""Test oracles for a proportion's confidence interval, written from the textbook definitions and
independent of metrics.capacity_search.proportion: 'is the target at or below the interval's lower end?'"""

from __future__ import annotations

import math

Z95 = 1.959963984540054  # the standard normal quantile at 0.975 (tables), for 95 % two-sided


def z_two_sided(confidence: float) -> float:
    """The z with P(|Z| <= z) = confidence, by bisection on the normal CDF written with erf."""
    lo, hi = 0.0, 10.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if math.erf(mid / math.sqrt(2)) < confidence:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def wilson_lower(good: int, n: int, confidence: float) -> float:
    """The Wilson score interval's lower end: the smaller root p of (p̂ − p)² = z²·p(1 − p)/n."""
    z2 = z_two_sided(confidence) ** 2
    phat = good / n
    # (1 + z²/n)·p² − (2p̂ + z²/n)·p + p̂² = 0
    a, b, c = 1 + z2 / n, -(2 * phat + z2 / n), phat * phat
    return (-b - math.sqrt(b * b - 4 * a * c)) / (2 * a)


def upper_tail(good: int, n: int, p: float) -> float:
    """P(X >= good) for X ~ Binomial(n, p), summed in log space (n in the thousands is fine)."""
    if p <= 0:
        return 1.0 if good <= 0 else 0.0
    if p >= 1:
        return 1.0
    total = 0.0
    for k in range(good, n + 1):
        log_term = (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
                    + k * math.log(p) + (n - k) * math.log1p(-p))
        total += math.exp(log_term)
    return total


def lower_end_at_or_above(target: float, good: int, n: int, confidence: float, method: str) -> bool:
    """Whether the two-sided interval of good/n at `confidence` starts at or above `target`.

    Wilson: its lower end, solved by hand. Clopper–Pearson: its lower end L solves P(X >= good | L) =
    (1 − c)/2 and that tail grows with p, so L >= target iff the tail at the target is at most (1 − c)/2.
    """
    if method == "wilson":
        return wilson_lower(good, n, confidence) >= target - 1e-12
    return upper_tail(good, n, target) <= (1 - confidence) / 2 + 1e-12
