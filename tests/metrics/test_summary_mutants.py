"""summary.json figures that the golden run (test_summary.py) does not pin: the settings' bounds, a planned
cancellation inside a bucket, the saturation flag's sample set and bound, the window's schedule end,
stalls, burst-delivered streams. Every expected number is worked out by hand in the comments."""

from __future__ import annotations

from typing import Any

import pytest

from metrics.records.record import RequestRecord
from metrics.slo import parse_slo
from metrics.summary.build import SummaryConfig, summarize
from tests.metrics._records import rec


def test_a_full_ratio_of_one_is_allowed_and_above_one_is_refused() -> None:
    assert SummaryConfig(cache_full_ratio=1.0).cache_full_ratio == 1.0
    with pytest.raises(ValueError, match=r"cache_full_ratio must be in \(0, 1\], got 1.5"):
        SummaryConfig(cache_full_ratio=1.5)


def test_bad_output_edges_are_named_as_output_edges() -> None:
    with pytest.raises(ValueError, match=r"^output bucket edges must be non-negative and strictly increasing"):
        SummaryConfig(output_bucket_edges=(4, 4))


def _cancel_run() -> list[RequestRecord]:
    return [
        # chat: ok, TTFT 100 ms (good under ttft=200ms); sent 0, closed 130
        rec(0, a=0, d=0, chunks=[100, 120], closed=130, tags={"scenario": "chat"}),
        # chat: cancelled as planned: out of the bucket's goodput denominator
        rec(1, a=100, d=100, chunks=[150], closed=200, status="cancelled", error_kind="planned_cancel",
            tags={"scenario": "chat"}),
        # chat: ok but slow (TTFT 300 ms): not good; closed 530 ends the window
        rec(2, a=200, d=200, chunks=[500, 520], closed=530, tags={"scenario": "chat"}),
        # rag: an error without a kind: counted as "unknown"
        rec(3, a=300, d=300, chunks=[], n=0, closed=310, status="error", tags={"scenario": "rag"}),
    ]


def _chat(summary: dict[str, Any]) -> dict[str, Any]:
    return next(b for b in summary["buckets"] if b["dimension"] == "tag:scenario" and b["label"] == "chat")


def test_a_bucket_leaves_its_planned_cancellation_out_of_the_goodput_denominator() -> None:
    summary = summarize(_cancel_run(), SummaryConfig(slo=parse_slo(["ttft=200ms"])), {})
    chat = _chat(summary)
    assert (chat["measured"], chat["ok"], chat["failed"], chat["cancelled"], chat["good"]) == (3, 2, 0, 1, 1)
    # Window: first send 0 ms, last completion 530 ms → 0.53 s; denominator 3 − 1 planned cancel = 2.
    assert chat["goodput"] == {"good": 1, "measured": 2, "attainment": 0.5,
                               "requests_per_s": pytest.approx(1 / 0.53)}
    assert summary["goodput"]["measured"] == 3  # 4 measured − 1 planned cancel
    assert summary["goodput"]["requests_per_s"] == pytest.approx(1 / 0.53)
    assert summary["requests"]["errors"] == {"planned_cancel": 1, "unknown": 1}


def test_ok_without_content_counts_only_the_successes_that_streamed_nothing() -> None:
    records = [
        rec(0, a=0, d=0, chunks=[100], closed=110),
        rec(1, a=10, d=10, chunks=[120], closed=130),
        rec(2, a=20, d=20, chunks=[], n=0, closed=60),  # "ok", nothing streamed
        rec(3, a=30, d=30, chunks=[], n=0, closed=60, status="error", error_kind="http_status"),
    ]
    assert summarize(records, SummaryConfig(), {})["requests"]["ok_without_content"] == 1


def _lag_run() -> list[RequestRecord]:
    # Dispatch lag d − a: 500 ms for the warm-up request (sent, not measured), 0 and 10 ms for the others.
    return [
        rec(0, a=0, d=500, chunks=[600], closed=610),
        rec(1, a=1000, d=1000, chunks=[1100], closed=1110),
        rec(2, a=2000, d=2010, chunks=[2100], closed=2110),
    ]


