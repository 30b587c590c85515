"""A server's Prometheus metrics over one run: histogram deltas, their quantiles, counter deltas.

A scrape is cumulative since the server started, so what the run did is `after − before`. Quantiles of
a delta histogram follow Prometheus's `histogram_quantile` exactly, so the numbers match what a
dashboard shows for the same interval:

- the rank is q × count; the bucket is the first whose cumulative count reaches the rank;
- inside that bucket the value is interpolated linearly between its lower and upper bound, assuming
  the observations are spread evenly over it (the first bucket's lower bound is 0);
- a rank in the `+Inf` bucket returns the highest finite bound (the true value is only known to be
  above it), which is why the result is reported with the width of the bucket it came from.

Interpolating inside a coarse bucket can contradict the data (vLLM's first queue-time bucket is 0.3 s:
a p50 of 150 ms with a mean of 20 µs), so each quantile is also bounded by what the sum and count allow
(`sum_limit`), and the published figure is held inside that range (`p50_range`).

A counter or histogram that went down between the two scrapes was reset (server restart): the delta is
then the later value alone, and the figure is flagged `reset`. Absent stays absent: a metric missing
from either scrape yields None, never 0.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass

from metrics.server.prometheus_json import Bounds, HistogramFiguresJSON

INF = math.inf
QUANTILES: tuple[tuple[str, float], ...] = (("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99))
INTERPOLATION = (
    "Prometheus histogram_quantile: linear within the bucket holding the rank (first bucket from 0); "
    "a rank in +Inf gives the highest finite bound; then held inside what the sum and count allow (pXX_range)"
)


@dataclass(frozen=True, slots=True)
class CumulativeHistogram:
    """Upper bounds ascending with +Inf last, the cumulative count at each bound, and the sum."""

    bounds: tuple[float, ...]
    counts: tuple[float, ...]
    total: float

    def __post_init__(self) -> None:
        if not self.bounds or self.bounds[-1] != INF:
            raise ValueError("a histogram's last bucket must be +Inf")
        if len(self.bounds) != len(self.counts):
            raise ValueError("a histogram needs one cumulative count per bound")
        if any(b <= a for a, b in zip(self.bounds, self.bounds[1:], strict=False)):
            raise ValueError(f"histogram bounds must be strictly increasing, got {self.bounds}")

    @property
    def count(self) -> float:
        return self.counts[-1]


def add_histograms(a: CumulativeHistogram, b: CumulativeHistogram) -> CumulativeHistogram:
    """Two series of one family summed (e.g. across `model_name` or `engine` labels)."""
    if a.bounds != b.bounds:
        raise ValueError("cannot add histograms with different bucket bounds")
    counts = tuple(x + y for x, y in zip(a.counts, b.counts, strict=True))
    return CumulativeHistogram(a.bounds, counts, a.total + b.total)


def histogram_delta(before: CumulativeHistogram | None, after: CumulativeHistogram) -> tuple[CumulativeHistogram, bool]:
    """What was observed between two scrapes, and whether a reset was detected."""
    if before is None:
        return after, False
    if before.bounds != after.bounds:
        return after, True  # the server was replaced by one with other buckets: a restart
    diffs = [y - x for x, y in zip(before.counts, after.counts, strict=True)]
    if any(d < 0 for d in diffs):
        return after, True
    return CumulativeHistogram(after.bounds, tuple(diffs), after.total - before.total), False


def counter_delta(before: float | None, after: float | None) -> tuple[float | None, bool]:
    """after − before; a decrease means a reset and the delta is `after`. None when `after` is absent."""
    if after is None:
        return None, False
    if before is None:
        return after, False
    if after < before:
        return after, True
    return after - before, False


def histogram_quantile(q: float, hist: CumulativeHistogram) -> float | None:
    """Prometheus's `histogram_quantile(q, ...)` over one histogram; None when it holds no observations."""
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile must be in [0, 1], got {q}")
    if hist.count <= 0:
        return None
    rank = q * hist.count
    # The +Inf bucket is never a search candidate: a rank there falls back to the last finite bound.
    b = bisect.bisect_left(hist.counts, rank, 0, len(hist.counts) - 1)
    if b == len(hist.bounds) - 1:
        return hist.bounds[-2] if len(hist.bounds) > 1 else None
    if b == 0 and hist.bounds[0] <= 0:
        return hist.bounds[0]
    start, in_bucket = 0.0, hist.counts[b]
    if b > 0:
        start = hist.bounds[b - 1]
        in_bucket -= hist.counts[b - 1]
        rank -= hist.counts[b - 1]
    end = hist.bounds[b]
    return start + (end - start) * (rank / in_bucket) if in_bucket > 0 else end


