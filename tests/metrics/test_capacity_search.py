"""The capacity search on made-up attainment curves with binomial noise (no server): it finds the knee,
never claims a rate it has not shown to pass, repeats a straddling point instead of guessing, treats a
saturated client as no evidence, and stops within --max-points."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from metrics.capacity_search.search import (
    Observation,
    Probe,
    SearchResult,
    SearchSettings,
    Stop,
    between,
    conclude,
    judge_rate,
    next_step,
    pool,
    round_rate,
    start_rate,
)
from tests.metrics._binomial import lower_end_at_or_above

Curve = Callable[[float], float]


def knee_curve(knee: float, width: float, target: float) -> Curve:
    """A logistic attainment curve falling with load, equal to `target` exactly at `knee`."""
    shift = math.log(1 / target - 1)
    return lambda rate: 1 / (1 + math.exp((rate - knee) / width + shift))


def run_search(settings: SearchSettings, curve: Curve, *, seed: int, seconds: float = 6.0, points_before: int = 0,
               saturates_at: float = math.inf) -> tuple[SearchResult, list[Observation]]:
    """Drive the search: each probe measures rate × seconds requests, each good with the curve's probability."""
    rng = np.random.default_rng(seed)
    observations: list[Observation] = []
    while True:
        step = next_step(settings, observations, points_before + len(observations))
        if isinstance(step, Stop):
            return conclude(settings, observations, step), observations
        n = int(step.rate * seconds)
        observations.append(Observation(step.rate, int(rng.binomial(n, curve(step.rate))), n,
                                        client_saturated=step.rate >= saturates_at))


def shown_to_pass(result: SearchResult, settings: SearchSettings) -> None:
    """The claim rests on evidence: a probed rate whose pooled interval lies at or above the target (its
    lower end checked by hand, tests/metrics/_binomial.py), below every rate that did not pass."""
    if result.capacity is None:
        return
    entry = result.at(result.capacity)
    assert entry is not None and entry.verdict == "pass"
    assert lower_end_at_or_above(settings.target, entry.good, entry.measured, settings.confidence, settings.method)
    not_passing = [e.rate for e in result.evidence if e.verdict in ("fail", "unresolved")]
    assert all(result.capacity < r for r in not_passing)


SETTINGS = SearchSettings(target=0.9, min_rate=2.0, max_rate=40.0, tolerance=0.05)


def test_finds_the_knee_of_a_noisy_curve() -> None:
    knee = 10.0
    curve = knee_curve(knee, 0.2, 0.9)
    caps = []
    for seed in range(120):
        result, _ = run_search(SETTINGS, curve, seed=seed)
        shown_to_pass(result, SETTINGS)
        assert result.capacity is not None
        caps.append(result.capacity)
    caps_a = np.array(caps)
    # Never above the knee by more than noise allows; mostly within the search's resolution below it.
    assert caps_a.max() <= knee * 1.02
    assert np.mean(caps_a >= knee / 1.05**2) >= 0.9
    assert np.mean(caps_a <= knee) >= 0.95


def test_a_rate_where_attainment_is_clearly_short_never_passes() -> None:
    curve = knee_curve(10.0, 0.2, 0.9)
    short = 10.0 + 0.2 * (math.log(1 / 0.8 - 1) - math.log(1 / 0.9 - 1))  # where attainment is 0.8
    for seed in range(200):
        result, _ = run_search(SETTINGS, curve, seed=seed)
        assert result.capacity is not None and result.capacity < short


def test_never_claims_a_rate_not_shown_to_pass_on_any_curve() -> None:
    rng = np.random.default_rng(7)
    for trial in range(150):
        knee = float(rng.uniform(1, 30))
        width = float(rng.uniform(0.01, 3))
        target = float(rng.choice([0.5, 0.9, 0.95, 0.99]))
        settings = SearchSettings(target=target, min_rate=float(rng.choice([0.5, 1, 5])),
                                  max_rate=float(rng.choice([20, 40, 80])), tolerance=float(rng.choice([0.02, 0.05, 0.2])),
                                  max_points=int(rng.integers(1, 15)), method=rng.choice(["wilson", "clopper-pearson"]))
        result, observations = run_search(settings, knee_curve(knee, width, target), seed=trial,
                                          seconds=float(rng.uniform(2, 20)))
        shown_to_pass(result, settings)
        assert len(observations) <= settings.max_points


