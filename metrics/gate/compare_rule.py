"""When `goodput compare` flags a row: three questions, each a formula of its own.

A run's statistic (say TTFT p50) varies for two reasons. *Sampling noise*: the run measured a few hundred
requests, not all possible ones; the bootstrap over requests (metrics.gate.compare) measures it. *Run-to-run
noise*: a whole run shifts because the machine was busier, the server warmer, a neighbour noisier; no
resampling inside one run can see it, only repeated runs of the same configuration can. A change is
flagged only when it is larger than both, and large enough to matter:

1. the bootstrap interval of the change excludes zero (sampling noise; Bonferroni over the rows);
2. with k >= 2 baseline runs, the candidate lies outside the prediction interval for one more run of the
   baseline configuration: |change| > t(k-1) · s · sqrt(1 + 1/k), where s is the standard deviation of
   the k baseline values and t(k-1) Student's quantile at the table's confidence. s holds both kinds of
   noise, and t pays for estimating it from few runs (two runs give a wide band; three to five are a
   useful minimum). Not Bonferroni-adjusted: a run-level shift moves all rows of a run together, so the
   rows are not separate chances of a false flag, and adjusting would leave few runs unable to flag
   anything;
3. |change| >= max(min_change · |baseline|, min_change_abs), the absolute floor for durations only —
   below it a change is not worth a failed pipeline even when it is real (and a few percent is the
   drift between runs on one machine).

With one baseline run, (2) cannot be asked: the output says so, since a flag may then be run-to-run noise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

Flag = Literal["", "regression", "improvement"]
DEFAULT_MIN_CHANGE = 0.05
DEFAULT_MIN_CHANGE_ABS_S = 0.001

# Why a row with an interval is not flagged (shown in the table's last column).
INCLUDES_ZERO = "n.s."
WITHIN_RUN_SPREAD = "within run-to-run spread"
BELOW_MIN_CHANGE = "below min change"


def student_t_coverage(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with an integer number of degrees of freedom (exact finite series)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if t <= 0:
        return 0.0
    theta = math.atan(t / math.sqrt(df))
    c, s = math.cos(theta), math.sin(theta)
    if df % 2 == 0:  # sin θ · Σ_j (1·3···(2j−1))/(2·4···2j) cos^2j θ, j = 0 … df/2 − 1
        term, total = 1.0, 1.0
        for j in range(1, df // 2):
            term *= (2 * j - 1) / (2 * j) * c * c
            total += term
        return min(1.0, s * total)
    # odd: (2/π)(θ + sin θ cos θ · Σ_j (2·4···2j)/(3·5···(2j+1)) cos^2j θ, j = 0 … (df−3)/2)
    series = 0.0
    if df > 1:
        term, series = 1.0, 1.0
        for j in range(1, (df - 1) // 2):
            term *= (2 * j) / (2 * j + 1) * c * c
            series += term
    return min(1.0, 2.0 / math.pi * (theta + s * c * series))


def student_t_quantile(confidence: float, df: int) -> float:
    """The t with P(|T| <= t) = confidence (two-sided), by bisection on the exact coverage."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    hi = 1.0
    while student_t_coverage(hi, df) < confidence:
        hi *= 2.0
    lo = 0.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if student_t_coverage(mid, df) < confidence:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return (lo + hi) / 2.0


def run_spread_half_width(baseline_values: Sequence[float], confidence: float) -> float | None:
    """Half-width of the prediction interval for one more baseline run around the baselines' mean:
    t(k−1) · s · sqrt(1 + 1/k). None with fewer than two runs (no spread to measure)."""
    k = len(baseline_values)
    if k < 2:
        return None
    mean = sum(baseline_values) / k
    s = math.sqrt(sum((v - mean) ** 2 for v in baseline_values) / (k - 1))
    return student_t_quantile(confidence, k - 1) * s * math.sqrt(1.0 + 1.0 / k)


def practical_floor(baseline: float, *, duration: bool, min_change: float, min_change_abs_s: float) -> float:
    """The smallest change worth flagging: a fraction of the baseline, and for durations at least an
    absolute amount (seconds)."""
    return max(min_change * abs(baseline), min_change_abs_s if duration else 0.0)


def judge_change(
    delta: float,
    ci: tuple[float, float],
    *,
    spread: float | None,
    floor: float,
    worse_when_higher: bool,
) -> tuple[Flag, str]:
    """(flag, why not) for a row with a bootstrap interval `ci` of its change `delta`."""
    if ci[0] <= 0.0 <= ci[1]:
        return "", INCLUDES_ZERO
    if spread is not None and abs(delta) <= spread:
        return "", WITHIN_RUN_SPREAD
    if abs(delta) < floor or delta == 0.0:
        return "", BELOW_MIN_CHANGE
    return ("regression" if (delta > 0) == worse_when_higher else "improvement"), ""