def bucket_of(value: float, bounds: Sequence[float]) -> tuple[float, float]:
    """The (lower, upper] bucket of `bounds` holding `value` (lower 0 for the first)."""
    i = bisect.bisect_left(bounds, value)
    if i >= len(bounds):
        return bounds[-1], INF
    return (bounds[i - 1] if i > 0 else 0.0), bounds[i]


def rank_bucket(q: float, hist: CumulativeHistogram) -> tuple[float, float | None] | None:
    """The (lower, upper] bucket that holds the q-rank (upper None for +Inf); None when empty."""
    if hist.count <= 0:
        return None
    b = bisect.bisect_left(hist.counts, q * hist.count)
    lower = hist.bounds[b - 1] if b > 0 else 0.0
    upper = hist.bounds[min(b, len(hist.bounds) - 1)]
    return lower, (None if upper == INF else upper)


def sum_limit(q: float, hist: CumulativeHistogram) -> float | None:
    """The highest the q-quantile can be, given the count and the sum (None when empty, or when a bucket
    starts at or below 0 so observations may be negative).

    Every observation is ≥ 0, the k − 1 smallest are each at least the lower bound of their bucket, and the
    n − k + 1 from rank k up are each at least the quantile v, so sum ≥ L + (n − k + 1) × v:
    v ≤ (sum − L) / (n − k + 1). k = ceil(q × n) + 1 (capped at n) is past the rank of every usual
    quantile definition (nearest rank, linear), so the limit holds for all of them. A 0.3 s first bucket
    and a mean of 20 µs give a p50 of at most 40 µs, where interpolation says 150 ms."""
    n = hist.count
    if n <= 0 or hist.bounds[0] <= 0:
        return None
    k = min(int(n), math.ceil(q * n) + 1)
    below, lower, prev = 0.0, 0.0, 0.0  # L: the k − 1 smallest observations at their buckets' lower bounds
    left: float = k - 1
    for bound, cumulative in zip(hist.bounds, hist.counts, strict=True):
        take = min(left, cumulative - prev)
        below += take * lower
        left -= take
        prev, lower = cumulative, bound
        if left <= 0:
            break
    return max(0.0, (hist.total - below) / (n - k + 1))


def quantile_range(q: float, hist: CumulativeHistogram) -> tuple[float, float | None] | None:
    """The [lowest, highest] the q-quantile can be: its rank's bucket, its top cut by `sum_limit` (highest
    None: nothing bounds it); None when empty."""
    bucket = rank_bucket(q, hist)
    if bucket is None:
        return None
    lower, upper = bucket
    limit = sum_limit(q, hist)
    if limit is not None:
        upper = max(lower, limit if upper is None else min(upper, limit))
    return lower, upper


def _quantile(q: float, hist: CumulativeHistogram) -> tuple[float | None, Bounds | None, Bounds | None]:
    """A quantile's value, the bucket its rank fell in and the range the data allows."""
    value = histogram_quantile(q, hist)
    where = rank_bucket(q, hist)
    allowed = quantile_range(q, hist)
    if value is not None and allowed is not None:
        value = max(allowed[0], value if allowed[1] is None else min(value, allowed[1]))
    return value, list(where) if where is not None else None, list(allowed) if allowed is not None else None


def histogram_figures(hist: CumulativeHistogram, *, reset: bool = False) -> HistogramFiguresJSON:
    """count, sum, mean and the quantiles of a (delta) histogram, each with the bucket its rank fell in and
    the range the data allows (`p50_range`); the quantile itself is histogram_quantile's interpolation
    held inside that range, never a figure the sum and count contradict."""
    (p50, p50_bucket, p50_range), (p90, p90_bucket, p90_range), (p95, p95_bucket, p95_range), \
        (p99, p99_bucket, p99_range) = (_quantile(q, hist) for _, q in QUANTILES)
    out: HistogramFiguresJSON = {
        "count": hist.count, "sum": hist.total, "mean": hist.total / hist.count if hist.count > 0 else None,
        "p50": p50, "p50_bucket": p50_bucket, "p50_range": p50_range,
        "p90": p90, "p90_bucket": p90_bucket, "p90_range": p90_range,
        "p95": p95, "p95_bucket": p95_bucket, "p95_range": p95_range,
        "p99": p99, "p99_bucket": p99_bucket, "p99_range": p99_range}
    if reset:
        out["reset"] = True
    return out


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """numerator / denominator, None when either is absent or the denominator is 0."""
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator
