"""Delta histograms and Prometheus-style quantiles of a server's metrics (pure math and parsing)."""

from __future__ import annotations

import numpy as np
import pytest

from loadgen.run.scrape import Snapshot, parse_exposition, prometheus_section
from metrics.server.histograms import (
    INF,
    CumulativeHistogram,
    bucket_of,
    counter_delta,
    histogram_delta,
    histogram_quantile,
)

VLLM_TEXT = """\
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{le="0.1",model_name="a"} {a1}
vllm:time_to_first_token_seconds_bucket{le="0.5",model_name="a"} {a2}
vllm:time_to_first_token_seconds_bucket{le="+Inf",model_name="a"} {a3}
vllm:time_to_first_token_seconds_count{model_name="a"} {a3}
vllm:time_to_first_token_seconds_sum{model_name="a"} {asum}
vllm:time_to_first_token_seconds_bucket{le="0.1",model_name="b"} 1.0
vllm:time_to_first_token_seconds_bucket{le="0.5",model_name="b"} 1.0
vllm:time_to_first_token_seconds_bucket{le="+Inf",model_name="b"} 1.0
vllm:time_to_first_token_seconds_count{model_name="b"} 1.0
vllm:time_to_first_token_seconds_sum{model_name="b"} 0.05
# HELP vllm:prompt_tokens_total Number of prefill tokens processed.
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{model_name="a"} {prompt}
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="a"} {running}
vllm:num_requests_running{model_name="b"} 1.0
# HELP vllm:kv_cache_usage_perc KV-cache usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{model_name="a"} 0.2
vllm:kv_cache_usage_perc{model_name="b"} 0.4
"""


def _text(**values: float) -> str:
    text = VLLM_TEXT
    for key, value in values.items():
        text = text.replace("{" + key + "}", repr(float(value)))
    return text


def test_parse_sums_label_sets_and_averages_usage() -> None:
    snap = parse_exposition(_text(a1=2, a2=5, a3=6, asum=1.5, prompt=100, running=3))
    hist = snap.histograms["vllm:time_to_first_token_seconds"]
    assert hist.bounds == (0.1, 0.5, INF)
    assert hist.counts == (3.0, 6.0, 7.0)
    assert hist.total == pytest.approx(1.55)
    assert snap.counters == {"vllm:prompt_tokens": 100.0}
    assert snap.gauges["vllm:num_requests_running"] == 4.0
    assert snap.gauges["vllm:kv_cache_usage_perc"] == pytest.approx(0.3)


def test_quantile_follows_prometheus_interpolation() -> None:
    hist = CumulativeHistogram((0.1, 0.5, 1.0, INF), (10.0, 30.0, 40.0, 40.0), 9.0)
    # rank 20 of 40: in (0.1, 0.5], 10 of its 20 observations in → halfway
    assert histogram_quantile(0.5, hist) == pytest.approx(0.3)
    # rank 4: first bucket interpolates from 0
    assert histogram_quantile(0.1, hist) == pytest.approx(0.04)
    assert histogram_quantile(1.0, hist) == pytest.approx(1.0)
    in_inf = CumulativeHistogram((0.1, 0.5, INF), (1.0, 2.0, 10.0), 50.0)
    assert histogram_quantile(0.99, in_inf) == 0.5  # rank in +Inf: the highest finite bound
    assert histogram_quantile(0.5, CumulativeHistogram((0.1, INF), (0.0, 0.0), 0.0)) is None
    with pytest.raises(ValueError):
        histogram_quantile(1.5, hist)
    assert bucket_of(0.3, [0.1, 0.5, 1.0]) == (0.1, 0.5)
    assert bucket_of(0.5, [0.1, 0.5, 1.0]) == (0.1, 0.5)  # le: a bound belongs to its own bucket
    assert bucket_of(0.05, [0.1, 0.5]) == (0.0, 0.1)


def test_deltas_and_resets() -> None:
    before = CumulativeHistogram((0.1, INF), (2.0, 3.0), 0.5)
    after = CumulativeHistogram((0.1, INF), (5.0, 9.0), 2.5)
    delta, reset = histogram_delta(before, after)
    assert (delta.counts, delta.total, reset) == ((3.0, 6.0), 2.0, False)
    restarted = CumulativeHistogram((0.1, INF), (1.0, 1.0), 0.01)
    assert histogram_delta(before, restarted) == (restarted, True)
    assert counter_delta(10.0, 25.0) == (15.0, False)
    assert counter_delta(10.0, 4.0) == (4.0, True)
    assert counter_delta(None, None) == (None, False)