def test_saturation_reads_the_lag_of_measured_sends_only_at_its_99th_percentile() -> None:
    sat = summarize(_lag_run(), SummaryConfig(warmup_s=0.5, lag_threshold_s=0.0095), {})["run"]["client_saturation"]
    # Lags 0 and 10 ms, linear percentile: 0 + 0.99 × 10 ms = 9.9 ms (the 500 ms warm-up lag is not one).
    assert sat == {"saturated": True, "lag_p99_s": pytest.approx(0.0099), "threshold_s": 0.0095}


def test_a_lag_at_the_threshold_is_not_saturation() -> None:
    records = [rec(0, a=0, d=0, chunks=[100], closed=110), rec(1, a=10, d=10, chunks=[120], closed=130)]
    run = summarize(records, SummaryConfig(lag_threshold_s=0.0), {})["run"]
    assert run["client_saturation"] == {"saturated": False, "lag_p99_s": 0.0, "threshold_s": 0.0}
    assert run["client_saturated"] is False


def test_the_schedule_end_bounds_the_cool_down() -> None:
    records = [rec(i, a=a, d=a, chunks=[a + 100], closed=a + 110) for i, a in enumerate([0, 1000, 8500])]
    # Schedule end 10 s, cool-down 1 s: intended times before 9 s count, so all three.
    config = SummaryConfig(cooldown_s=1.0, schedule_end_s=10.0)
    summary = summarize(records, config, {})
    assert summary["requests"]["in_window"] == 3
    assert summary["run"]["window"]["end_s"] == pytest.approx(8.61)


def test_stalls_count_each_stall_and_each_request_once() -> None:
    records = [
        # gaps 50, 10, 60 ms at a 40 ms threshold: two stalls, 110 ms
        rec(0, a=0, d=0, chunks=[100, 150, 160, 220], closed=230),
        # gaps 45, 5 ms: one stall of 45 ms
        rec(1, a=10, d=10, chunks=[100, 145, 150], closed=160),
        # gaps 10 ms: none
        rec(2, a=20, d=20, chunks=[100, 110], closed=120),
        # failed after a 100 ms gap: not a sample, so not a stall
        rec(3, a=30, d=30, chunks=[100, 200], closed=210, status="error", error_kind="timeout_between_chunks"),
    ]
    stalls = summarize(records, SummaryConfig(stall_threshold_s=0.04), {})["stalls"]
    assert stalls == {"threshold_s": 0.04, "count": 3, "total_s": pytest.approx(0.155), "requests_with_stalls": 2}


def test_burst_delivered_streams_are_counted() -> None:
    records = [
        # three tokens in one read: TPOT 0 → burst-delivered
        rec(0, a=0, d=0, chunks=[100, 100, 100], closed=110),
        # three tokens 10 ms apart: TPOT 10 ms
        rec(1, a=10, d=10, chunks=[100, 110, 120], closed=130),
        # one token: no TPOT
        rec(2, a=20, d=20, chunks=[100], closed=110),
    ]
    burst = summarize(records, SummaryConfig(), {})["burst_delivered"]
    assert (burst["requests"], burst["of"], burst["share"]) == (1, 2, 0.5)


def test_goodput_judges_e2e_and_max_itl_bounds() -> None:
    records = [
        rec(0, a=0, d=0, chunks=[100, 150, 200], closed=210),  # E2E 200 ms, max ITL 50 ms: good
        rec(1, a=10, d=10, chunks=[100, 400], closed=410),  # E2E 390 ms: too slow; max ITL 300 ms
        rec(2, a=20, d=20, chunks=[30, 40, 250], closed=260),  # E2E 230 ms; max ITL 210 ms: too long
    ]
    assert summarize(records, SummaryConfig(slo=parse_slo(["e2e=300ms"])), {})["goodput"]["good"] == 2
    assert summarize(records, SummaryConfig(slo=parse_slo(["max_itl=100ms"])), {})["goodput"]["good"] == 1
