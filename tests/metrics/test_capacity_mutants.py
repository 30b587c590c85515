"""The capacity search's steps one at a time, against values worked out by hand: the rounding of a probe
rate, the start, the bracket, each stop and its words. Written to catch the one-line changes that the
search's end-to-end tests let through (mutation testing; docs/testing.md).

Verdicts here use a 0.9 target at 95 % (Wilson): 100 of 100 good has its lower end at
100 / (100 + 1.96²) = 0.963 (pass); 0 of 100 has its upper end at 1.96² / (100 + 1.96²) = 0.037 (fail);
90 of 100 has the interval [0.826, 0.945] around 0.9 (undecided)."""

from __future__ import annotations

from metrics.capacity_search.search import (
    Observation,
    Probe,
    SearchSettings,
    Stop,
    between,
    conclude,
    from_ceiling,
    next_step,
    round_rate,
    start_rate,
)

PASS, FAIL, UNDECIDED = (100, 100), (0, 100), (90, 100)


def obs(rate: float, outcome: tuple[int, int], saturated: bool = False) -> Observation:
    return Observation(rate, outcome[0], outcome[1], client_saturated=saturated)


def step(settings: SearchSettings, *observations: Observation) -> Probe | Stop:
    return next_step(settings, list(observations), len(observations))


def test_round_rate_keeps_three_significant_digits_unless_told() -> None:
    assert round_rate(6.2831853) == 6.28
    assert round_rate(6.2831853, 4) == 6.283
    assert round_rate(1234.5) == 1230.0


def test_between_is_the_geometric_mean_only_past_a_factor_two() -> None:
    assert between(1.0, 4.0) == 2.0  # 4 > 2·1: √4
    assert between(2.0, 4.0) == 3.0  # exactly a factor 2: the arithmetic mean
    assert between(10.0, 30.0) == 17.3  # √300 = 17.3205..., three digits
    assert between(4.0, 4.0) is None and between(5.0, 4.0) is None


def test_between_adds_digits_only_to_stay_inside() -> None:
    # mid 1.0000002: 3 to 7 digits round it onto lo (1.000000), 8 digits keep it inside; nothing more.
    assert between(1.0, 1.0 + 4e-7) is None  # 8 digits are one more than the search goes to
    assert between(1.0, 1.0001) == 1.00005  # 6 digits
    assert between(1.0, 1.0 + 2e-6) == 1.000001  # 7 digits, the most it goes to


def test_start_rate_from_each_setting() -> None:
    assert start_rate(SearchSettings(0.9, start_rate=5.0, min_rate=8.0)) == 8.0
    assert start_rate(SearchSettings(0.9, start_rate=50.0, max_rate=20.0)) == 20.0
    assert start_rate(SearchSettings(0.9, start_rate=5.0, min_rate=1.0, max_rate=20.0)) == 5.0
    assert start_rate(SearchSettings(0.9, min_rate=2.0, max_rate=50.0)) == 10.0  # √100
    assert start_rate(SearchSettings(0.9, min_rate=1.0, max_rate=10.0)) == 3.162  # √10, four digits
    assert start_rate(SearchSettings(0.9, max_rate=7.0)) == 3.5
    assert start_rate(SearchSettings(0.9, min_rate=3.0)) == 3.0
    assert start_rate(SearchSettings(0.9, min_rate=3.0, floor_rate=4.0)) == 4.0
    assert start_rate(SearchSettings(0.9, min_rate=3.0, floor_rate=3.0)) == 3.0
    assert start_rate(SearchSettings(0.9, start_rate=1.23456)) == 1.235


def test_from_ceiling_starts_at_three_quarters_never_below_the_floor() -> None:
    s = SearchSettings(0.9, min_rate=1.0, max_rate=100.0)
    assert from_ceiling(s, 10.0).start_rate == 7.5
    assert from_ceiling(s, 12.3456).start_rate == 9.26  # 9.2592, three digits
    assert from_ceiling(SearchSettings(0.9, min_rate=1.0, floor_rate=9.0), 10.0).start_rate == 9.0
    kept = from_ceiling(s, 10.0)
    assert (kept.min_rate, kept.max_rate, kept.target) == (1.0, 100.0, 0.9)


