"""capacity_search.saturation at its edges: the limits written out from the module's rule (a quarter of
the mean gap 1/rate, never under 10 ms; a send rate under 95 % of plan), each side of every bound, and
the hint's whole line."""

from __future__ import annotations

import pytest

from metrics.capacity_search.saturation import client_hint, client_limited, lag_limit_s


@pytest.mark.parametrize(("rate", "limit"), [
    (1.0, 0.25),  # a 1 s gap: a quarter of it
    (10.0, 0.025),
    (25.0, 0.010),  # a quarter of 40 ms is exactly the floor
    (40.0, 0.010),  # 6.25 ms: the floor
])
def test_the_limit_by_hand(rate: float, limit: float) -> None:
    assert lag_limit_s(rate) == pytest.approx(limit, rel=1e-12)


def test_a_lag_exactly_at_the_limit_is_not_saturation() -> None:
    # 1/4 of a 500 ms gap is 125 ms, exact in binary; "exceeds" is strict.
    assert not client_limited(rate=2.0, lag_p99_s=0.125, offered_rps=None, achieved_rps=None)
    assert client_limited(rate=2.0, lag_p99_s=0.125000001, offered_rps=None, achieved_rps=None)
    # The 10 ms floor: at 100 req/s a quarter gap is 2.5 ms, so 9.9 ms keeps up and 10.1 ms does not.
    assert not client_limited(rate=100.0, lag_p99_s=0.0099, offered_rps=None, achieved_rps=None)
    assert not client_limited(rate=100.0, lag_p99_s=0.0100, offered_rps=None, achieved_rps=None)
    assert client_limited(rate=100.0, lag_p99_s=0.0101, offered_rps=None, achieved_rps=None)


def test_no_lag_measured_is_judged_on_the_send_rate_alone() -> None:
    assert not client_limited(rate=2.0, lag_p99_s=None, offered_rps=None, achieved_rps=None)
    assert not client_limited(rate=2.0, lag_p99_s=None, offered_rps=2.0, achieved_rps=2.0)
    assert client_limited(rate=2.0, lag_p99_s=None, offered_rps=2.0, achieved_rps=1.0)


def test_the_shortfall_bound_is_strict_at_95_percent() -> None:
    # 95 % of 16 req/s is 15.2 req/s; 0.95 · 16 rounds to the same float as 15.2.
    assert (1 - 0.05) * 16.0 == 15.2
    assert not client_limited(rate=16.0, lag_p99_s=0.0, offered_rps=16.0, achieved_rps=15.2)
    assert client_limited(rate=16.0, lag_p99_s=0.0, offered_rps=16.0, achieved_rps=15.19)
    assert not client_limited(rate=16.0, lag_p99_s=0.0, offered_rps=16.0, achieved_rps=15.21)


def test_an_unknown_offered_or_achieved_rate_says_nothing() -> None:
    # No offered rate (or 0: nothing planned) or no achieved rate: the shortfall cannot be judged.
    assert not client_limited(rate=2.0, lag_p99_s=0.0, offered_rps=None, achieved_rps=0.5)
    assert not client_limited(rate=2.0, lag_p99_s=0.0, offered_rps=0.0, achieved_rps=0.5)
    assert not client_limited(rate=2.0, lag_p99_s=0.0, offered_rps=2.0, achieved_rps=None)
    assert client_limited(rate=2.0, lag_p99_s=0.0, offered_rps=2.0, achieved_rps=0.0)


def test_an_absolute_limit_replaces_the_relative_one_both_ways() -> None:
    # Relative limit at 2 req/s: 125 ms. An absolute 50 ms flags a 60 ms lag the relative one allows ...
    assert client_limited(rate=2.0, lag_p99_s=0.060, offered_rps=None, achieved_rps=None, absolute_lag_s=0.050)
    # ... and exactly 50 ms is still within it.
    assert not client_limited(rate=2.0, lag_p99_s=0.050, offered_rps=None, achieved_rps=None,
                              absolute_lag_s=0.050)
    # At 1000 req/s the relative limit is the 10 ms floor; an absolute 30 ms allows 20 ms.
    assert not client_limited(rate=1000.0, lag_p99_s=0.020, offered_rps=None, achieved_rps=None,
                              absolute_lag_s=0.030)


def test_the_hint_lines_in_full() -> None:
    tail = ": run it with --workers N, or on a quieter machine closer to the server"
    # 40 ms lag at 20 req/s: a mean gap of 1000 / 20 = 50 ms.
    assert client_hint(20.0, 0.040) == (
        "hint: the load generator could not offer 20 req/s (dispatch lag p99 40 ms against a mean gap of "
        "50 ms between arrivals)" + tail)
    # Seconds to milliseconds at a size where a wrong factor shows: 0.6 s is 600 ms, 1 / 0.5 req/s is 2000 ms.
    assert client_hint(0.5, 0.6) == (
        "hint: the load generator could not offer 0.5 req/s (dispatch lag p99 600 ms against a mean gap of "
        "2000 ms between arrivals)" + tail)
    assert client_hint(2.5, None) == (
        "hint: the load generator could not offer 2.5 req/s (it sent below the rate planned)" + tail)
    assert client_hint(None, 0.3) == "hint: the load generator could not offer the rates planned" + tail
    assert client_hint(None, None) == "hint: the load generator could not offer the rates planned" + tail
