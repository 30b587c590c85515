"""The gate's evaluation: what mutation testing found unguarded (docs/testing.md). Summaries are written out
by hand here, so every expected verdict, value and message follows from the dict in the test."""

from __future__ import annotations

from typing import Any

import pytest

from metrics.gate.evaluate import NeedsRecords, RunView, evaluate_one, format_value, summary_value
from metrics.gate.thresholds import parse_threshold


@pytest.mark.parametrize(("kind", "value", "text"), [
    ("duration", 9.5, "9500 ms"),
    ("duration", 10.0, "10 s"),  # from 10 s on, seconds
    ("duration", 10.5, "10.5 s"),
    ("duration", -9.5, "-9500 ms"),
    ("count", 3.0, "3"),
    ("count", 2.5, "2.5"),
])
def test_format_value(kind: Any, value: float, text: str) -> None:
    assert format_value(kind, value) == text


def _summary(ttft_p99: float | None, count: int = 10) -> dict[str, Any]:
    return {"latency": {"ttft_s": {"count": count, "p99": ttft_p99}}, "requests": {"in_window": count}}


def test_an_absolute_threshold_has_no_baseline() -> None:
    verdict = evaluate_one(parse_threshold("ttft:p(99)<500ms"), RunView(_summary(0.4)), None)
    assert (verdict.passed, verdict.value, verdict.limit, verdict.baseline, verdict.note) == (True, 0.4, 0.5, None, "")


@pytest.mark.parametrize(("text", "passed", "note"), [
    ("ttft:p(99) < baseline * 1.1", False, "baseline has no data"),
    ("ttft:p(99) < baseline * 1.1 | nodata=pass", True, "baseline has no data (nodata=pass)"),
])
def test_a_baseline_without_data(text: str, passed: bool, note: str) -> None:
    baseline = RunView({"latency": {"ttft_s": {"count": 0}}})
    verdict = evaluate_one(parse_threshold(text), RunView(_summary(0.4)), baseline)
    assert verdict.passed is passed
    assert (verdict.value, verdict.limit, verdict.baseline, verdict.note) == (0.4, None, None, note)


def test_two_bucket_filters_need_the_records_and_say_so() -> None:
    threshold = parse_threshold("ttft{cache:none,turn:1}:p(99)<1s")
    with pytest.raises(NeedsRecords) as refused:
        RunView(_summary(0.4)).value(threshold.query)
    assert str(refused.value) == (f"{threshold.query.describe()}: a filter on two bucket dimensions at once is "
                                  "not in summary.json, and this run's records are not available")


def test_a_filter_on_a_summary_without_buckets_is_no_data() -> None:
    assert summary_value(_summary(0.4), parse_threshold("ttft{cache:none}:p(99)<1s").query) is None


@pytest.mark.parametrize("value", [True, "0.4", None])
def test_a_value_that_is_not_a_number_is_no_data(value: Any) -> None:
    summary = {"throughput": {"output_tokens_per_s": value}}
    assert summary_value(summary, parse_threshold("throughput:output_tokens_per_s>1").query) is None
