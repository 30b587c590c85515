"""`goodput compare` on runs whose answer is known by hand: every request of a run with the same TTFT (so
every bootstrap resample gives the run's own value and the interval of the change is a point), the rules
for which rows get an interval, and the refusals word for word."""

from __future__ import annotations

import inspect
import math
import re

import numpy as np
import pytest

from metrics.gate.compare import (
    Row,
    bootstrappable,
    compare_runs,
    enough_for_interval,
    higher_is_worse,
    parse_stat,
    resample_stat,
)
from metrics.gate.compare_rule import INCLUDES_ZERO
from metrics.gate.run_samples import RunSamples
from metrics.gate.thresholds import Query
from metrics.records.frame import frame_from_records
from metrics.slo import parse_slo
from metrics.summary.build import SummaryConfig
from tests.metrics._records import rec

CONFIG = SummaryConfig(slo=parse_slo(["ttft=300ms"]))


def _flat(n: int, ttft_ms: float) -> RunSamples:
    """n requests 50 ms apart, each with TTFT `ttft_ms` and three 10 ms gaps."""
    records = []
    for i in range(n):
        a = 50.0 * i
        chunks = [a + ttft_ms + 10.0 * j for j in range(4)]
        records.append(rec(i, a=a, d=a, chunks=chunks, closed=chunks[-1] + 1, prompt_tokens=100,
                           prompt_tokens_estimated=False, cached_tokens=0))
    return RunSamples(frame_from_records(records), CONFIG)


def _row(rows: list[Row], stat: str, scope: str = "all") -> Row:
    return next(r for r in rows if r.scope == scope and r.query.describe() == stat)


def test_a_constant_shift_has_a_point_interval() -> None:
    base, cand = _flat(40, 100.0), _flat(30, 150.0)
    rows = compare_runs(base, cand, ["ttft:p(50)", "ttft:avg", "itl:p(50)"], resamples=100, buckets=False)
    ttft = _row(rows, "ttft:p(50)")
    assert (ttft.base, ttft.cand) == (pytest.approx(0.100), pytest.approx(0.150))
    assert ttft.ci == (pytest.approx(0.050), pytest.approx(0.050))
    assert (ttft.base_n, ttft.cand_n, ttft.flag, ttft.why, ttft.note) == (40, 30, "regression", "", "")
    assert ttft.delta == pytest.approx(0.05) and ttft.relative == pytest.approx(0.5)
    assert ttft.spread is None and ttft.base_runs == (pytest.approx(0.1),)
    # Three rows with intervals: each at 1 − 0.05/3.
    assert [r.confidence for r in rows] == [pytest.approx(1 - 0.05 / 3)] * 3
    itl = _row(rows, "itl:p(50)")  # the gaps did not change: a point interval at 0 includes zero
    assert itl.ci == (pytest.approx(0.0, abs=1e-12), pytest.approx(0.0, abs=1e-12))
    assert (itl.flag, itl.why) == ("", INCLUDES_ZERO)
    # The other way round, a faster candidate: an improvement, and relative to |baseline|.
    [back] = compare_runs(cand, base, ["ttft:p(50)"], resamples=100, buckets=False)
    assert back.flag == "improvement" and back.relative == pytest.approx(-0.05 / 0.15)


def test_repeated_baselines_are_averaged_and_spread() -> None:
    bases = [_flat(20, 100.0), _flat(20, 110.0), _flat(20, 120.0)]
    [row] = compare_runs(bases, _flat(20, 400.0), ["ttft:p(50)"], resamples=100, buckets=False)
    assert row.base == pytest.approx(0.110) and row.base_n == 60 and len(row.base_runs) == 3
    # s = 0.01 over three runs; t(2) at 95 % = 4.302653; × √(1 + 1/3).
    assert row.spread == pytest.approx(4.302653 * 0.01 * np.sqrt(4 / 3), rel=1e-5)
    assert row.ci == (pytest.approx(0.29), pytest.approx(0.29)) and row.flag == "regression"


