"""Arrival processes: what mutation testing found unguarded (docs/testing.md). Expected schedules are
solved by hand here (the ramp's quadratic, i / rate), never read from the code under test."""

from __future__ import annotations

import math

import numpy as np
import pytest

from loadgen.workload.arrivals import Arrival, parse_arrival, ramp_offsets, schedule


def arrival(kind: str, *, rate: float | None = None, burstiness: float = 1.0, rate_end: float | None = None,
            concurrency: int | None = None) -> Arrival:
    return parse_arrival(kind, rate=rate, burstiness=burstiness, rate_end=rate_end, concurrency=concurrency)


def test_every_kind_has_a_readable_name() -> None:
    assert str(arrival("ramp", rate=1.0, rate_end=3.0)) == "ramp@1.00-3.00"
    assert str(arrival("concurrency", concurrency=8, rate=2.5)) == "concurrency@8:cap=2.5"
    assert str(arrival("trace")) == "trace"
    assert str(arrival("trace", rate=2.0)) == "trace@2.00"
    assert str(arrival("constant", rate=4.0)) == "constant@4.00"


def test_parsed_arrivals_keep_what_was_asked() -> None:
    assert arrival("concurrency", concurrency=1) == Arrival("concurrency", rate=0.0, concurrency=1)
    assert arrival("concurrency", concurrency=4, rate=2.5) == Arrival("concurrency", rate=2.5, concurrency=4)
    assert arrival("trace") == Arrival("trace", rate=0.0)
    assert arrival("trace", rate=0.0) == Arrival("trace", rate=0.0)
    assert arrival("trace", rate=0.5) == Arrival("trace", rate=0.5)
    assert arrival("trace", rate=2.5) == Arrival("trace", rate=2.5)
    assert arrival("ramp", rate=1.0, rate_end=0.5) == Arrival("ramp", rate=1.0, rate_end=0.5)


@pytest.mark.parametrize(("kind", "kw", "message"), [
    ("weibull", {"rate": 1.0},
     "unknown arrival process 'weibull'; choose one of constant, poisson, gamma, ramp, concurrency, trace"),
    ("concurrency", {"concurrency": 0}, "--arrival concurrency needs --concurrency N with N >= 1"),
    ("concurrency", {"concurrency": 2, "rate": -1.0},
     "--rate (the cap of --arrival concurrency) must be a positive number of requests/s, got -1"),
    ("concurrency", {"concurrency": 2, "rate": math.inf},
     "--rate (the cap of --arrival concurrency) must be a positive number of requests/s, got inf"),
    ("trace", {"rate": -1.0}, "--rate must be a positive number of requests/s to rescale a trace, got -1"),
    ("trace", {"rate": math.inf}, "--rate must be a positive number of requests/s to rescale a trace, got inf"),
    ("poisson", {"rate": 0.0}, "--rate must be a positive number of requests/s for --arrival poisson, got 0"),
    ("constant", {}, "--rate must be a positive number of requests/s for --arrival constant"),
    ("ramp", {"rate": 1.0},
     "--arrival ramp needs --rate-end: the rate (requests/s) it reaches at the end of --duration"),
    ("ramp", {"rate": 1.0, "rate_end": 0.0}, "--rate-end must be a positive number of requests/s, got 0"),
    ("ramp", {"rate": 1.0, "rate_end": math.inf}, "--rate-end must be a positive number of requests/s, got inf"),
])
def test_refusals_say_exactly_what_is_wrong(kind: str, kw: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError) as refused:
        arrival(kind, **kw)  # type: ignore[arg-type]
    assert str(refused.value) == message


@pytest.mark.parametrize(("make", "message"), [
    (lambda: arrival("concurrency", concurrency=2), "closed-loop runs have no schedule"),
    (lambda: arrival("trace"), "a trace replay's schedule comes from its file (loadgen.workload.schedule)"),
    (lambda: arrival("ramp", rate=1.0, rate_end=2.0), "--arrival ramp needs --duration (the ramp's length)"),
])
def test_schedules_that_cannot_be_drawn(make: object, message: str) -> None:
    with pytest.raises(ValueError) as refused:
        schedule(make(), duration_s=None, count=5, seed=0)  # type: ignore[operator]
    assert str(refused.value) == message
    with pytest.raises(ValueError) as unbounded:
        schedule(arrival("poisson", rate=1.0), duration_s=None, count=None, seed=0)
    assert str(unbounded.value) == "a run needs --duration and/or --requests"


def test_a_ramp_schedule_solves_its_quadratic() -> None:
    # r0 = 1, r1 = 3 over D = 2 s: n(t) = t + t²/2, 4 requests; n(t) = i gives t = √(1 + 2i) − 1.
    expected = [math.sqrt(1 + 2 * i) - 1 for i in range(4)]
    ramp = arrival("ramp", rate=1.0, rate_end=3.0)
    assert schedule(ramp, duration_s=2.0, count=None, seed=0).tolist() == pytest.approx(expected, abs=1e-12)
    assert schedule(ramp, duration_s=2.0, count=2, seed=0).tolist() == pytest.approx(expected[:2], abs=1e-12)
    # r0 = 2, r1 = 4 over 1 s: n(t) = 2t + t², 3 requests at t = √(1 + i) − 1.
    assert ramp_offsets(2.0, 4.0, 1.0, None).tolist() == pytest.approx(
        [math.sqrt(1 + i) - 1 for i in range(3)], abs=1e-12)


def test_a_flat_ramp_is_evenly_spaced() -> None:
    assert ramp_offsets(2.0, 2.0, 3.0, None).tolist() == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]


def test_a_constant_rate_over_a_duration() -> None:
    s = schedule(arrival("constant", rate=4.0), duration_s=2.0, count=None, seed=0)
    assert s.tolist() == [i / 4 for i in range(8)]  # i / 4 < 2 s for i < 8


@pytest.mark.parametrize("kind", ["poisson", "gamma"])
def test_no_requests_asked_is_an_empty_schedule(kind: str) -> None:
    assert schedule(arrival(kind, rate=2.0), duration_s=None, count=0, seed=0).size == 0


def test_poisson_ignores_a_burstiness_given_with_it() -> None:
    # Poisson is gamma of shape 1 whatever --burstiness says: gaps are the seed's Exp(1) draws / rate.
    rate, n = 4.0, 20
    gaps = np.random.default_rng(9).standard_exponential(n) / rate
    expected = np.concatenate(([0.0], np.cumsum(gaps[:-1])))
    s = schedule(arrival("poisson", rate=rate, burstiness=3.0), duration_s=None, count=n, seed=9)
    assert s.tolist() == pytest.approx(expected.tolist(), abs=1e-12)