@pytest.mark.parametrize("max_points", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("points_before", [0, 1])
def test_stops_within_max_points(max_points: int, points_before: int) -> None:
    settings = SearchSettings(target=0.9, min_rate=1.0, max_rate=100.0, tolerance=0.001, max_points=max_points)
    for seed in range(20):
        result, observations = run_search(settings, knee_curve(17.3, 0.5, 0.9), seed=seed, points_before=points_before)
        assert points_before + len(observations) <= max_points
        assert result.status == "max_points" or points_before + len(observations) < max_points


def test_with_a_sharp_knee_and_no_noise_it_brackets_within_tolerance() -> None:
    settings = SearchSettings(target=0.9, min_rate=1.0, max_rate=64.0, tolerance=0.03, max_points=20)
    result, _ = run_search(settings, lambda r: 1.0 if r <= 12.5 else 0.0, seed=0, seconds=60)
    assert result.status == "bracketed"
    assert result.capacity is not None and result.upper is not None
    assert result.capacity <= 12.5 < result.upper <= result.capacity * 1.03


def test_a_straddling_point_is_repeated_then_left_unresolved() -> None:
    settings = SearchSettings(target=0.9, max_rate=20.0, max_repeats=2)
    rate = start_rate(settings)
    assert rate == 10.0
    obs = [Observation(rate, 45, 50)]  # 0.9 of 50: the interval straddles 0.9
    assert judge_rate(45, 50, settings)[0] == "undecided"
    assert next_step(settings, obs, 1) == Probe(rate, next_step(settings, obs, 1).reason)  # type: ignore[union-attr]
    obs.append(Observation(rate, 90, 100))
    step = next_step(settings, obs, 2)
    assert isinstance(step, Probe) and step.rate == rate
    obs.append(Observation(rate, 44, 50))
    step = next_step(settings, obs, 3)  # three runs: no more repeats, and it counts as not shown to pass
    assert isinstance(step, Probe) and step.rate < rate
    entry = pool(settings, obs)[0]
    assert (entry.verdict, entry.runs, entry.good, entry.measured) == ("unresolved", 3, 179, 200)


def test_a_saturated_client_is_not_evidence_and_caps_the_search() -> None:
    settings = SearchSettings(target=0.9, min_rate=1.0, max_rate=100.0, tolerance=0.05, max_points=20)
    result, observations = run_search(settings, knee_curve(50.0, 0.5, 0.9), seed=1, saturates_at=20.0)
    saturated = [o for o in observations if o.client_saturated]
    assert saturated, "the search should have met the saturated client"
    assert result.status == "client_limited"
    assert result.capacity is not None and result.capacity < 20.0
    assert result.upper is None  # nothing was shown to fail: saturation is no evidence either way
    for i, o in enumerate(observations):
        if o.client_saturated and i and observations[i - 1] == o:  # tried once more, then a limit:
            assert all(later.rate < o.rate for later in observations[i + 1:])  # nothing at or above it again
    lowest = min(o.rate for o in saturated)
    assert sum(1 for o in saturated if o.rate == lowest) == 2
    assert any("fell behind" in note for note in result.notes)


def test_a_pass_above_a_failing_rate_is_not_claimed() -> None:
    settings = SearchSettings(target=0.9, min_rate=1.0, max_rate=20.0)
    obs = [Observation(8.0, 100, 100), Observation(10.0, 10, 100), Observation(12.0, 100, 100)]
    result = conclude(settings, obs, Stop("max_points", "test"))
    assert (result.capacity, result.upper) == (8.0, 10.0)
    assert any("12" in note and "not claimed" in note for note in result.notes)


def test_below_min_and_at_least() -> None:
    settings = SearchSettings(target=0.9, min_rate=2.0, max_rate=8.0)
    low, _ = run_search(settings, lambda r: 0.0, seed=0, seconds=30)
    assert (low.status, low.capacity) == ("below_min", None)
    assert 2.0 in {e.rate for e in low.evidence}  # the lower limit itself was shown to fail
    high, _ = run_search(settings, lambda r: 1.0, seed=0, seconds=30)
    assert high.status == "at_least" and high.upper is None
    assert high.capacity is not None and 8.0 / 1.05 <= high.capacity < 8.0


def test_probe_rates_are_readable_and_inside() -> None:
    assert round_rate(6.2831853) == 6.28
    assert between(6.25, 6.3) == 6.28  # three digits when they fit
    assert between(6.25, 6.26) == 6.255  # more when they must
    assert between(2.0, 40.0) == 8.94  # a wide bracket: the geometric mean
    assert between(5.0, 5.0) is None
    assert start_rate(SearchSettings(target=0.9, min_rate=2.0, max_rate=40.0)) == 8.944
    assert start_rate(SearchSettings(target=0.9, max_rate=7.0, start_rate=9.0)) == 7.0


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"target": 1.0, "max_rate": 5.0}, "--attainment"),
    ({"target": 0.9, "max_rate": 5.0, "confidence": 1.5}, "--confidence"),
    ({"target": 0.9, "min_rate": 5.0, "max_rate": 5.0}, "--min-rate"),
    ({"target": 0.9, "max_rate": 5.0, "max_points": 0}, "--max-points"),
    ({"target": 0.9, "max_rate": 5.0, "method": "normal"}, "--interval"),
    ({"target": 0.9}, "needs a start"),
])
def test_settings_are_checked(kwargs: dict[str, object], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        SearchSettings(**kwargs)  # type: ignore[arg-type]


def test_no_repeat_when_it_could_not_move_the_answer_past_the_tolerance() -> None:
    settings = SearchSettings(target=0.9, max_rate=20.0, tolerance=0.05)
    obs = [Observation(10.0, 100, 100), Observation(11.0, 0, 100)]
    step = next_step(settings, obs, 2)
    assert step == Probe(10.5, step.reason)  # type: ignore[union-attr]
    obs.append(Observation(10.5, 90, 100))  # straddles: but [10, 10.5] is already within 5 %
    step = next_step(settings, obs, 3)
    assert isinstance(step, Stop) and step.status == "bracketed"
    result = conclude(settings, obs, step)
    assert (result.capacity, result.upper, result.at(10.5).verdict) == (10.0, 10.5, "unresolved")  # type: ignore[union-attr]
    wide = SearchSettings(target=0.9, max_rate=20.0, tolerance=0.01)
    assert next_step(wide, obs, 3) == Probe(10.5, next_step(wide, obs, 3).reason)  # type: ignore[union-attr]
