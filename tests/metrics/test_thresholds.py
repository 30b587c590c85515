"""Threshold grammar: every aggregation, operator, unit, filter and baseline form parses to what it says;
every mistake is a ThresholdError naming it."""

from __future__ import annotations

import pytest

from metrics.gate.thresholds import (
    LATENCY_METRICS,
    REQUEST_METRICS,
    ThresholdError,
    check_labels,
    compare,
    parse_threshold,
)


@pytest.mark.parametrize(("agg", "key", "pct"), [
    ("avg", "mean", None), ("mean", "mean", None), ("min", "min", None), ("max", "max", None),
    ("std", "std", None), ("count", "count", None), ("med", "p", 50.0), ("p(50)", "p", 50.0),
    ("p(90)", "p", 90.0), ("p(95)", "p", 95.0), ("p(99)", "p", 99.0), ("p(99.9)", "p", 99.9),
    ("p(0)", "p", 0.0), ("p(100)", "p", 100.0), ("p(75)", "p", 75.0), ("p( 99 )", "p", 99.0),
])
def test_latency_aggregations(agg: str, key: str, pct: float | None) -> None:
    t = parse_threshold(f"ttft:{agg}<{'5' if agg == 'count' else '1s'}")
    assert (t.query.metric, t.query.agg, t.query.percentile) == ("ttft", key, pct)
    assert t.query.kind == ("count" if agg == "count" else "duration")


@pytest.mark.parametrize("metric", sorted(LATENCY_METRICS))
def test_every_latency_metric(metric: str) -> None:
    t = parse_threshold(f"{metric}:p(95) < 0.5")
    assert t.query.latency_key == LATENCY_METRICS[metric]
    assert t.query.kind == ("fraction" if metric == "fluidity" else "duration")


@pytest.mark.parametrize(("metric", "agg"), [(m, a) for m, aggs in REQUEST_METRICS.items() for a in aggs])
def test_every_request_metric(metric: str, agg: str) -> None:
    t = parse_threshold(f"{metric}:{agg} >= 1")
    assert (t.query.metric, t.query.agg, t.query.kind) == (metric, agg, REQUEST_METRICS[metric][agg])


@pytest.mark.parametrize(("op", "below", "equal", "above"), [
    ("<", True, False, False), ("<=", True, True, False), (">", False, False, True),
    (">=", False, True, True), ("==", False, True, False), ("!=", True, False, True),
])
def test_operators(op: str, below: bool, equal: bool, above: bool) -> None:
    t = parse_threshold(f"ttft:p(99){op}500ms")
    assert t.op == op and t.operand == 0.5
    assert (compare(0.4, t.op, t.operand), compare(0.5, t.op, t.operand), compare(0.6, t.op, t.operand)) == (
        below, equal, above)


@pytest.mark.parametrize(("text", "value"), [
    ("ttft:p(99)<500ms", 0.5), ("ttft:p(99)<0.5s", 0.5), ("ttft:p(99)<0.5", 0.5), ("ttft:p(99)<2", 2.0),
    ("ttft:p(99)<250us", 0.00025), ("ttft:p(99)<250µs", 0.00025), ("ttft:p(99) < 1.5e2 ms", 0.15),
    ("goodput:attainment>=0.95", 0.95), ("goodput:attainment>=95%", 0.95), ("errors:rate<1%", 0.01),
    ("fluidity:avg>=90%", 0.9), ("goodput:rate>=20", 20.0), ("throughput:output_tokens_per_s>1000", 1000.0),
    ("ttft:count>=100", 100.0),
])
def test_units(text: str, value: float) -> None:
    assert parse_threshold(text).operand == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize(("text", "needle"), [
    ("goodput:attainment>=95ms", "unit 'ms'"),
    ("ttft:p(99)<50%", "unit '%'"),
    ("throughput:output_tokens_per_s>1s", "unit 's'"),
    ("ttft:count>5ms", "unit 'ms'"),
    ("ttft:p(99)<fast", "not a number"),
    ("ttft:p(99)<500 ms ms", "not a number"),
])
def test_unit_mistakes(text: str, needle: str) -> None:
    with pytest.raises(ThresholdError, match=needle):
        parse_threshold(text)


def test_filters_map_onto_bucket_dimensions() -> None:
    t = parse_threshold("ttft{prompt_bucket:2k-8k,cache:none}:p(95)<2s")
    assert t.query.filters == (("cache", "none"), ("prompt_tokens", "2k-8k"))
    t = parse_threshold("e2e{ output_bucket : 64-256 , scenario:chat}:max<30s")
    assert t.query.filters == (("output_tokens", "64-256"), ("tag:scenario", "chat"))
    assert parse_threshold("goodput{tenant:a}:attainment>=0.9").query.filters == (("tag:tenant", "a"),)
    assert parse_threshold("ttft{tag:scenario:chat}:p(99)<1s").query.filters == (("tag:scenario", "chat"),)


