"""Histogram bucket boundaries for the exported latency histograms.

prometheus_client's default buckets stop at 10 s, far too short for LLM requests, and too coarse for
inter-token gaps. The latency ladder runs from 1 ms to 10 minutes; dispatch lag starts at 50 µs because
a healthy client schedules well under a millisecond late. Every configured SLO threshold is inserted
as an exact boundary, so `rate(..._bucket{le="<threshold>"})` counts the requests within the SLO with no
interpolation at all.
"""

from __future__ import annotations

from collections.abc import Iterable

LATENCY_LADDER_S: tuple[float, ...] = (
    0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4,
    0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 7.5, 10.0, 15.0, 20.0, 30.0, 45.0, 60.0, 90.0, 120.0, 180.0,
    300.0, 600.0,
)  # fmt: skip
LAG_LADDER_S: tuple[float, ...] = (
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0, 30.0, 60.0,
)  # fmt: skip

# Tokens per request (reasoning tokens): powers of two from 16 to 64k; tool calls per request, from 0.
TOKEN_LADDER: tuple[float, ...] = tuple(float(2**e) for e in range(4, 17))
CALLS_LADDER: tuple[float, ...] = (0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 8.0, 16.0, 32.0)


def with_thresholds(ladder: Iterable[float], thresholds: Iterable[float | None]) -> tuple[float, ...]:
    """The ladder plus every given threshold as an exact boundary, ascending, without duplicates.

    Thresholds must be finite and > 0 (an SLO of 0 s or a negative one is a configuration error).
    """
    bounds = {float(b) for b in ladder}
    for t in thresholds:
        if t is None:
            continue
        value = float(t)
        if not value > 0 or value == float("inf"):
            raise ValueError(f"histogram threshold must be a finite number > 0, got {t!r}")
        bounds.add(value)
    if not bounds:
        raise ValueError("a histogram needs at least one finite bucket boundary")
    return tuple(sorted(bounds))


def latency_buckets(thresholds: Iterable[float | None] = ()) -> tuple[float, ...]:
    """Boundaries for TTFT / ITL / TPOT / E2E: 1 ms … 10 min plus the SLO thresholds."""
    return with_thresholds(LATENCY_LADDER_S, thresholds)


def lag_buckets(thresholds: Iterable[float | None] = ()) -> tuple[float, ...]:
    """Boundaries for dispatch lag: 50 µs … 1 min plus the lag (client saturation) threshold."""
    return with_thresholds(LAG_LADDER_S, thresholds)
