"""The gate's evaluation: what mutation testing found unguarded (docs/testing.md). Summaries are written out
by hand here, so every expected verdict, value and message follows from the dict in the test."""

from __future__ import annotations

from typing import Any

import pytest

from metrics.gate.evaluate import NeedsRecords, RunView, evaluate_one, format_value, summary_value
from metrics.gate.thresholds import ThresholdError, check_labels, parse_threshold, parse_thresholds


@pytest.mark.parametrize(("kind", "value", "text"), [
    ("duration", 9.5, "9500 ms"),
    ("duration", 10.0, "10 s"),  # from 10 s on, seconds
    ("duration", 10.5, "10.5 s"),
    ("duration", -9.5, "-9500 ms"),
    ("count", 3.0, "3"),
    ("count", 123456.0, "123456"),  # a whole count in full, not 1.235e+05
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


def _value(summary: dict[str, Any], threshold: str) -> float | None:
    return summary_value(summary, parse_threshold(threshold).query)


def test_capacity_queries_read_the_capacity_object() -> None:
    assert _value({"capacity": {"rate": 6.5, "upper": 7.0}}, "capacity:rate>=6") == 6.5
    assert _value({"capacity": {"rate": 6.5, "upper": 7.0}}, "capacity:upper>=6") == 7.0
    assert _value({}, "capacity:rate>=6") is None


@pytest.mark.parametrize("threshold", ["ttft:p(99)<1s", "throughput:output_tokens_per_s>1",
                                       "goodput:attainment>0.9", "errors:rate<0.1"])
def test_a_summary_missing_the_section_is_no_data(threshold: str) -> None:
    assert _value({}, threshold) is None


def test_a_latency_block_with_no_samples_is_no_data_whatever_it_holds() -> None:
    assert _value({"latency": {"ttft_s": {"count": 0, "p99": 0.0}}}, "ttft:p(99)<1s") is None
    assert _value({"latency": {"ttft_s": {"count": 0, "p99": 0.0}}}, "ttft:count>0") == 0.0


def test_a_percentile_the_summary_lacks_names_itself() -> None:
    threshold = parse_threshold("ttft:p(97)<1s")
    with pytest.raises(NeedsRecords) as refused:
        RunView(_summary(0.4)).value(threshold.query)
    assert str(refused.value) == (f"{threshold.query.describe()}: p(97) is not in summary.json, and this run's "
                                  "records are not available")


def test_errors_count_and_rate_of_the_run_and_of_a_bucket() -> None:
    summary = {
        "requests": {"in_window": 10, "in_window_failed": 7},
        "buckets": [{"dimension": "cache", "label": "none", "measured": 4, "failed": 2}],
    }
    assert _value(summary, "errors:count<1") == 7.0
    assert _value(summary, "errors:rate<0.1") == 0.7
    assert _value(summary, "errors{cache:none}:count<1") == 2.0
    assert _value(summary, "errors{cache:none}:rate<0.1") == 0.5
    assert _value({"requests": {"in_window": 10}}, "errors:count<1") == 0.0  # no failures recorded: none
    assert _value({"requests": {"in_window": 0, "in_window_failed": 0}}, "errors:rate<0.1") is None


@pytest.mark.parametrize(("text", "described"), [
    ("ttft:mean<1s", "ttft:avg"),  # mean is written as k6's avg
    ("ttft:max<1s", "ttft:max"),
    ("ttft{scenario:chat}:p(99)<1s", "ttft{scenario:chat}:p(99)"),  # a workload tag, shown by its key
    ("ttft{tag:cache:x}:p(99)<1s", "ttft{tag:cache:x}:p(99)"),  # a tag named like a bucket keeps its prefix
    ("ttft{cache:none}:p(95)<1s", "ttft{cache:none}:p(95)"),
])
def test_a_query_describes_itself_as_written(text: str, described: str) -> None:
    assert parse_threshold(text).query.describe() == described


def test_thresholds_are_parsed_in_order() -> None:
    parsed = parse_thresholds(["ttft:p(99)<1s", "e2e:max<=2s"])
    assert [(t.text, t.op, t.query.metric) for t in parsed] == [("ttft:p(99)<1s", "<", "ttft"),
                                                                ("e2e:max<=2s", "<=", "e2e")]


def test_a_run_refuses_capacity_thresholds_and_names_where_they_belong() -> None:
    with pytest.raises(ThresholdError) as refused:
        check_labels([parse_threshold("capacity:rate>=6")], prompt_edges=(0, 128), output_edges=(0, 128))
    assert str(refused.value) == (
        "invalid threshold 'capacity:rate>=6': capacity:* is the result of a capacity search, not of a run; "
        "judge it with `goodput capacity --threshold` or `goodput gate CAPACITY_DIR`")


@pytest.mark.parametrize(("text", "message"), [
    ("ttft{output_bucket:9k}:p(99)<1s",
     "invalid threshold 'ttft{output_bucket:9k}:p(99)<1s': no output_tokens bucket '9k'; "
     "buckets are 0-128, 128-2k, 2k+, unknown"),  # unknown: a request whose count is not known
    ("ttft{turn:10}:p(99)<1s",
     "invalid threshold 'ttft{turn:10}:p(99)<1s': no turn bucket '10'; buckets are 1, 2, 3-4, 5-8, 9+, tool, unknown"),
])
def test_bucket_labels_no_run_can_have_are_refused(text: str, message: str) -> None:
    with pytest.raises(ThresholdError) as refused:
        check_labels([parse_threshold(text)], prompt_edges=(0, 128, 2048), output_edges=(0, 128, 2048))
    assert str(refused.value) == message


@pytest.mark.parametrize(("text", "message"), [
    ("ttft{cache}:p(99)<1s", "invalid threshold 'ttft{cache}:p(99)<1s': filter 'cache' must be KEY:LABEL, e.g. cache:none"),
    ("ttft{:none}:p(99)<1s", "invalid threshold 'ttft{:none}:p(99)<1s': filter ':none' must be KEY:LABEL, e.g. cache:none"),
    ("ttft:p50<1s", "invalid threshold 'ttft:p50<1s': unknown aggregation 'p50' for ttft; "
                    "expected one of avg, mean, min, max, med, std, count or p(N)"),
    ("errors:rate<5ms", "invalid threshold 'errors:rate<5ms': unit 'ms' does not fit a fraction limit"),
])
def test_mistakes_are_named_word_for_word(text: str, message: str) -> None:
    with pytest.raises(ThresholdError) as refused:
        parse_threshold(text)
    assert str(refused.value) == message


def test_an_explicit_tag_splits_its_label_at_the_first_colon() -> None:
    assert parse_threshold("ttft{tag:cache:x:y}:p(99)<1s").query.filters == (("tag:cache", "x:y"),)


def test_a_duration_limit_is_exact_as_written() -> None:
    # 700 ms is 0.7 s exactly as --slo reads it; 700 × 0.001 in binary floating point is 0.7000000000000001,
    # which would fail a measured 0.7 s against `<= 700ms`.
    threshold = parse_threshold("ttft:p(99)<=700ms")
    assert threshold.limit(None) == 0.7
    assert evaluate_one(threshold, RunView(_summary(0.7)), None).passed is True


@pytest.mark.parametrize(("text", "message"), [
    ("errors:p99<1", "invalid threshold 'errors:p99<1': unknown aggregation 'p99' for errors; expected one of rate, count"),
    ("capacity:p99>=1", "invalid threshold 'capacity:p99>=1': unknown aggregation 'p99' for capacity; "
                        "expected one of rate, upper, attainment, points, requests"),
    ("capacity{cache:none}:rate>=1",
     "invalid threshold 'capacity{cache:none}:rate>=1': capacity is measured over the whole search, not per bucket"),
    ("bogus:avg<1", "invalid threshold 'bogus:avg<1': unknown metric 'bogus'; expected one of ttft, "
                    "ttft_from_schedule, itl, itl_token, tpot, e2e, e2e_close, e2e_from_schedule, dispatch_lag, "
                    "max_itl, fluidity, ttfo, reasoning_time, tool_call, tool_call_done, reasoning_tokens, "
                    "answer_tokens, tool_calls, goodput, errors, requests, throughput, capacity"),
])
def test_unknown_names_list_the_known_ones(text: str, message: str) -> None:
    with pytest.raises(ThresholdError) as refused:
        parse_threshold(text)
    assert str(refused.value) == message


def test_spaces_are_free_inside_the_aggregation() -> None:
    assert parse_threshold("ttft:p(99. 9)<1s").query.percentile == 99.9


def test_a_plain_baseline_limit_keeps_the_text_and_the_option() -> None:
    threshold = parse_threshold("ttft:p(99) <= baseline | nodata=pass")
    assert (threshold.text, threshold.nodata_pass, threshold.limit(0.5)) == (
        "ttft:p(99) <= baseline | nodata=pass", True, 0.5)
    assert parse_threshold("ttft:p(99) <= baseline").nodata_pass is False


def test_a_capacity_query_has_no_filters() -> None:
    assert parse_threshold("capacity:rate>=6").query.filters == ()


@pytest.mark.parametrize(("text", "message"), [
    ("ttft:p(99) < baseline * 1.1ms",
     "invalid threshold 'ttft:p(99) < baseline * 1.1ms': unit 'ms' does not fit baseline factor"),
    ("goodput:attainment >= baseline - 2ms",
     "invalid threshold 'goodput:attainment >= baseline - 2ms': unit 'ms' does not fit a fraction limit"),
])
def test_a_baseline_operand_with_the_wrong_unit(text: str, message: str) -> None:
    with pytest.raises(ThresholdError) as refused:
        parse_threshold(text)
    assert str(refused.value) == message