@pytest.mark.parametrize(("text", "needle"), [
    ("ttft{cache}:p(99)<1s", "KEY:LABEL"),
    ("ttft{cache:none,cache:full}:p(99)<1s", "given twice"),
    ("throughput{cache:none}:output_tokens_per_s>1", "not per bucket"),
])
def test_filter_mistakes(text: str, needle: str) -> None:
    with pytest.raises(ThresholdError, match=needle):
        parse_threshold(text)


@pytest.mark.parametrize(("text", "relative", "operand", "base", "limit"), [
    ("ttft:p(99) < baseline * 1.10", "*", 1.10, 0.5, 0.55),
    ("goodput:attainment >= baseline - 0.02", "-", 0.02, 0.97, 0.95),
    ("ttft:p(50) < baseline + 100ms", "+", 0.1, 0.2, 0.3),
    ("errors:rate <= baseline", "=", 0.0, 0.01, 0.01),
    ("goodput:attainment >= BASELINE - 2%", "-", 0.02, 0.9, 0.88),
])
def test_baseline_forms(text: str, relative: str, operand: float, base: float, limit: float) -> None:
    t = parse_threshold(text)
    assert t.needs_baseline and t.relative == relative
    assert t.operand == pytest.approx(operand)
    assert t.limit(base) == pytest.approx(limit)
    assert t.limit(None) is None


def test_absolute_threshold_limit_ignores_baseline() -> None:
    t = parse_threshold("ttft:p(99)<500ms")
    assert not t.needs_baseline and t.limit(None) == 0.5


@pytest.mark.parametrize(("text", "needle"), [
    ("ttft:p(101)<1s", "outside 0-100"),
    ("ttft:p(-1)<1s", "outside 0-100"),
    ("ttft:p(x)<1s", "needs a number"),
    ("latency:p(99)<1s", "unknown metric 'latency'"),
    ("ttft:p99<1s", "unknown aggregation 'p99'"),
    ("ttft:rate<1", "unknown aggregation 'rate'"),
    ("goodput:p(99)>1", "unknown aggregation"),
    ("ttft:p(99)", "expected METRIC"),
    ("ttft p(99) < 1s", "expected METRIC"),
    ("ttft:p(99)<", "nothing after"),
    ("ttft:p(99)<1s | nodata=maybe", "nodata=pass"),
    ("ttft:p(99)<1s | skip", "nodata=pass"),
    ("ttft:p(99) < baseline * 10ms", "baseline factor"),
    ("ttft:p(99) < baseline / 2", "not a number"),
])
def test_invalid_expressions(text: str, needle: str) -> None:
    with pytest.raises(ThresholdError, match=needle) as err:
        parse_threshold(text)
    assert repr(text) in str(err.value)  # the message names the expression
    assert isinstance(err.value, ValueError)


def test_nodata_option() -> None:
    assert parse_threshold("ttft{cache:full}:p(95) < 200ms | nodata=pass").nodata_pass
    assert not parse_threshold("ttft:p(95) < 200ms | nodata=fail").nodata_pass
    assert not parse_threshold("ttft:p(95) < 200ms").nodata_pass


def test_describe_round_trips() -> None:
    for text in ("ttft:p(99)", "ttft{cache:none,prompt_tokens:2k-8k}:p(95)", "goodput:attainment", "tpot:mean",
                 "ttft{tag:cache:x,tenant:a}:max"):
        q = parse_threshold(f"{text}<1").query
        assert parse_threshold(f"{q.describe()}<1").query == q


def test_check_labels_against_bucket_edges() -> None:
    ok = [parse_threshold(t) for t in ("ttft{prompt_bucket:2k-8k}:p(95)<2s", "ttft{cache:unknown}:max<9s",
                                       "ttft{output_bucket:1k-4k}:avg<1s", "ttft{scenario:whatever}:avg<1s")]
    check_labels(ok, prompt_edges=(0, 128, 512, 2048, 8192, 32768), output_edges=(0, 64, 256, 1024, 4096))
    with pytest.raises(ThresholdError, match="no prompt_tokens bucket '3k-9k'"):
        check_labels([parse_threshold("ttft{prompt_bucket:3k-9k}:p(95)<2s")], prompt_edges=(0, 128), output_edges=(0,))
    with pytest.raises(ThresholdError, match="no cache bucket 'hot'"):
        check_labels([parse_threshold("ttft{cache:hot}:p(95)<2s")], prompt_edges=(0,), output_edges=(0,))
    custom = [parse_threshold("ttft{prompt_bucket:100-1k}:p(95)<2s")]
    check_labels(custom, prompt_edges=(100, 1000), output_edges=(0,))
    with pytest.raises(ThresholdError):
        check_labels(custom, prompt_edges=(0, 128), output_edges=(0,))