def test_a_relative_change_needs_a_nonzero_baseline() -> None:
    [row] = compare_runs(_flat(20, 100.0), _flat(20, 100.0), ["errors:rate"], resamples=100, buckets=False)
    assert (row.base, row.cand, row.delta, row.relative) == (0.0, 0.0, 0.0, None)
    assert row.ci == (0.0, 0.0) and row.flag == "" and row.why == INCLUDES_ZERO


def test_which_direction_is_worse() -> None:
    assert higher_is_worse(parse_stat("ttft:p(50)")) and higher_is_worse(parse_stat("errors:rate"))
    assert not higher_is_worse(parse_stat("fluidity:avg"))
    assert not higher_is_worse(parse_stat("goodput:attainment"))
    assert not higher_is_worse(parse_stat("throughput:output_tokens_per_s"))


def test_which_statistics_a_bootstrap_can_judge() -> None:
    for stat in ("ttft:p(50)", "ttft:avg", "ttft:std", "itl:p(99)", "goodput:attainment", "errors:rate"):
        assert bootstrappable(parse_stat(stat)), stat
    for stat in ("ttft:min", "ttft:max", "ttft:count", "goodput:rate", "goodput:count", "errors:count",
                 "throughput:output_tokens_per_s", "requests:count"):
        assert not bootstrappable(parse_stat(stat)), stat


def test_enough_for_an_interval_at_each_bound() -> None:
    avg, p10, p50 = parse_stat("ttft:avg"), parse_stat("ttft:p(10)"), parse_stat("ttft:p(50)")
    assert enough_for_interval(avg, 10, 10)
    assert not enough_for_interval(avg, 9, 10) and not enough_for_interval(avg, 10, 9)
    # p(10): 10 % of the samples must be at least 5: 50 samples yes, 49 no (on either side: 90 % of 50 is
    # plenty, so the smaller side decides).
    assert enough_for_interval(p10, 50, 10) and not enough_for_interval(p10, 49, 49)
    assert enough_for_interval(p50, 10, 10)  # half of 10 is 5


def test_resampling_one_request_gives_it_back_every_time() -> None:
    run = _flat(1, 80.0)
    got = resample_stat(run, parse_stat("ttft:p(50)"), run.select(()), 100, np.random.default_rng(0))
    np.testing.assert_allclose(got, 0.080)
    got = resample_stat(run, parse_stat("goodput:attainment"), run.select(()), 100, np.random.default_rng(0))
    np.testing.assert_array_equal(got, 1.0)
    empty = run.select((("prompt_tokens", "512-2k"),))
    got = resample_stat(run, parse_stat("ttft:p(50)"), empty, 100, np.random.default_rng(0))
    assert got.shape == (100,) and np.isnan(got).all()


def test_rows_below_the_interval_thresholds_carry_a_note() -> None:
    rows = compare_runs(_flat(9, 100.0), _flat(20, 300.0), ["ttft:p(50)", "ttft:min"], resamples=100,
                        buckets=False)
    assert [(r.ci, r.confidence, r.flag, r.note) for r in rows] == [
        (None, None, "", "too few samples for an interval"), (None, None, "", "no interval for this statistic")]


def test_bucket_rows_and_throughput() -> None:
    rows = compare_runs(_mixed(100.0), _mixed(200.0), ["throughput:output_tokens_per_s", "ttft:p(50)"],
                        resamples=100)
    scopes = [(r.scope, r.query.describe()) for r in rows]
    # throughput has no per-bucket figure: only the whole run's row
    assert scopes == [("all", "throughput:output_tokens_per_s"), ("all", "ttft:p(50)"),
                      ("prompt_tokens=0-128", "ttft{prompt_tokens:0-128}:p(50)"),
                      ("prompt_tokens=512-2k", "ttft{prompt_tokens:512-2k}:p(50)")]
    for r in rows:
        if r.query.metric == "ttft":
            assert r.ci == (pytest.approx(0.1), pytest.approx(0.1)) and r.flag == "regression"
    assert [r.confidence for r in rows if r.ci is not None] == [pytest.approx(1 - 0.05 / 3)] * 3


