"""`compare_runs`: the weighted bootstrap statistic equals the statistic of the resampled data, a real
shift is flagged in the right direction, the same distribution is not, and rows a bootstrap cannot judge
get no interval."""

from __future__ import annotations

import numpy as np
import pytest

from metrics.gate.compare import (
    Row,
    compare_runs,
    enough_for_interval,
    parse_stat,
    resample_stat,
    weighted_stat,
)
from metrics.gate.run_samples import RunSamples
from metrics.records.frame import frame_from_records
from metrics.records.record import RequestRecord
from metrics.slo import parse_slo
from metrics.summary.build import SummaryConfig
from tests.metrics._records import rec

CONFIG = SummaryConfig(slo=parse_slo(["ttft=300ms"]))


def _records(n: int, *, seed: int, ttft_scale: float = 1.0, fail_every: int = 0) -> list[RequestRecord]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        a = 50.0 * i
        ttft = float(rng.lognormal(np.log(100), 0.3)) * ttft_scale  # ms, median 100
        gaps = rng.gamma(4.0, 2.5, 7)
        chunks = list(a + ttft + np.concatenate(([0.0], np.cumsum(gaps))))
        if fail_every and i % fail_every == 0:
            out.append(rec(i, a=a, d=a, chunks=[], n=0, closed=a + 5, status="error", error_kind="http_status",
                           prompt_tokens=100 if i % 2 else 1000, prompt_tokens_estimated=False))
            continue
        out.append(rec(i, a=a, d=a, chunks=chunks, closed=chunks[-1] + 1,
                       prompt_tokens=100 if i % 2 else 1000, prompt_tokens_estimated=False, cached_tokens=0))
    return out


def _samples(records: list[RequestRecord]) -> RunSamples:
    return RunSamples(frame_from_records(records), CONFIG)


@pytest.mark.parametrize("stat", ["ttft:p(50)", "ttft:p(99)", "ttft:p(0)", "ttft:p(100)", "ttft:p(37.5)",
                                  "ttft:avg", "ttft:std", "ttft:min", "ttft:max", "ttft:count"])
def test_weighted_stat_is_the_stat_of_the_resampled_data(stat: str) -> None:
    rng = np.random.default_rng(7)
    values = np.sort(rng.gamma(2.0, 1.0, 40))
    weights = rng.integers(0, 4, size=(25, 40))
    weights[0] = 0
    weights[0, 3] = 2  # a resample that drew one value twice
    query = parse_stat(stat)
    got = weighted_stat(values, weights, query)
    ops = {"p": lambda x: np.percentile(x, query.percentile), "mean": np.mean, "std": np.std, "min": np.min,
           "max": np.max, "count": len}
    expected = [float(ops[query.agg](np.repeat(values, w))) for w in weights]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)


def test_empty_resample_is_nan() -> None:
    got = weighted_stat(np.array([1.0, 2.0]), np.zeros((2, 2), dtype=np.int64), parse_stat("ttft:p(50)"))
    assert np.isnan(got).all()


def test_resampling_is_seeded() -> None:
    run = _samples(_records(60, seed=1))
    query = parse_stat("itl:p(90)")
    sel = run.select(())
    first = resample_stat(run, query, sel, 200, np.random.default_rng(5))
    again = resample_stat(run, query, sel, 200, np.random.default_rng(5))
    other = resample_stat(run, query, sel, 200, np.random.default_rng(6))
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    assert np.nanstd(first) > 0


def _row(rows: list[Row], scope: str, stat: str) -> Row:
    return next(r for r in rows if r.scope == scope and r.query.describe() == stat)


