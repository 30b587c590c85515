"""An open-loop point's schedule realises its nominal rate over its measurement window exactly, at every
rate and seed (a Poisson draw of a few tens of requests realised 1.02 of a nominal 2 req/s), and keeps
the process's randomness."""

from __future__ import annotations

import numpy as np
import pytest

from loadgen.sweep.exact_rate import exact_rate_offsets
from loadgen.sweep.points import PointLength, plan_point
from loadgen.workload.arrivals import Arrival, parse_arrival, schedule


def _poisson(rate: float) -> Arrival:
    return parse_arrival("poisson", rate=rate, burstiness=1.0, rate_end=None, concurrency=None)


def _offered(offsets: np.ndarray, warmup: float) -> float:
    """offered_rps as the summary measures it: (measured − 1) over the span of their intended sends."""
    window = offsets[offsets >= warmup]
    return (window.size - 1) / float(window.max() - window.min())


def test_the_plain_draw_misses_the_rate_and_the_exact_one_does_not() -> None:
    point = plan_point(1, "rate", 2.0, PointLength(8.0, None), seed=0)
    arrival = _poisson(2.0)
    plain = schedule(arrival, duration_s=8.0, count=None, seed=0)
    assert abs(_offered(plain, point.warmup_s) - 2.0) > 0.2  # what a point was sent before
    exact = exact_rate_offsets(point, arrival)
    assert exact is not None
    assert _offered(exact, point.warmup_s) == pytest.approx(2.0, rel=1e-9)


@pytest.mark.parametrize("rate", [0.5, 2.0, 4.0, 6.0, 11.2, 148.0])
@pytest.mark.parametrize("seed", range(5))
def test_every_point_realises_its_rate_within_its_duration(rate: float, seed: int) -> None:
    point = plan_point(1, "rate", rate, PointLength(8.0, None), seed=seed)
    offsets = exact_rate_offsets(point, _poisson(rate))
    assert offsets is not None
    assert np.all(np.diff(offsets) >= 0) and offsets[0] >= 0 and offsets[-1] < 8.0
    window = offsets[offsets >= point.warmup_s]
    assert window.size == round(rate * (8.0 - point.warmup_s))
    assert offsets.size - window.size == round(rate * point.warmup_s)
    if window.size >= 2:
        assert _offered(offsets, point.warmup_s) == pytest.approx(rate, rel=1e-9)


def test_a_count_bound_point_keeps_its_count_and_rate() -> None:
    point = plan_point(1, "rate", 5.0, PointLength(None, 100), seed=3)
    offsets = exact_rate_offsets(point, _poisson(5.0))
    assert offsets is not None and offsets.size == 100
    assert _offered(offsets, point.warmup_s) == pytest.approx(5.0, rel=1e-9)


def test_the_gaps_stay_random_and_differ_by_seed() -> None:
    a = exact_rate_offsets(plan_point(1, "rate", 10.0, PointLength(60.0, None), seed=0), _poisson(10.0))
    b = exact_rate_offsets(plan_point(1, "rate", 10.0, PointLength(60.0, None), seed=1), _poisson(10.0))
    assert a is not None and b is not None and not np.allclose(a, b)
    gaps = np.diff(a[a >= 6.0])
    assert 0.8 < gaps.std() / gaps.mean() < 1.2  # exponential gaps: coefficient of variation 1


def test_constant_arrivals_and_closed_loops_keep_their_own_schedule() -> None:
    constant = parse_arrival("constant", rate=4.0, burstiness=1.0, rate_end=None, concurrency=None)
    assert exact_rate_offsets(plan_point(1, "rate", 4.0, PointLength(5.0, None), seed=0), constant) is None
    closed = plan_point(0, "concurrency", 8.0, PointLength(5.0, None), seed=0)
    assert exact_rate_offsets(closed, _poisson(4.0)) is None