def test_section_reports_deltas_series_and_absent_metrics() -> None:
    first = parse_exposition(_text(a1=2, a2=5, a3=6, asum=1.5, prompt=100, running=0), unix_s=10.0)
    last = parse_exposition(_text(a1=12, a2=25, a3=26, asum=5.5, prompt=700, running=2), unix_s=20.0)
    series = [{"running": 1.0, "kv_cache_usage": 0.3}, {"running": 3.0, "kv_cache_usage": 0.3}]
    section = prometheus_section([first, last], series, url="u", interval_s=1.0, failures=[])
    ttft = section["histograms"]["ttft_s"]
    assert ttft["count"] == 20.0 and ttft["sum"] == pytest.approx(4.0)
    assert ttft["p50"] == pytest.approx(0.1 + 0.4 * (10 - 10) / 20)  # rank 10 = all of the first bucket
    assert section["counters"]["prompt_tokens"] == {"metric": "vllm:prompt_tokens_total", "delta": 600.0}
    assert section["gauges"]["running"]["max"] == 3.0
    assert "vllm:num_requests_waiting" in section["absent"]
    assert "vllm:generation_tokens_total" in section["absent"]
    assert "waiting" not in section["gauges"] and "generation_tokens" not in section["counters"]
    assert section["prefix_cache_hit_rate"] is None  # absent, not 0
    assert prometheus_section([Snapshot(unix_s=1.0)], [], url="u", interval_s=1.0,
                              failures=["boom"])["available"] is False


def test_rank_bucket_names_the_open_bucket_for_inf() -> None:
    from metrics.server.histograms import histogram_figures, rank_bucket

    hist = CumulativeHistogram((0.1, 0.5, INF), (1.0, 2.0, 10.0), 50.0)
    assert rank_bucket(0.05, hist) == (0.0, 0.1)
    assert rank_bucket(0.99, hist) == (0.5, None)
    figures = histogram_figures(hist)
    assert figures["p99"] == 0.5 and figures["p99_bucket"] == [0.5, None] and figures["mean"] == 5.0


def _histogram(values: np.ndarray, bounds: tuple[float, ...]) -> CumulativeHistogram:
    """What a Prometheus histogram with these bounds (+Inf last) holds after observing `values`."""
    counts = tuple(float(np.sum(values <= b)) for b in bounds)
    return CumulativeHistogram(bounds, counts, float(values.sum()))


def test_a_quantile_in_a_coarse_first_bucket_is_held_to_what_the_sum_allows() -> None:
    from metrics.server.histograms import histogram_figures

    # vLLM's queue-time histogram starts at 0.3 s; 160 requests queued ~20 µs each.
    queue = np.full(160, 2e-05)
    figures = histogram_figures(_histogram(queue, (0.3, 0.5, 0.8, 1.0, INF)))
    assert figures["mean"] == pytest.approx(2e-05)
    assert figures["p50_bucket"] == [0.0, 0.3]  # interpolation alone says 0.15 s
    # At most 80 of the 160 can reach the p50 (rank 81 up), so p50 ≤ 0.0032 s / 80 = 40 µs.
    assert figures["p50_range"] == [0.0, pytest.approx(4e-05)] and figures["p50"] <= 4e-05 + 1e-12
    for key in ("p50", "p90", "p95", "p99"):
        low, high = figures[f"{key}_range"]
        assert low <= figures[key] <= high <= 0.0032 + 1e-12


@pytest.mark.parametrize("seed", range(6))
def test_the_true_quantile_lies_in_the_published_range(seed: int) -> None:
    from metrics.server.histograms import histogram_figures

    rng = np.random.default_rng(seed)
    values = rng.lognormal(mean=-4 + seed, sigma=0.5 + seed / 3, size=int(rng.integers(5, 400)))
    bounds = (0.001, 0.005, 0.02, 0.1, 0.3, 1.0, 5.0, INF)
    figures = histogram_figures(_histogram(values, bounds))
    for key, q in (("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99)):
        true = float(np.percentile(values, q * 100, method="inverted_cdf"))  # the value at rank ceil(q × n)
        low, high = figures[f"{key}_range"]
        assert low <= true <= (high if high is not None else INF)
        assert low <= figures[key] <= (high if high is not None else INF)