def test_max_points_counts_runs_made_outside_the_search() -> None:
    s = SearchSettings(0.9, min_rate=1.0, max_points=3)
    assert step(s) == Probe(1.0, "start")
    assert next_step(s, [], 3) == Stop("max_points", "--max-points 3 runs made")
    assert next_step(s, [obs(1.0, PASS)], 2) == Probe(2.0, "1 req/s passed and nothing above is known: double")


def test_an_undecided_rate_is_run_again_until_its_repeats_are_spent() -> None:
    s = SearchSettings(0.9, min_rate=1.0, max_rate=100.0, max_repeats=1)
    again = Probe(10.0, "attainment interval at 10 req/s straddles the target: run again")
    assert step(s, obs(10.0, UNDECIDED)) == again
    # Pooled 180 of 200 is still undecided; one repeat spent: now unresolved, the bracket's top.
    assert step(s, obs(10.0, UNDECIDED), obs(10.0, UNDECIDED)) == Probe(3.16, "between 1 and 10 req/s")


def test_no_repeat_when_the_rate_could_not_move_the_bracket() -> None:
    # 10 passed; 10.4 undecided is within 5 % of it: counted as not passing, the bracket is closed.
    s = SearchSettings(0.9, min_rate=1.0, max_rate=100.0)
    result = step(s, obs(10.0, PASS), obs(10.4, UNDECIDED))
    assert result == Stop("bracketed", "capacity bracketed in [10, 10.4] req/s")
    # 11 is 10 % above: worth a repeat.
    assert step(s, obs(10.0, PASS), obs(11.0, UNDECIDED)) == Probe(
        11.0, "attainment interval at 11 req/s straddles the target: run again")


def test_a_saturated_run_is_repeated_once_then_caps_the_search() -> None:
    s = SearchSettings(0.9, min_rate=1.0, max_rate=100.0)
    once = Probe(20.0, "the client fell behind its schedule at 20 req/s: run again once")
    assert step(s, obs(10.0, PASS), obs(20.0, PASS, saturated=True)) == once
    twice = step(s, obs(10.0, PASS), obs(20.0, PASS, saturated=True), obs(20.0, PASS, saturated=True))
    assert twice == Probe(15.0, "between 10 (pass) and 20 req/s")  # a factor 2: 20 is the limit
    # With no repeats allowed, one saturated run is the limit at once.
    s0 = SearchSettings(0.9, min_rate=1.0, max_rate=100.0, max_repeats=0)
    assert step(s0, obs(10.0, PASS), obs(20.0, PASS, saturated=True)) == Probe(15.0, "between 10 (pass) and 20 req/s")


def test_the_saturation_limit_is_the_lowest_saturated_rate_and_below_max_rate() -> None:
    s = SearchSettings(0.9, min_rate=1.0, max_rate=100.0)
    sat = [obs(r, PASS, saturated=True) for r in (40.0, 40.0, 30.0, 30.0)]
    assert step(s, obs(10.0, PASS), *sat) == Probe(17.3, "between 10 (pass) and 30 req/s")
    # At max_rate itself the saturation counts (client_limited, not at_least).
    s20 = SearchSettings(0.9, min_rate=1.0, max_rate=20.0)
    at_max = [obs(20.0, PASS, saturated=True)] * 2
    stop = step(s20, obs(19.5, PASS), *at_max)
    assert isinstance(stop, Stop) and stop.status == "client_limited"
    assert stop.reason == ("the load generator fell behind at 20 req/s: it cannot show a higher rate "
                           "(run it with --workers N, or on a quieter machine)")


def test_a_fail_below_the_limit_is_the_top() -> None:
    s = SearchSettings(0.9, min_rate=1.0, max_rate=100.0)
    assert step(s, obs(10.0, PASS), obs(40.0, FAIL)) == Probe(20.0, "between 10 (pass) and 40 req/s")
    assert step(s, obs(10.0, PASS), obs(200.0, FAIL)) == Probe(31.6, "between 10 (pass) and 100 req/s")
    # The limit equal to the failing rate: either way the top is 100.
    assert step(s, obs(10.0, PASS), obs(100.0, FAIL)) == Probe(31.6, "between 10 (pass) and 100 req/s")