def _mixed(ttft_ms: float) -> RunSamples:
    records = []
    for i in range(40):
        a = 50.0 * i
        chunks = [a + ttft_ms + 10.0 * j for j in range(4)]
        records.append(rec(i, a=a, d=a, chunks=chunks, closed=chunks[-1] + 1, prompt_tokens=100 if i % 2 else 1000,
                           prompt_tokens_estimated=False, cached_tokens=0))
    return RunSamples(frame_from_records(records), CONFIG)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"resamples": 99}, "resamples must be >= 100, got 99"),
    ({"confidence": 0.0}, "confidence must be in (0, 1), got 0.0"),
    ({"confidence": 1.0}, "confidence must be in (0, 1), got 1.0"),
    ({"min_change": -0.01}, "the minimum change must not be negative"),
    ({"min_change_abs": -0.001}, "the minimum change must not be negative"),
])
def test_refusals_word_for_word(kwargs: dict[str, float], message: str) -> None:
    run = _flat(10, 100.0)
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        compare_runs(run, run, ["ttft:p(50)"], **kwargs)  # type: ignore[arg-type]


def test_the_least_settings_are_accepted() -> None:
    run = _flat(10, 100.0)
    [row] = compare_runs(run, run, ["ttft:avg"], resamples=100, min_change=0.0, min_change_abs=0.0,
                         buckets=False)
    assert row.ci == (pytest.approx(0.0, abs=1e-12), pytest.approx(0.0, abs=1e-12))
    with pytest.raises(ValueError, match=r"^compare needs at least one baseline run$"):
        compare_runs([], run)


def test_a_stat_with_a_filter_is_refused() -> None:
    with pytest.raises(ValueError, match=re.escape(
            "--stat 'ttft{cache:none}:p(50)': compare takes no {filter}; it reports every bucket itself")):
        parse_stat("ttft{cache:none}:p(50)")
    assert parse_stat("ttft:p(99)") == Query("ttft", "p", 99.0, (), "duration")


def _tagged(ttft_ms: float, tags: list[dict[str, str]], *, fail: bool = False) -> RunSamples:
    """One request per entry of `tags`, 50 ms apart, each with TTFT `ttft_ms` (or every one failed)."""
    records = []
    for i, tag in enumerate(tags):
        a = 50.0 * i
        if fail:
            records.append(rec(i, a=a, d=a, chunks=[], n=0, closed=a + 5, status="error", error_kind="http_status",
                               prompt_tokens=100, prompt_tokens_estimated=False, tags=tag))
            continue
        chunks = [a + ttft_ms + 10.0 * j for j in range(4)]
        records.append(rec(i, a=a, d=a, chunks=chunks, closed=chunks[-1] + 1, prompt_tokens=100,
                           prompt_tokens_estimated=False, cached_tokens=0, tags=tag))
    return RunSamples(frame_from_records(records), CONFIG)


def test_a_baseline_run_without_data_gives_no_baseline() -> None:
    good, failed = _tagged(100.0, [{}] * 20), _tagged(100.0, [{}] * 20, fail=True)
    [row] = compare_runs([good, failed], _flat(20, 300.0), ["ttft:p(50)"], resamples=100, buckets=False)
    # The failed run has no TTFT: no baseline (not the mean of the one run that has one), no spread.
    assert (row.base, row.base_runs, row.spread, row.delta, row.relative) == (None, (), None, None, None)
    # The failed run has too few samples for an interval, which the note says first.
    assert (row.ci, row.flag, row.why, row.note) == (None, "", "", "too few samples for an interval")
    # A row with data and without an interval says why in its note, and has no `why`.
    [row] = compare_runs(good, _flat(20, 300.0), ["ttft:max"], resamples=100, buckets=False)
    assert (row.note, row.why, row.base) == ("no interval for this statistic", "", pytest.approx(0.1))


def test_durations_have_an_absolute_floor() -> None:
    # +0.5 ms on a 2 ms TTFT is +25 %, above 5 % of the baseline but below the 1 ms floor for durations.
    [row] = compare_runs(_flat(20, 2.0), _flat(20, 2.5), ["ttft:p(50)"], resamples=100, buckets=False)
    assert row.ci == (pytest.approx(0.0005), pytest.approx(0.0005))
    assert (row.flag, row.why) == ("", "below min change")
    [row] = compare_runs(_flat(20, 2.0), _flat(20, 3.5), ["ttft:p(50)"], resamples=100, buckets=False)
    assert row.flag == "regression"  # +1.5 ms clears it


