"""The client judged against its load: a dispatch lag small against the gap between arrivals is not
saturation, one comparable to it is, and so is a client that sent below the rate planned."""

from __future__ import annotations

from metrics.capacity_search.saturation import client_hint, client_limited, lag_limit_s


def test_a_lag_small_against_the_gap_is_not_saturation() -> None:
    # A busy CI runner: 15-40 ms lag p99 at 3-5 req/s (gaps of 200-333 ms) barely moves the arrivals.
    assert not client_limited(rate=3.0, lag_p99_s=0.040, offered_rps=3.0, achieved_rps=2.99)
    assert not client_limited(rate=5.0, lag_p99_s=0.015, offered_rps=5.0, achieved_rps=5.0)
    # The same lag against a 2 ms gap reorders the process entirely.
    assert client_limited(rate=500.0, lag_p99_s=0.015, offered_rps=500.0, achieved_rps=499.0)


def test_the_limit_is_a_share_of_the_mean_gap() -> None:
    assert lag_limit_s(4.0) == 0.25 / 4.0
    # Never below a single run's default --lag-threshold: at 200 req/s a quarter gap (1.25 ms) is below
    # the scheduling noise of a machine that keeps up.
    assert lag_limit_s(200.0) == 0.010
    assert not client_limited(rate=200.0, lag_p99_s=0.007, offered_rps=200.0, achieved_rps=199.5)
    assert not client_limited(rate=4.0, lag_p99_s=0.0624, offered_rps=4.0, achieved_rps=4.0)
    assert client_limited(rate=4.0, lag_p99_s=0.0626, offered_rps=4.0, achieved_rps=4.0)


def test_a_client_that_sends_below_plan_is_saturated_whatever_its_lag() -> None:
    assert client_limited(rate=8.0, lag_p99_s=0.001, offered_rps=8.0, achieved_rps=7.0)
    assert not client_limited(rate=8.0, lag_p99_s=0.001, offered_rps=8.0, achieved_rps=7.8)


def test_an_absolute_threshold_given_explicitly_replaces_the_relative_one() -> None:
    assert client_limited(rate=3.0, lag_p99_s=0.015, offered_rps=3.0, achieved_rps=3.0, absolute_lag_s=0.010)
    assert not client_limited(rate=500.0, lag_p99_s=0.015, offered_rps=500.0, achieved_rps=500.0,
                              absolute_lag_s=0.020)


def test_the_hint_names_workers_and_the_numbers() -> None:
    line = client_hint(8.0, 0.150)
    assert line.startswith("hint: ") and "--workers" in line and "quieter machine" in line
    assert "150 ms" in line and "125 ms" in line and "\n" not in line