def test_stops_at_the_top_with_their_words() -> None:
    s = SearchSettings(0.9, min_rate=1.0, max_rate=10.0)
    assert step(s, obs(9.6, PASS)) == Stop("at_least", "every rate up to 9.6 req/s passed and --max-rate is 10: "
                                                      "the capacity is at least that (raise --max-rate to look further)")
    # Exactly at the tolerance (10 = 9.5238·1.05 rounds above; use 8 and 8.4 = 8·1.05).
    s2 = SearchSettings(0.9, min_rate=1.0, max_rate=100.0)
    assert step(s2, obs(8.0, PASS), obs(8.4, FAIL)) == Stop("bracketed", "capacity bracketed in [8, 8.4] req/s")
    # Just outside it, a probe between them.
    assert step(s2, obs(8.0, PASS), obs(8.5, FAIL)) == Probe(8.25, "between 8 (pass) and 8.5 req/s")


def test_between_with_no_room_stops_at_the_top() -> None:
    # tolerance tiny: 1.0 and 1.0000001 are 1e-7 apart, between() finds nothing with 7 digits.
    s = SearchSettings(0.9, min_rate=0.5, tolerance=1e-9)
    stop = step(s, obs(1.0, PASS), obs(1.0000001, FAIL))
    assert stop == Stop("bracketed", "capacity bracketed in [1, 1] req/s")


def test_halving_with_no_lower_limit_and_checking_min_rate_itself() -> None:
    s = SearchSettings(0.9, max_rate=16.0)
    assert step(s, obs(8.0, FAIL)) == Probe(4.0, "nothing passed up to 8 req/s: halve")
    sm = SearchSettings(0.9, min_rate=1.0, max_rate=16.0)
    assert step(sm, obs(1.04, FAIL)) == Probe(1.0, "check the lowest rate, 1 req/s, itself")
    assert step(sm, obs(1.04, FAIL), obs(1.0, FAIL)) == Stop(
        "below_min", "no rate from --min-rate 1 req/s up was shown to pass")
    assert step(sm, obs(1.05, FAIL)) == Probe(1.0, "check the lowest rate, 1 req/s, itself")  # 1.05 = 1·1.05
    assert step(sm, obs(4.0, FAIL)) == Probe(2.0, "between 1 and 4 req/s")  # min_rate: no halving


def test_halving_down_to_the_floor_then_the_floor_itself() -> None:
    s = SearchSettings(0.9, max_rate=100.0, floor_rate=3.0)
    assert step(s, obs(10.0, FAIL)) == Probe(5.0, "nothing passed up to 10 req/s: halve")
    # Half of 6 is the floor: not above it, so between 3 and 6 (arithmetic: 4.5).
    assert step(s, obs(6.0, FAIL)) == Probe(4.5, "between 3 and 6 req/s")
    assert step(s, obs(3.1, FAIL)) == Probe(3.0, "check the lowest rate, 3 req/s, itself")
    assert step(s, obs(3.1, FAIL), obs(3.0, FAIL)) == Stop(
        "too_short", "no rate from 3 req/s up was shown to pass, and a point of this length measures too few "
                     "requests below it for a verdict: lengthen --point-duration")


def test_a_point_that_measured_nothing_bounds_the_search_from_below() -> None:
    empty = (0, 0)
    unbounded = SearchSettings(0.9, start_rate=2.0)
    assert step(unbounded, obs(2.0, empty)) == Probe(4.0, "a point at 2 req/s measured no request: double")
    s = SearchSettings(0.9, max_rate=100.0)
    assert step(s, obs(2.0, empty)) == Probe(50.0, "nothing passed up to 100 req/s: halve")
    assert step(s, obs(2.0, empty), obs(8.0, FAIL)) == Probe(4.0, "nothing passed up to 8 req/s: halve")
    # Too short is exclusive: never probed again, and halving stops above it.
    assert step(s, obs(2.0, empty), obs(2.05, FAIL)) == Stop(
        "too_short", "a point at 2 req/s measured no request and nothing above it passed: lengthen "
                     "--point-duration")
    assert step(s, obs(2.0, empty), obs(4.0, FAIL)) == Probe(3.0, "between 2 and 4 req/s")  # half is 2: not above
    # A too-short point at the floor: the floor is exclusive now (max by rate, then exclusive first).
    sf = SearchSettings(0.9, max_rate=100.0, floor_rate=2.0)
    assert step(sf, obs(2.0, empty), obs(2.05, FAIL)) == Stop(
        "too_short", "a point at 2 req/s measured no request and nothing above it passed: lengthen "
                     "--point-duration")