def test_a_dimension_missing_from_one_run_skips_only_itself() -> None:
    # Tags sort as dimensions: "alpha" (baseline only) comes before "beta" (both runs).
    two = [{"alpha": "x", "beta": "p"}, {"alpha": "y", "beta": "q"}] * 10
    one = [{"beta": "p"}, {"beta": "q"}] * 10
    rows = compare_runs(_tagged(100.0, two), _tagged(200.0, one), ["ttft:p(50)"], resamples=100)
    assert [r.scope for r in rows] == ["all", "tag:beta=p", "tag:beta=q"]
    assert all(r.base_n == r.cand_n for r in rows) and [r.base_n for r in rows] == [20, 10, 10]


def test_defaults_and_seeding() -> None:
    # docs/gating.md: 2000 resamples by default, seeded (seed 0 unless --seed): the same inputs, the same table.
    params = inspect.signature(compare_runs).parameters
    assert (params["resamples"].default, params["seed"].default, params["confidence"].default) == (2000, 0, 0.95)
    base, cand = _bernoulli(60, 45), _bernoulli(60, 50)
    first = compare_runs(base, cand, ["goodput:attainment"], resamples=200, buckets=False)
    again = compare_runs(base, cand, ["goodput:attainment"], resamples=200, buckets=False)
    assert first[0].ci is not None and first[0].ci[0] < first[0].ci[1] and first == again
    # One row with an interval: no Bonferroni share, the table's own confidence.
    assert first[0].confidence == 0.95


def test_errors_are_resampled_from_the_failures() -> None:
    [row] = compare_runs(_flat(20, 100.0), _tagged(100.0, [{}] * 20, fail=True), ["errors:rate"], resamples=100,
                         buckets=False)
    assert (row.base, row.cand, row.ci, row.flag) == (0.0, 1.0, (1.0, 1.0), "regression")


def _bernoulli(n: int, good: int) -> RunSamples:
    """n requests of which the first `good` meet the 300 ms TTFT SLO (100 ms) and the rest miss it (400 ms)."""
    records = []
    for i in range(n):
        a, ttft = 50.0 * i, 100.0 if i < good else 400.0
        chunks = [a + ttft + 10.0 * j for j in range(4)]
        records.append(rec(i, a=a, d=a, chunks=chunks, closed=chunks[-1] + 1, prompt_tokens=100,
                           prompt_tokens_estimated=False, cached_tokens=0))
    return RunSamples(frame_from_records(records), CONFIG)


def _binomial_quantile(q: float, n: int, p: float) -> int:
    """The smallest k with P(X <= k) >= q for X ~ Binomial(n, p), summed exactly."""
    total = 0.0
    for k in range(n + 1):
        total += math.comb(n, k) * p**k * (1 - p) ** (n - k)
        if total >= q:
            return k
    return n


def test_the_interval_is_the_bootstraps_percentile_interval() -> None:
    # Baseline: 800 of 1000 requests good; candidate: all good. A resample of the baseline draws each
    # request ~ Binomial, so its attainment is Binomial(1000, 0.8) / 1000 and the candidate's is always 1:
    # the change's 95 % percentile interval is 1 − (its 97.5 % and 2.5 % quantiles) / 1000.
    base, cand = _bernoulli(1000, 800), _bernoulli(1000, 1000)
    [row] = compare_runs(base, cand, ["goodput:attainment"], resamples=10_000, buckets=False)
    lo = 1 - _binomial_quantile(0.975, 1000, 0.8) / 1000
    hi = 1 - _binomial_quantile(0.025, 1000, 0.8) / 1000
    assert row.ci is not None
    assert row.ci[0] == pytest.approx(lo, abs=0.0015) and row.ci[1] == pytest.approx(hi, abs=0.0015)
    assert (row.base, row.cand, row.flag) == (pytest.approx(0.8), 1.0, "improvement")
