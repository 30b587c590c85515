"""The search's limits, driven by scripted outcomes: a throughput ceiling is where the search starts, not
where it stops (every rate passing keeps it going up until one fails); the point's length sets a floor
below which no rate is probed; a point that measured nothing is too short, never the end of the search."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from metrics.capacity_search.search import (
    Observation,
    Probe,
    SearchResult,
    SearchSettings,
    Stop,
    conclude,
    from_ceiling,
    next_step,
    requests_for_a_verdict,
    requests_per_point,
)

Outcome = Callable[[float], tuple[int, int]]  # rate -> (good, measured)


def drive(settings: SearchSettings, outcome: Outcome, *, points_before: int = 0) -> tuple[SearchResult, list[float]]:
    """Run the search on scripted outcomes; the rates it probed, in order."""
    observations: list[Observation] = []
    while True:
        step = next_step(settings, observations, points_before + len(observations))
        if isinstance(step, Stop):
            return conclude(settings, observations, step), [o.rate for o in observations]
        good, measured = outcome(step.rate)
        observations.append(Observation(step.rate, good, measured))


def sharp(capacity: float, seconds: float = 30.0) -> Outcome:
    """Every request good up to `capacity`, none above; rate × seconds requests measured (as an exact-rate
    point's window holds)."""
    def outcome(rate: float) -> tuple[int, int]:
        n = round(rate * seconds)
        return (n if rate <= capacity else 0), n
    return outcome


@pytest.mark.parametrize("factor", [1.3, 2.0, 5.0, 20.0])
def test_a_ceiling_that_understates_the_server_does_not_end_the_search(factor: float) -> None:
    # The closed-loop ceiling read 122 req/s; the server keeps the SLO well above it. Every probe up to
    # the ceiling's margin passes: the search must go on up until a rate fails, not claim "at least".
    ceiling = 122.0
    settings = from_ceiling(SearchSettings(target=0.9, start_rate=1.0, max_points=12), ceiling)
    result, rates = drive(settings, sharp(ceiling * factor), points_before=1)
    assert rates[0] == pytest.approx(0.75 * ceiling, rel=0.01)
    assert max(rates) > 1.25 * ceiling  # past the old limit
    assert result.upper is not None, (result.status, rates)  # a rate failed: a bracket
    assert result.capacity is not None and result.capacity <= ceiling * factor < result.upper


def test_no_stop_with_points_left_and_no_failing_rate() -> None:
    for capacity in (3.0, 40.0, 150.0, 900.0, 5000.0):
        settings = from_ceiling(SearchSettings(target=0.9, start_rate=1.0, max_points=30), 122.0)
        result, rates = drive(settings, sharp(capacity), points_before=1)
        assert result.status == "bracketed", (capacity, result.status, result.reason, rates)
        assert result.capacity is not None and result.upper is not None
        assert result.capacity <= capacity < result.upper <= result.capacity * 1.05


def test_a_tiny_ceiling_starts_at_the_floor_and_the_search_still_brackets() -> None:
    # A closed loop that queued behind its first wave read 0.04 req/s; a 6 s point cannot hold a request at
    # 0.75 of that. The search starts at the floor instead and finds the ~5 req/s the server takes.
    settings = from_ceiling(SearchSettings(target=0.9, start_rate=1.0, floor_rate=2.22), 0.04)
    assert settings.start_rate == 2.22
    result, rates = drive(settings, sharp(5.0, seconds=5.4), points_before=1)
    assert min(rates) >= 2.22
    assert result.upper is not None and result.capacity is not None
    assert result.capacity <= 5.0 < result.upper


def test_requests_for_a_verdict_match_the_wilson_bound() -> None:
    # n of n good passes at 90 % with 95 % confidence when the Wilson lower end n / (n + z²) ≥ 0.9, i.e.
    # n ≥ 9 z² = 34.57: 35 requests; three runs pooled need 12 each.
    settings = SearchSettings(target=0.9, max_rate=10.0)
    assert requests_for_a_verdict(settings) == 35
    assert requests_per_point(settings) == 12
    z = 2.5758293035489  # 99 % two-sided: n ≥ 99 z² at 99 %
    strict = SearchSettings(target=0.99, confidence=0.99, max_rate=10.0, max_repeats=0)
    assert requests_for_a_verdict(strict) == math.ceil(99 * z * z) == requests_per_point(strict)


def test_never_probes_below_the_floor() -> None:
    settings = SearchSettings(target=0.9, max_rate=64.0, floor_rate=3.0)
    result, rates = drive(settings, sharp(0.5))  # nothing passes anywhere the search may look
    assert min(rates) == 3.0 and all(r >= 3.0 for r in rates)
    assert result.status == "too_short" and result.capacity is None
    assert "--point-duration" in result.reason


def test_a_floor_above_max_rate_is_refused() -> None:
    with pytest.raises(ValueError, match="lengthen --point-duration"):
        SearchSettings(target=0.9, max_rate=2.0, floor_rate=3.0)


def test_an_empty_point_is_too_short_and_the_search_moves_up() -> None:
    settings = SearchSettings(target=0.9, start_rate=0.028)
    step = next_step(settings, [Observation(0.028, 0, 0)], 2)
    assert isinstance(step, Probe) and step.rate == 0.056  # double: not an error, not the end
    with_max = SearchSettings(target=0.9, max_rate=8.0)
    step = next_step(with_max, [Observation(4.0, 0, 0)], 1)
    assert isinstance(step, Probe) and 4.0 < step.rate < 8.0


def test_nothing_at_or_below_an_empty_point_is_probed_again() -> None:
    def outcome(rate: float) -> tuple[int, int]:
        if rate < 1.0:
            return 0, 0  # too short to hold a request
        n = int(rate * 10)
        return (0, n)  # fails everywhere it measures
    result, rates = drive(SearchSettings(target=0.9, start_rate=0.2, max_points=20), outcome)
    empty = max(r for r in rates if r < 1.0)
    assert all(r > empty for r in rates[rates.index(empty) + 1:])
    assert result.status == "too_short" and result.capacity is None
    assert result.at(empty).verdict == "too_short"  # type: ignore[union-attr]