def test_the_highest_lower_limit_wins() -> None:
    s = SearchSettings(0.9, min_rate=1.0, max_rate=100.0, floor_rate=2.0)
    assert step(s, obs(2.05, FAIL)) == Probe(2.0, "check the lowest rate, 2 req/s, itself")
    s2 = SearchSettings(0.9, min_rate=3.0, max_rate=100.0, floor_rate=2.0)
    assert step(s2, obs(3.1, FAIL)) == Probe(3.0, "check the lowest rate, 3 req/s, itself")
    assert step(s2, obs(3.1, FAIL), obs(3.0, FAIL)) == Stop(
        "below_min", "no rate from --min-rate 3 req/s up was shown to pass")


def test_no_evidence_at_all() -> None:
    s = SearchSettings(0.9, min_rate=1.0)
    sat = obs(1.0, PASS, saturated=True)
    assert step(s, sat, sat) == Stop("client_limited", "the load generator fell behind at 1 req/s, at or below "
                                                       "1 req/s, the lowest rate the search may probe")
    s_none = SearchSettings(0.9, start_rate=5.0)
    assert step(s_none, obs(5.0, PASS, saturated=True), obs(5.0, PASS, saturated=True)) == Probe(
        2.5, "nothing passed up to 5 req/s: halve")


def test_no_data_without_any_bound() -> None:
    s = SearchSettings(0.9, start_rate=5.0)
    assert step(s, obs(5.0, (0, 0))) == Probe(10.0, "a point at 5 req/s measured no request: double")


def test_conclude_claims_only_below_the_lowest_rate_not_shown_to_pass() -> None:
    s = SearchSettings(0.9, min_rate=1.0, max_rate=100.0, max_repeats=0)
    runs = [obs(5.0, PASS), obs(10.0, UNDECIDED), obs(20.0, PASS), obs(40.0, FAIL),
            obs(3.0, PASS, saturated=True), obs(3.0, PASS)]
    result = conclude(s, runs, Stop("bracketed", "x"))
    assert (result.capacity, result.upper) == (5.0, 10.0)
    assert [e.rate for e in result.evidence] == [3.0, 5.0, 10.0, 20.0, 40.0]
    assert result.at(10.0) is not None and result.at(10.0).verdict == "unresolved"  # type: ignore[union-attr]
    assert result.at(7.0) is None
    assert result.notes == (
        "passed but above a rate that did not pass, so not claimed (noise, or a server whose attainment "
        "is not monotone in load): 20 req/s",
        "3 req/s: the client fell behind its schedule in 1 of 2 run(s); not evidence about the server",
        "10 req/s: attainment interval still straddles the target after 1 run(s); counted as not shown to pass",
    )
    assert (result.status, result.reason) == ("bracketed", "x")


def test_conclude_turns_a_last_undecided_rate_unresolved() -> None:
    s = SearchSettings(0.9, min_rate=1.0, max_rate=100.0)
    result = conclude(s, [obs(5.0, PASS), obs(10.0, UNDECIDED)], Stop("interrupted", "stopped"))
    entry = result.at(10.0)
    assert entry is not None and entry.verdict == "unresolved"
    assert (entry.good, entry.measured, entry.runs, entry.saturated_runs) == (90, 100, 1, 0)
    assert entry.interval is not None and entry.interval[0] < 0.9 < entry.interval[1]
    assert (result.capacity, result.upper) == (5.0, 10.0)
    assert result.notes == ("10 req/s: attainment interval still straddles the target after 1 run(s); "
                            "counted as not shown to pass",)


def test_doubling_rounds_to_four_digits() -> None:
    s = SearchSettings(0.9, start_rate=1.23456)
    # 2 × 1.23456 = 2.46912: four significant digits.
    assert step(s, obs(1.23456, (0, 0))) == Probe(2.469, "a point at 1.23456 req/s measured no request: double")
    assert step(s, obs(1.23456, PASS)) == Probe(2.469, "1.23456 req/s passed and nothing above is known: double")


