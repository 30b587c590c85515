"""The capacity search against scripted outcomes whose verdicts are worked out by hand: a rate whose
attainment's centre is above the target but whose interval's lower end is below it is never claimed."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from metrics.capacity_search.search import (
    Observation,
    SearchResult,
    SearchSettings,
    Stop,
    conclude,
    next_step,
)
from tests.metrics._binomial import Z95, lower_end_at_or_above, upper_tail, wilson_lower

Script = Callable[[float], tuple[int, int]]


def drive(settings: SearchSettings, script: Script) -> tuple[SearchResult, list[Observation]]:
    observations: list[Observation] = []
    while True:
        step = next_step(settings, observations, len(observations))
        if isinstance(step, Stop):
            return conclude(settings, observations, step), observations
        good, n = script(step.rate)
        observations.append(Observation(step.rate, good, n))


def test_the_hand_wilson_bound_of_95_of_100() -> None:
    # p̂ = 0.95, n = 100, z = 1.96: centre (p̂ + z²/2n)/(1 + z²/n) = 0.92404, half-width
    # z/(1 + z²/n)·√(p̂(1 − p̂)/n + z²/4n²) = 0.03579: the interval is [0.8882, 0.9785].
    z2n = Z95**2 / 100
    centre = (0.95 + z2n / 2) / (1 + z2n)
    half = Z95 / (1 + z2n) * math.sqrt(0.95 * 0.05 / 100 + z2n / 400)
    assert centre - half == pytest.approx(0.888250, abs=1e-6)
    assert wilson_lower(95, 100, 0.95) == pytest.approx(centre - half, abs=1e-12)
    assert centre > 0.9 > centre - half  # centre passes a 0.9 target, the lower end does not
    # Clopper–Pearson: P(X >= 95 | p = 0.9) = 0.0576 > 0.025, so 0.9 lies inside that interval too.
    assert upper_tail(95, 100, 0.9) == pytest.approx(0.05758, abs=1e-5)


@pytest.mark.parametrize("method", ["wilson", "clopper-pearson"])
def test_a_centre_above_the_target_with_the_lower_end_below_is_never_claimed(method: str) -> None:
    # Every rate up to 12 req/s measures 95 of 100 good (centre above 0.9, lower end 0.888 below), every
    # higher rate 0 of 100. With no repeats, nothing is shown to pass.
    settings = SearchSettings(target=0.9, min_rate=1.0, max_rate=40.0, max_repeats=0, method=method)  # type: ignore[arg-type]
    result, observations = drive(settings, lambda rate: (95, 100) if rate <= 12 else (0, 100))
    assert any(o.rate <= 12 for o in observations)
    assert result.capacity is None
    assert result.status == "below_min"


def test_the_claimed_rate_is_the_highest_whose_lower_end_clears_the_target() -> None:
    # 99 of 100 (Wilson lower end 0.9455) up to 5 req/s, 95 of 100 (0.888) up to 12, then 0 of 100. The
    # capacity is the highest 99-of-100 rate probed; a centre-based verdict would claim a rate above 5.
    settings = SearchSettings(target=0.9, min_rate=1.0, max_rate=40.0, max_repeats=0, tolerance=0.05, max_points=30)
    assert wilson_lower(99, 100, 0.95) > 0.9 > wilson_lower(95, 100, 0.95)

    def script(rate: float) -> tuple[int, int]:
        return (99, 100) if rate <= 5 else (95, 100) if rate <= 12 else (0, 100)

    result, observations = drive(settings, script)
    assert result.capacity is not None and result.capacity <= 5
    assert result.capacity == max(o.rate for o in observations if o.rate <= 5)
    assert result.upper is not None and result.upper > 5
    entry = result.at(result.capacity)
    assert entry is not None and lower_end_at_or_above(0.9, entry.good, entry.measured, 0.95, "wilson")


def test_repeats_pool_until_the_lower_end_clears_the_target() -> None:
    # 95 of 100 at one rate, twice: 190 of 200 has its Wilson lower end at 0.9149 > 0.9, so the pooled rate
    # passes, where one run (0.888) did not.
    assert wilson_lower(190, 200, 0.95) == pytest.approx(0.91, abs=0.01) and wilson_lower(190, 200, 0.95) > 0.9
    settings = SearchSettings(target=0.9, max_rate=20.0, max_repeats=2)
    obs = [Observation(10.0, 95, 100)]
    step = next_step(settings, obs, 1)
    assert not isinstance(step, Stop) and step.rate == 10.0  # undecided: run again
    obs.append(Observation(10.0, 95, 100))
    result = conclude(settings, obs, Stop("max_points", "test"))
    entry = result.at(10.0)
    assert entry is not None and (entry.verdict, entry.good, entry.measured) == ("pass", 190, 200)
    assert result.capacity == 10.0