def test_a_slower_candidate_is_a_regression() -> None:
    base, cand = _samples(_records(200, seed=1)), _samples(_records(200, seed=2, ttft_scale=1.5))
    rows = compare_runs(base, cand, ["ttft:p(50)", "ttft:avg", "itl:p(50)", "goodput:attainment"], resamples=500)
    ttft = _row(rows, "all", "ttft:p(50)")
    assert ttft.flag == "regression" and ttft.ci is not None and ttft.ci[0] > 0
    assert ttft.delta == pytest.approx(ttft.cand - ttft.base) and ttft.relative == pytest.approx(ttft.delta / ttft.base)
    assert _row(rows, "all", "ttft:avg").flag == "regression"
    assert _row(rows, "all", "itl:p(50)").flag == ""  # the gaps did not change
    # the faster run, seen the other way round, is an improvement
    back = compare_runs(cand, base, ["ttft:p(50)"], resamples=500, buckets=False)
    assert back[0].flag == "improvement"


def test_lower_attainment_and_more_errors_are_regressions() -> None:
    base = _samples(_records(200, seed=1))
    cand = _samples(_records(200, seed=1, fail_every=4))
    rows = compare_runs(base, cand, ["goodput:attainment", "errors:rate"], resamples=500, buckets=False)
    assert [r.flag for r in rows] == ["regression", "regression"]
    assert rows[1].cand == pytest.approx(0.25) and rows[1].base == 0


def test_the_same_distribution_is_not_flagged() -> None:
    base, cand = _samples(_records(200, seed=1)), _samples(_records(200, seed=2))
    rows = compare_runs(base, cand, resamples=500)
    assert [r for r in rows if r.flag] == []
    assert sum(r.ci is not None for r in rows) >= 5  # intervals were computed, and include zero


def test_bonferroni_and_min_change() -> None:
    base, cand = _samples(_records(200, seed=1)), _samples(_records(200, seed=2, ttft_scale=1.3))
    rows = compare_runs(base, cand, ["ttft:p(50)", "ttft:avg", "tpot:p(50)"], resamples=500, buckets=False)
    assert [r.confidence for r in rows] == pytest.approx([1 - 0.05 / 3] * 3)
    assert _row(rows, "all", "ttft:p(50)").flag == "regression"
    strict = compare_runs(base, cand, ["ttft:p(50)"], resamples=500, buckets=False, min_change=0.5)
    assert strict[0].flag == "" and strict[0].ci is not None and strict[0].ci[0] > 0


def test_rows_without_an_interval() -> None:
    base, cand = _samples(_records(40, seed=1)), _samples(_records(40, seed=2, ttft_scale=3))
    rows = compare_runs(base, cand, ["ttft:p(99)", "ttft:max", "goodput:rate", "throughput:output_tokens_per_s",
                                     "ttft:p(50)"], resamples=200, buckets=False)
    notes = {r.query.describe(): (r.ci, r.flag, r.note) for r in rows}
    assert notes["ttft:p(99)"] == (None, "", "too few samples for an interval")  # 40 × 1% < 5 samples past p99
    assert notes["ttft:max"] == (None, "", "no interval for this statistic")
    assert notes["goodput:rate"][0] is None and notes["throughput:output_tokens_per_s"][0] is None
    assert notes["ttft:p(50)"][1] == "regression"
    assert enough_for_interval(parse_stat("ttft:p(99)"), 500, 500)
    assert not enough_for_interval(parse_stat("ttft:p(99)"), 499, 499)
    assert not enough_for_interval(parse_stat("ttft:avg"), 9, 9)


def test_bucket_rows_skip_the_whole_run_again() -> None:
    base, cand = _samples(_records(100, seed=1)), _samples(_records(100, seed=2))
    scopes = {r.scope for r in compare_runs(base, cand, ["ttft:p(50)"], resamples=200)}
    # prompt sizes split the run; every request has cache "none" and one output bucket: no rows for those
    assert scopes == {"all", "prompt_tokens=0-128", "prompt_tokens=512-2k"}


def test_bad_settings() -> None:
    run = _samples(_records(20, seed=1))
    with pytest.raises(ValueError, match="resamples"):
        compare_runs(run, run, resamples=10)
    with pytest.raises(ValueError, match="confidence"):
        compare_runs(run, run, confidence=1.0)
    with pytest.raises(ValueError, match="unknown metric"):
        compare_runs(run, run, ["latency:p(50)"])