def test_no_data_when_only_min_rate_bounds_a_search_that_measured_nothing() -> None:
    # A point below --min-rate that measured nothing: min_rate is the higher lower limit, and nothing
    # bounds the search from above, so there is nothing to double from.
    s = SearchSettings(0.9, min_rate=5.0)
    assert step(s, obs(2.0, (0, 0))) == Stop("no_data", "no run so far is evidence about the server")


def test_between_never_returns_the_upper_end() -> None:
    # mid 1.006 rounds to 1.01 = hi at three digits: one more digit keeps it inside.
    assert between(1.002, 1.01) == 1.006


def test_start_rate_rounds_a_floor_equal_start_like_any_other() -> None:
    assert start_rate(SearchSettings(0.9, min_rate=3.14159, floor_rate=3.14159)) == 3.142


def test_halving_rounds_to_four_digits() -> None:
    # 2.46912 / 2 = 1.23456: four significant digits, with no lower limit and above a floor.
    reason = "nothing passed up to 2.46912 req/s: halve"
    assert step(SearchSettings(0.9, max_rate=16.0), obs(2.46912, FAIL)) == Probe(1.235, reason)
    assert step(SearchSettings(0.9, max_rate=16.0, floor_rate=0.1), obs(2.46912, FAIL)) == Probe(1.235, reason)


def test_the_lowest_rate_is_checked_only_when_it_lies_below_the_top() -> None:
    # A failing rate below --min-rate (the top under the lower limit): nothing left to probe.
    s = SearchSettings(0.9, min_rate=5.0, max_rate=100.0)
    assert step(s, obs(4.0, FAIL)) == Stop("below_min", "no rate from --min-rate 5 req/s up was shown to pass")
    # The floor equal to --max-rate, a failure above it: the top is the floor itself, never probed.
    sf = SearchSettings(0.9, max_rate=10.0, floor_rate=10.0)
    assert step(sf, obs(20.0, FAIL)) == Stop(
        "too_short", "no rate from 10 req/s up was shown to pass, and a point of this length measures too few "
                     "requests below it for a verdict: lengthen --point-duration")


def test_no_room_above_a_point_that_measured_nothing() -> None:
    s = SearchSettings(0.9, start_rate=1.0, tolerance=1e-9)
    assert step(s, obs(1.0, (0, 0)), obs(1.0000001, FAIL)) == Stop(
        "too_short", "a point at 1 req/s measured no request and nothing above it passed: lengthen "
                     "--point-duration")


def test_every_pass_above_a_failure_is_named() -> None:
    s = SearchSettings(0.9, min_rate=1.0, max_rate=100.0)
    result = conclude(s, [obs(5.0, PASS), obs(10.0, FAIL), obs(20.0, PASS), obs(30.0, PASS)], Stop("bracketed", "x"))
    assert result.notes == ("passed but above a rate that did not pass, so not claimed (noise, or a server whose "
                            "attainment is not monotone in load): 20, 30 req/s",)


def test_a_ceiling_below_four_thirds_starts_below_one() -> None:
    assert from_ceiling(SearchSettings(0.9, max_rate=10.0), 1.0).start_rate == 0.75


def test_a_failure_at_max_rate_brackets_rather_than_bounds() -> None:
    s = SearchSettings(0.9, min_rate=1.0, max_rate=10.0)
    assert step(s, obs(9.6, PASS), obs(10.0, FAIL)) == Stop("bracketed", "capacity bracketed in [9.6, 10] req/s")


def test_no_room_between_min_rate_and_a_failure_checks_min_rate() -> None:
    s = SearchSettings(0.9, min_rate=1.0, tolerance=1e-9)
    assert step(s, obs(1.0000001, FAIL)) == Probe(1.0, "check the lowest rate, 1 req/s, itself")
    # Above a point that measured nothing, the client saturated just above it: the client is the limit.
    s2 = SearchSettings(0.9, start_rate=1.0, tolerance=1e-9)
    sat = obs(1.0000001, PASS, saturated=True)
    assert step(s2, obs(1.0, (0, 0)), sat, sat) == Stop(
        "client_limited", "the load generator fell behind at 1 req/s, at or below 1 req/s, the lowest rate the "
                          "search may probe")
