from __future__ import annotations

import numpy as np
import pytest

from loadgen.workload.arrivals import Arrival, constant_offsets, parse_arrival, ramp_offsets, schedule


def arrival(kind: str, **kw: float) -> Arrival:
    return parse_arrival(kind, rate=kw.get("rate"), burstiness=kw.get("burstiness", 1.0),
                         rate_end=kw.get("rate_end"), concurrency=kw.get("concurrency"))  # type: ignore[arg-type]


def test_constant_is_evenly_spaced_from_zero() -> None:
    assert constant_offsets(4.0, 4).tolist() == [0.0, 0.25, 0.5, 0.75]
    s = schedule(arrival("constant", rate=4.0), duration_s=1.0, count=None, seed=0)
    assert s.tolist() == [0.0, 0.25, 0.5, 0.75]


def test_count_and_duration_both_bound_the_schedule() -> None:
    a = arrival("constant", rate=10.0)
    assert schedule(a, duration_s=100.0, count=5, seed=0).size == 5
    assert schedule(a, duration_s=0.5, count=100, seed=0).size == 5


def test_poisson_is_seeded_and_has_the_asked_rate() -> None:
    a = arrival("poisson", rate=20.0)
    s1 = schedule(a, duration_s=500.0, count=None, seed=7)
    s2 = schedule(a, duration_s=500.0, count=None, seed=7)
    s3 = schedule(a, duration_s=500.0, count=None, seed=8)
    assert np.array_equal(s1, s2) and not np.array_equal(s1[:50], s3[:50])
    assert s1.size / 500.0 == pytest.approx(20.0, rel=0.05)
    gaps = np.diff(s1)
    assert np.std(gaps) / np.mean(gaps) == pytest.approx(1.0, rel=0.08)  # exponential: CV = 1
    assert np.all(s1 < 500.0) and np.all(gaps >= 0)


def test_gamma_burstiness_changes_the_spread_not_the_rate() -> None:
    bursty = schedule(arrival("gamma", rate=20.0, burstiness=0.25), duration_s=500.0, count=None, seed=1)
    smooth = schedule(arrival("gamma", rate=20.0, burstiness=4.0), duration_s=500.0, count=None, seed=1)
    for s in (bursty, smooth):
        assert s.size / 500.0 == pytest.approx(20.0, rel=0.1)
    cv = lambda s: float(np.std(np.diff(s)) / np.mean(np.diff(s)))  # noqa: E731
    assert cv(bursty) == pytest.approx(2.0, rel=0.1)  # CV of gamma = 1/sqrt(shape)
    assert cv(smooth) == pytest.approx(0.5, rel=0.1)


def test_ramp_follows_the_line() -> None:
    offsets = ramp_offsets(1.0, 9.0, 10.0, None)
    # n(t) = t + 0.4 t^2 → 50 requests over 10 s; the i-th at the root of n(t) = i
    assert offsets.size == 50
    t = offsets
    assert np.allclose(t + 0.4 * t**2, np.arange(50))
    assert np.diff(t)[-1] < np.diff(t)[0] / 5  # rate at the end is 9x the start


def test_str_is_readable() -> None:
    assert str(arrival("poisson", rate=4.0)) == "poisson@4.00"
    assert str(arrival("gamma", rate=2.0, burstiness=0.5)) == "gamma@2.00:b=0.5"
    assert str(arrival("concurrency", concurrency=8)) == "concurrency@8"


@pytest.mark.parametrize(("kind", "kw", "msg"), [
    ("poisson", {"rate": -1.0}, "--rate must be a positive"),
    ("poisson", {}, "--rate must be a positive"),
    ("weibull", {"rate": 1.0}, "unknown arrival process"),
    ("gamma", {"rate": 1.0, "burstiness": 0.0}, "--burstiness"),
    ("ramp", {"rate": 1.0}, "--rate-end"),
    ("concurrency", {}, "--concurrency"),
])
def test_bad_arrivals_are_refused(kind: str, kw: dict[str, float], msg: str) -> None:
    with pytest.raises(ValueError, match=msg):
        arrival(kind, **kw)


def test_unbounded_schedule_is_refused() -> None:
    with pytest.raises(ValueError, match="--duration and/or --requests"):
        schedule(arrival("poisson", rate=1.0), duration_s=None, count=None, seed=0)


def _hand_offsets(gaps: np.ndarray) -> list[float]:
    """Request 0 at t = 0, request i at the sum of the first i gaps (the gap after the last one unused)."""
    out, t = [], 0.0
    for gap in gaps:
        out.append(t)
        t += float(gap)
    return out


@pytest.mark.parametrize("kind", ["poisson", "gamma"])
@pytest.mark.parametrize("bound", ["count", "duration"])
def test_the_first_random_arrival_leaves_at_zero(kind: str, bound: str) -> None:
    a = arrival(kind, rate=0.5, burstiness=2.0)  # mean gap 2 s: any gap before request 0 is obvious
    for seed in range(20):
        s = schedule(a, duration_s=60.0 if bound == "duration" else None, count=8 if bound == "count" else None,
                     seed=seed)
        assert s[0] == 0.0 and s[1] > 0.0


def test_poisson_schedule_equals_the_hand_built_one() -> None:
    # Poisson at rate r: gaps are independent Exp(1)/r. The seed's standard exponential draws are
    # numpy's, the rest (scaling, the zero start, the running sum) is rebuilt here.
    rate, n = 40.0, 80
    gaps = np.random.default_rng(3).standard_exponential(n) / rate
    s = schedule(arrival("poisson", rate=rate), duration_s=None, count=n, seed=3)
    assert s.tolist() == pytest.approx(_hand_offsets(gaps), rel=0, abs=1e-12)
    # Bounded by duration instead: the same stream of gaps, cut at the first offset past the end.
    long = _hand_offsets(np.random.default_rng(3).standard_exponential(4000) / rate)
    within = [t for t in long if t < 10.0]
    d = schedule(arrival("poisson", rate=rate), duration_s=10.0, count=None, seed=3)
    assert d.tolist() == pytest.approx(within, rel=0, abs=1e-12)
    assert len(within) < len(long)


def test_gamma_schedule_equals_the_hand_built_one() -> None:
    # Gamma with shape b and mean gap 1/r has scale 1/(r·b): gaps = StandardGamma(b) / (r·b).
    rate, b, n = 5.0, 0.5, 50
    gaps = np.random.default_rng(11).standard_gamma(b, n) / (rate * b)
    s = schedule(arrival("gamma", rate=rate, burstiness=b), duration_s=None, count=n, seed=11)
    assert s.tolist() == pytest.approx(_hand_offsets(gaps), rel=1e-12, abs=1e-12)


def test_poisson_gaps_have_the_exponential_quantiles() -> None:
    # Exp(rate): P(gap <= q) = 1 - exp(-rate·q), so the median gap is ln 2 / rate and the 90th percentile
    # ln 10 / rate. 20,000 gaps: a quantile's standard error is well under 2 % here (seed fixed).
    rate = 20.0
    gaps = np.diff(schedule(arrival("poisson", rate=rate), duration_s=None, count=20_001, seed=5))
    assert float(np.mean(gaps)) == pytest.approx(1 / rate, rel=0.03)
    assert float(np.quantile(gaps, 0.5)) == pytest.approx(np.log(2) / rate, rel=0.03)
    assert float(np.quantile(gaps, 0.9)) == pytest.approx(np.log(10) / rate, rel=0.03)
