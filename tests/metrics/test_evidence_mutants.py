"""capacity_search.evidence: the settings' refusals word for word, each side of every bound; the pooled
verdict of a rate built by hand; and the requests a verdict needs, solved from the interval's closed form
at k = n (Wilson: n / (n + z²); Clopper–Pearson: ((1 − c)/2)^(1/n))."""

from __future__ import annotations

import math
import re

import pytest

from metrics.capacity_search.evidence import (
    Observation,
    RateEvidence,
    SearchSettings,
    judge_rate,
    pool,
    requests_for_a_verdict,
    requests_per_point,
)
from metrics.capacity_search.proportion import clopper_pearson_interval, wilson_interval

Z95 = 1.959963984540054


def _refused(message: str, **kwargs: object) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        SearchSettings(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("rate", [0.0, -1.0, math.inf, math.nan])
def test_an_observation_needs_a_finite_positive_rate(rate: float) -> None:
    with pytest.raises(ValueError, match=re.escape(f"a probe's rate must be > 0, got {rate}")):
        Observation(rate, 1, 2)


def test_an_observation_counts_good_within_measured() -> None:
    for good, measured in ((-1, 2), (3, 2), (-1, -1)):
        with pytest.raises(ValueError, match=re.escape(f"need 0 <= good <= measured, got {good} of {measured}")):
            Observation(1.0, good, measured)
    for good, measured in ((0, 0), (0, 2), (2, 2)):
        assert Observation(1e-3, good, measured).measured == measured


def test_settings_refusals_word_for_word() -> None:
    for target in (0.0, 1.0):
        _refused(f"--attainment must be in (0, 1), got {target:g}", target=target, min_rate=1.0)
    for confidence in (0.0, 1.0):
        _refused(f"--confidence must be in (0, 1), got {confidence:g}", target=0.9, confidence=confidence,
                 min_rate=1.0)
    _refused("--interval must be wilson or clopper-pearson, got 'agresti'", target=0.9, method="agresti",
             min_rate=1.0)
    for tolerance in (0.0, -0.1, math.inf):
        _refused(f"--tolerance must be > 0, got {tolerance:g}", target=0.9, tolerance=tolerance, min_rate=1.0)
    _refused("--max-points must be >= 1, got 0", target=0.9, max_points=0, min_rate=1.0)
    _refused("max_repeats must be >= 0, got -1", target=0.9, max_repeats=-1, min_rate=1.0)
    for name, key in (("--min-rate", "min_rate"), ("--max-rate", "max_rate"), ("start rate", "start_rate"),
                      ("floor rate", "floor_rate")):
        for value in (0.0, -2.0, math.inf):
            given: dict[str, object] = {"start_rate": 1.0, key: value}
            _refused(f"{name} must be > 0, got {value:g}", target=0.9, **given)
    _refused("--min-rate (4) must be below --max-rate (4)", target=0.9, min_rate=4.0, max_rate=4.0)
    _refused("--min-rate (5) must be below --max-rate (4)", target=0.9, min_rate=5.0, max_rate=4.0)
    _refused("a point of this length measures enough requests for a verdict only from 4.5 req/s, above "
             "--max-rate 4: lengthen --point-duration", target=0.9, max_rate=4.0, floor_rate=4.5)
    _refused("the search needs a start: --min-rate, --max-rate or a start rate", target=0.9)


def test_settings_accepted_at_their_bounds() -> None:
    s = SearchSettings(0.9, tolerance=1e-9, max_points=1, max_repeats=0, min_rate=1.0, max_rate=1.5,
                       floor_rate=1.5, method="clopper-pearson")
    assert (s.max_points, s.max_repeats, s.floor_rate) == (1, 0, 1.5)
    assert SearchSettings(0.9, max_rate=2.0).start_rate is None
    assert SearchSettings(0.9, start_rate=2.0).min_rate is None
    assert SearchSettings(0.9, min_rate=2.0, floor_rate=9.0).floor_rate == 9.0  # no max: no conflict


def test_judge_rate_against_the_interval_by_hand() -> None:
    s = SearchSettings(0.9, min_rate=1.0)
    # 50 of 50: Wilson's lower end 50 / (50 + z²) = 0.9287 >= 0.9.
    verdict, (lo, hi) = judge_rate(50, 50, s)
    assert verdict == "pass" and lo == pytest.approx(50 / (50 + Z95**2), abs=1e-12) and hi == 1.0
    # 30 of 50 (0.6): the upper end is below 0.9.
    assert judge_rate(30, 50, s)[0] == "fail"
    assert judge_rate(45, 50, s)[0] == "undecided"  # 0.786 .. 0.957 straddles 0.9
    # A target exactly at an end: "at or above" the lower end passes, "below" the upper end fails.
    lo45, hi45 = wilson_interval(45, 50)
    assert judge_rate(45, 50, SearchSettings(lo45, min_rate=1.0))[0] == "pass"
    assert judge_rate(45, 50, SearchSettings(hi45, min_rate=1.0))[0] == "undecided"
    assert judge_rate(45, 50, SearchSettings(math.nextafter(hi45, 1.0), min_rate=1.0))[0] == "fail"
    cp = SearchSettings(0.9, min_rate=1.0, method="clopper-pearson")
    assert judge_rate(45, 50, cp)[1] == clopper_pearson_interval(45, 50)


def test_pool_by_hand() -> None:
    s = SearchSettings(0.9, min_rate=1.0, max_repeats=2)
    obs = [
        Observation(4.0, 50, 50),
        Observation(8.0, 15, 25), Observation(8.0, 25, 25, client_saturated=True),  # one run left out
        Observation(2.0, 0, 0),  # evidence, but measured nothing
        Observation(16.0, 5, 5, client_saturated=True),  # nothing but a saturated run
        Observation(6.0, 45, 50),  # undecided, but not the last rate probed: unresolved
        Observation(12.0, 45, 50), Observation(12.0, 44, 50),  # the last rate, two runs: may repeat
    ]
    got = {e.rate: e for e in pool(s, obs)}
    assert list(got) == [2.0, 4.0, 6.0, 8.0, 12.0, 16.0]
    assert got[2.0] == RateEvidence(2.0, 0, 0, 1, 0, "too_short", None)
    assert got[2.0].attainment is None
    assert (got[4.0].verdict, got[4.0].good, got[4.0].measured, got[4.0].runs) == ("pass", 50, 50, 1)
    assert got[6.0].verdict == "unresolved" and got[6.0].interval == wilson_interval(45, 50)
    e8 = got[8.0]
    assert (e8.good, e8.measured, e8.runs, e8.saturated_runs, e8.verdict) == (15, 25, 2, 1, "fail")
    assert e8.attainment == 0.6
    assert (got[12.0].good, got[12.0].measured, got[12.0].verdict) == (89, 100, "undecided")
    assert got[16.0] == RateEvidence(16.0, 0, 0, 1, 1, "not_evidence", None)
    # A third run at the last rate spends its repeats (one run and max_repeats more): unresolved.
    third = pool(s, [*obs, Observation(12.0, 45, 50)])
    assert third[-2].rate == 12.0 and third[-2].runs == 3 and third[-2].verdict == "unresolved"
    assert pool(s, []) == []


def test_requests_for_a_verdict_by_hand() -> None:
    # Wilson, n of n: lower = n / (n + z²) >= target  <=>  n >= z²·target / (1 − target).
    # 0.895 needs 33 = 2⁵ + 1 and 0.9435 needs 65 = 2⁶ + 1: just past a power of two, where a search that
    # doubles its bracket must not step over the answer.
    for target in (0.5, 0.895, 0.9, 0.9435, 0.95, 0.99):
        s = SearchSettings(target, min_rate=1.0)
        assert requests_for_a_verdict(s) == math.ceil(Z95**2 * target / (1 - target))
    assert requests_for_a_verdict(SearchSettings(0.895, min_rate=1.0)) == 33
    assert requests_for_a_verdict(SearchSettings(0.9435, min_rate=1.0)) == 65
    # Clopper–Pearson, n of n: lower = 0.025^(1/n) >= target  <=>  n >= ln 0.025 / ln target.
    for target in (0.5, 0.9, 0.99):
        s = SearchSettings(target, min_rate=1.0, method="clopper-pearson")
        assert requests_for_a_verdict(s) == math.ceil(math.log(0.025) / math.log(target))
    assert requests_for_a_verdict(SearchSettings(0.1, min_rate=1.0)) == 1  # 1 / (1 + z²) = 0.207


def test_requests_per_point_spreads_them_over_the_runs_allowed() -> None:
    # 35 requests (Wilson at 0.9) over 1 + max_repeats runs, rounded up.
    for repeats, per_point in ((0, 35), (1, 18), (2, 12), (4, 7), (34, 1)):
        assert requests_per_point(SearchSettings(0.9, min_rate=1.0, max_repeats=repeats)) == per_point
