"""RunSamples (what thresholds and `goodput compare` read) against a hand-worked run: every request
aggregation, the bucket filters, and the latency aggregations, each built afresh per test."""

from __future__ import annotations

from typing import Any

import pytest

from metrics.gate.run_samples import RunSamples, latency_stat
from metrics.gate.thresholds import Query, parse_threshold
from metrics.latency.aggregate import Stats
from metrics.records.frame import frame_from_records
from metrics.slo import parse_slo
from metrics.summary.build import SummaryConfig
from tests.metrics._records import rec

CONFIG = SummaryConfig(slo=parse_slo(["ttft=150ms"]), warmup_s=0.5)


def _samples() -> RunSamples:
    records = [
        rec(0, a=0, d=0, chunks=[10], closed=20, tags={"t": "a"}),  # warm-up: not measured
        # measured (a >= 500 ms); TTFT = first chunk − send
        rec(1, a=1000, d=1000, chunks=[1100, 1110], closed=1120, tags={"t": "a"}, prompt_tokens=10),  # 100 ms, good
        rec(2, a=2000, d=2000, chunks=[2200], closed=2210, tags={"t": "a"}, prompt_tokens=10),  # 200 ms
        rec(3, a=3000, d=3000, chunks=[3050], closed=3060, tags={"t": "b"}, prompt_tokens=600),  # 50 ms, good
        rec(4, a=4000, d=4000, chunks=[], n=0, closed=4010, status="error", error_kind="http_status",
            tags={"t": "b"}),
        rec(5, a=5000, d=5000, chunks=[5300], closed=5500, tags={"t": "b"}, prompt_tokens=600),  # 300 ms
    ]
    return RunSamples(frame_from_records(records), CONFIG)


def _value(text: str) -> float | None:
    return _samples().value(parse_threshold(text).query)


def test_request_aggregations_by_hand() -> None:
    # Measured: 1–5 (5), failed: 4, good (TTFT ≤ 150 ms): 1 and 3. Window 1000 → 5500 ms: 4.5 s.
    assert _value("requests:count > 0") == 5.0
    assert _value("errors:count < 9") == 1.0
    assert _value("errors:rate < 1") == pytest.approx(1 / 5)
    assert _value("goodput:count > 0") == 2.0
    assert _value("goodput:attainment > 0") == pytest.approx(2 / 5)
    assert _value("goodput:rate > 0") == pytest.approx(2 / 4.5)
    # Four successes over 4.5 s; sends 1000 … 5000 ms: 4 intervals over 4 s.
    assert _value("throughput:requests_per_s > 0") == pytest.approx(4 / 4.5)
    assert _value("throughput:achieved_rps > 0") == pytest.approx(1.0)


def test_filters_select_the_buckets_they_name() -> None:
    # t = b: requests 3, 4, 5 (measured); 4 failed; 3 good.
    assert _value("requests{tag:t:b}:count > 0") == 3.0
    assert _value("errors{tag:t:b}:rate < 1") == pytest.approx(1 / 3)
    assert _value("goodput{tag:t:b}:attainment > 0") == pytest.approx(1 / 3)
    assert _value("ttft{tag:t:b}:max < 1") == pytest.approx(0.3)
    # Two filters together: t = a and prompt 0-128 → requests 1 and 2 (0 is warm-up).
    assert _value("ttft{tag:t:a,prompt:0-128}:count < 9") == 2.0
    assert _value("ttft{tag:t:a,prompt:512-2k}:count < 9") == 0.0
    # A label no request has (known to the dimension) selects nobody; so does an unknown label or dimension.
    assert _value("requests{prompt:2k-8k}:count < 9") == 0.0
    samples = _samples()
    for filters in ((("tag:t", "c"),), (("tag:u", "a"),), (("tag:t", "a"), ("tag:u", "a"))):
        selection = samples.select(filters)
        assert not selection.measured.any() and not selection.sampled.any()


def test_selection_is_measured_and_sampled_is_ok_too() -> None:
    selection = _samples().select((("tag:t", "b"),))
    assert selection.measured.tolist() == [False, False, False, True, True, True]
    assert selection.sampled.tolist() == [False, False, False, True, False, True]


def test_with_nothing_measured_the_ratios_are_none() -> None:
    assert _value("errors{tag:t:c}:rate < 1") is None
    assert _value("goodput{tag:t:c}:attainment > 0") is None
    assert _value("goodput{tag:t:c}:rate > 0") is None
    assert _value("ttft{tag:t:c}:avg < 1") is None
    assert _value("ttft{tag:t:c}:count < 1") == 0.0


def test_latency_aggregations_by_hand() -> None:
    # TTFT of the measured successes: 100, 200, 50, 300 ms → sorted 50, 100, 200, 300.
    assert _value("ttft:count < 9") == 4.0
    assert _value("ttft:avg < 1") == pytest.approx(0.1625)
    assert _value("ttft:min < 1") == pytest.approx(0.05)
    assert _value("ttft:max < 1") == pytest.approx(0.3)
    assert _value("ttft:med < 1") == pytest.approx(0.15)
    # linear p(75): index 2.25 → 200 + 0.25 × 100 ms
    assert _value("ttft:p(75) < 1") == pytest.approx(0.225)
    # population std: deviations −112.5, −62.5, 37.5, 137.5 ms
    std = ((112.5**2 + 62.5**2 + 37.5**2 + 137.5**2) / 4) ** 0.5 / 1000
    assert _value("ttft:std < 1") == pytest.approx(std)


def test_an_unknown_aggregation_is_refused() -> None:
    stats = Stats(count=1, mean=1.0, std=0.0, min=1.0, max=1.0)
    query = Query(metric="ttft", agg="p50", percentile=None, filters=(), kind="duration")
    with pytest.raises(ValueError, match="unknown latency aggregation 'p50'"):
        latency_stat(stats, query)


def test_a_throughput_without_a_value_is_none() -> None:
    one: Any = RunSamples(frame_from_records([rec(0, a=0, d=0, chunks=[10], closed=20)]), SummaryConfig())
    assert one.value(parse_threshold("throughput:offered_rps > 0").query) is None


def test_the_schedule_end_and_the_fluidity_deadlines_reach_the_samples() -> None:
    records = [rec(i, a=a, d=a, chunks=[a + 100, a + 110], closed=a + 120) for i, a in enumerate([0, 1000, 8500])]
    # Schedule end 10 s, cool-down 1 s: intended times before 9 s count, so all three (without the schedule
    # end, the last intended time 8.5 s − 1 s would cut the third).
    config = SummaryConfig(cooldown_s=1.0, schedule_end_s=10.0,
                           slo=parse_slo(["fluidity=0.5", "fluidity_prefill=150ms", "fluidity_decode=20ms"]))
    samples = RunSamples(frame_from_records(records), config)
    assert samples.value(parse_threshold("requests:count > 0").query) == 3.0
    # Every deadline met (TTFT 100 ms ≤ 150 ms, gap 10 ms ≤ 20 ms): fluidity 1 each, all good.
    assert samples.value(parse_threshold("fluidity:count > 0").query) == 3.0
    assert samples.value(parse_threshold("fluidity:min > 0").query) == 1.0
    assert samples.value(parse_threshold("goodput:count > 0").query) == 3.0
