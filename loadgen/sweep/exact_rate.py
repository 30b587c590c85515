"""An open-loop point's schedule drawn so that it realises its nominal rate over the point.

A Poisson schedule of a few tens of requests realises its rate only roughly: the count in the window and
the span between its first and last send are random, and one seed draws the same unit gaps at every
point, so every point of a sweep or search is off by the same factor (a nominal 2 req/s that realised
1.28). The search and the pages attribute each point's attainment to its rate, so a point must offer
that rate.

So a point's schedule keeps the process's shape (the same gamma gaps: Poisson, or bursty) but fixes its
counts: the measurement window [warm-up, end) holds `round(rate · window)` requests, the first exactly
at the warm-up's end and the last `(count − 1) / rate` after it, so the offered rate of the window
(`offered_rps`: count − 1 intervals over the span of intended sends) is the rate exactly; the warm-up
holds `round(rate · warm-up)` requests from 0, spread over it the same way. A count-bound point
(`--point-requests`) keeps its count. Given the counts, this is what a Poisson process is: its arrivals
in an interval, conditioned on their number, lie as the normalised sums of exponential gaps do.
"""

from __future__ import annotations

import numpy as np

from loadgen.sweep.points import PointPlan
from loadgen.workload import Arrival, gamma_gaps

# What sweep.json and capacity.json say about the rate each open-loop point is judged and plotted at.
RATE_BASIS = ("realised: each open-loop point's schedule is drawn so that its measurement window offers "
              "exactly its rate (offered_rps = rate), so attainment is judged at the rate the server was sent")


def _spread(rng: np.random.Generator, arrival: Arrival, count: int, span_s: float, *, closed: bool) -> np.ndarray:
    """`count` offsets from 0 with gamma gaps scaled to `span_s`: the last at `span_s` when `closed`, else
    one more gap (not sent) ends there."""
    if count == 0:
        return np.empty(0)
    burst = 1.0 if arrival.kind == "poisson" else arrival.burstiness
    gaps = gamma_gaps(1.0, burst, count - 1 if closed else count, rng)
    total = float(gaps.sum())
    if total <= 0:  # one request, or gaps that underflowed: spread evenly
        return np.linspace(0.0, span_s, count, endpoint=closed)
    sums = np.concatenate(([0.0], np.cumsum(gaps)))[:count]
    return sums * (span_s / total)


def exact_rate_offsets(point: PointPlan, arrival: Arrival) -> np.ndarray | None:
    """The point's intended send offsets (seconds from the anchor), or None when its own schedule already
    realises its rate (constant) or it has none (closed loop)."""
    if not point.open_loop or arrival.kind not in ("poisson", "gamma"):
        return None
    rate, warmup = point.value, point.warmup_s
    if point.duration_s is not None:
        window = max(0.0, point.duration_s - warmup)
        n_warm, n_window = round(rate * warmup), round(rate * window)
        if point.requests is not None:
            n_warm = min(n_warm, point.requests)
            n_window = min(n_window, point.requests - n_warm)
    else:
        assert point.requests is not None  # a point has a duration or a count
        n_warm = min(point.requests, round(rate * warmup))
        n_window = point.requests - n_warm
    if n_warm + n_window == 0:
        n_window = 1  # a point sends something: an empty one says "too short", not "could not run"
    rng = np.random.default_rng(point.seed)
    warm = _spread(rng, arrival, n_warm, warmup, closed=False)
    measured = warmup + _spread(rng, arrival, n_window, (n_window - 1) / rate, closed=True)
    return np.concatenate((warm, measured))
