"""Evaluating thresholds: numbers come from summary.json (or, where it lacks them, from the records by
the same derivation), the pass condition is applied as written, and an empty metric fails."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from metrics.gate.evaluate import NeedsRecords, RunView, evaluate, failed, summary_value
from metrics.gate.run_samples import RunSamples
from metrics.gate.thresholds import LATENCY_METRICS, parse_threshold
from metrics.latency import derive
from metrics.records.frame import frame_from_records
from metrics.records.record import RequestRecord
from metrics.slo import parse_slo
from metrics.summary.build import SummaryConfig, summarize
from tests.metrics._records import rec

CONFIG = SummaryConfig(slo=parse_slo(["ttft=150ms"]))


def _records(ttft_shift_ms: float = 0.0) -> list[RequestRecord]:
    out = []
    for i in range(10):
        a = 100.0 * i
        first = a + 20 + 20 * i + ttft_shift_ms  # TTFT 20, 40, ..., 200 ms (+ shift)
        prompt, cached = (100, 0) if i % 2 == 0 else (600, None if i % 3 else 600)
        out.append(rec(i, a=a, d=a, chunks=[first, first + 5, first + 15], k=[1, 1, 2], closed=first + 20,
                       prompt_tokens=prompt, prompt_tokens_estimated=False, cached_tokens=cached,
                       tags={"scenario": "chat" if i < 6 else "rag"}))
    out.append(rec(10, a=1000, d=1000, chunks=[], n=0, closed=1010, status="error", error_kind="http_status",
                   tags={"scenario": "rag"}))
    out.append(rec(11, a=1100, d=1100, chunks=[], n=0, closed=1110, status="error", error_kind="timeout_total",
                   tags={"scenario": "rag"}))
    return out


def _view(records: list[RequestRecord]) -> RunView:
    frame = frame_from_records(records)
    return RunView(summarize(frame, CONFIG, {}), records=lambda: RunSamples(frame, CONFIG))


@pytest.fixture(scope="module")
def run() -> RunView:
    return _view(_records())


def _value(view: RunView, text: str) -> float | None:
    return evaluate([parse_threshold(text)], view)[0].value


@pytest.mark.parametrize("agg", ["avg", "min", "max", "med", "std", "count", "p(50)", "p(90)", "p(95)", "p(99)",
                                 "p(99.9)"])
@pytest.mark.parametrize("metric", sorted(LATENCY_METRICS))
def test_latency_values_are_the_summary_blocks(run: RunView, metric: str, agg: str) -> None:
    block = run.summary["latency"][LATENCY_METRICS[metric]]
    key = {"avg": "mean", "med": "p50", "p(50)": "p50", "p(90)": "p90", "p(95)": "p95", "p(99)": "p99",
           "p(99.9)": "p999"}.get(agg, agg)
    expected = block[key] if block["count"] or key == "count" else None
    assert _value(run, f"{metric}:{agg} < 1") == expected


@pytest.mark.parametrize("agg", ["avg", "min", "max", "med", "std", "count", "p(90)", "p(99)"])
@pytest.mark.parametrize("metric", ["ttft", "itl", "itl_token", "tpot", "e2e", "max_itl"])
@pytest.mark.parametrize("where", ["", "{cache:none}", "{prompt_bucket:512-2k}", "{scenario:rag}"])
def test_records_path_agrees_with_the_summary(run: RunView, metric: str, agg: str, where: str) -> None:
    query = parse_threshold(f"{metric}{where}:{agg} < 1").query
    samples = RunSamples(frame_from_records(_records()), CONFIG)
    assert samples.value(query) == pytest.approx(summary_value(run.summary, query), rel=1e-12)


def test_request_metrics_come_from_the_summary(run: RunView) -> None:
    s = run.summary
    assert _value(run, "goodput:attainment >= 0") == s["goodput"]["attainment"] == 7 / 12  # TTFT ≤ 150 ms: 20..140 ms, 7 of 10 ok
    assert _value(run, "goodput:rate >= 0") == s["goodput"]["requests_per_s"]
    assert _value(run, "goodput:count >= 0") == 7
    assert _value(run, "errors:rate < 1") == 2 / 12
    assert _value(run, "errors:count < 9") == 2
    assert _value(run, "requests:count > 0") == 12
    for key in ("requests_per_s", "output_tokens_per_s", "total_tokens_per_s", "offered_rps", "achieved_rps"):
        assert _value(run, f"throughput:{key} > 0") == s["throughput"][key]


def test_bucket_filters_read_the_bucket(run: RunView) -> None:
    rag = next(b for b in run.summary["buckets"] if b["dimension"] == "tag:scenario" and b["label"] == "rag")
    assert _value(run, "errors{scenario:rag}:rate < 1") == 2 / rag["measured"]
    assert _value(run, "goodput{scenario:rag}:attainment > 0") == rag["goodput"]["attainment"]
    assert _value(run, "requests{scenario:rag}:count > 0") == rag["measured"]
    assert _value(run, "ttft{scenario:rag}:p(99) < 1") == rag["latency"]["ttft_s"]["p99"]


def test_two_filters_and_other_percentiles_come_from_the_records(run: RunView) -> None:
    frame = frame_from_records(_records())
    ttft = derive.ttft_s(frame)
    even = np.arange(frame.n) % 2 == 0  # prompt 100 → "0-128", cache 0 → "none"
    chat = np.arange(frame.n) < 6
    both = ttft[even & chat]
    assert _value(run, "ttft{prompt_bucket:0-128,scenario:chat}:max < 1") == pytest.approx(both.max())
    assert _value(run, "ttft{prompt_bucket:0-128,scenario:chat}:count > 0") == 3
    assert _value(run, "ttft:p(75) < 1") == pytest.approx(float(np.percentile(ttft[~np.isnan(ttft)], 75)))
    summary_only = RunView(run.summary)
    with pytest.raises(NeedsRecords, match="records are not available"):
        evaluate([parse_threshold("ttft:p(75) < 1")], summary_only)


def test_pass_condition_as_written(run: RunView) -> None:
    p99 = run.summary["latency"]["ttft_s"]["p99"]
    verdicts = evaluate([parse_threshold(t) for t in (
        f"ttft:p(99) <= {p99}", f"ttft:p(99) < {p99}", "ttft:max < 500ms", "ttft:max > 500ms",
        "goodput:attainment >= 50%", "goodput:attainment == 1", "errors:count != 0",
    )], run)
    assert [v.passed for v in verdicts] == [True, False, True, False, True, False, True]
    assert [v.threshold.text for v in failed(verdicts)] == [f"ttft:p(99) < {p99}", "ttft:max > 500ms",
                                                             "goodput:attainment == 1"]


def test_no_data_fails_unless_told_otherwise() -> None:
    all_failed = [rec(i, a=10 * i, d=10 * i, chunks=[], n=0, closed=10 * i + 5, status="error",
                      error_kind="http_status") for i in range(3)]
    view = _view(all_failed)
    verdicts = evaluate([parse_threshold(t) for t in (
        "ttft:p(95) < 500ms", "tpot:avg < 40ms", "ttft:p(95) < 500ms | nodata=pass", "ttft:count >= 1",
        "errors:rate < 0.5",
    )], view)
    assert [(v.passed, v.value) for v in verdicts] == [(False, None), (False, None), (True, None), (False, 0.0),
                                                       (False, 1.0)]
    assert "no data" in verdicts[0].line() and verdicts[0].line().startswith("FAIL")


def test_an_empty_bucket_is_no_data(run: RunView) -> None:
    [v] = evaluate([parse_threshold("ttft{prompt_bucket:8k-32k}:p(95) < 2s")], run)
    assert not v.passed and v.value is None
    [v] = evaluate([parse_threshold("goodput{scenario:nobody}:attainment >= 0.9 | nodata=pass")], run)
    assert v.passed and v.value is None


def test_relative_to_a_baseline(run: RunView) -> None:
    slower = _view(_records(ttft_shift_ms=100))
    texts = ["ttft:p(50) < baseline * 1.10", "ttft:p(50) < baseline + 150ms", "goodput:attainment >= baseline - 0.02",
             "errors:rate <= baseline"]
    verdicts = evaluate([parse_threshold(t) for t in texts], slower, baseline=run)
    assert [v.passed for v in verdicts] == [False, True, False, True]
    base_p50 = run.summary["latency"]["ttft_s"]["p50"]
    assert verdicts[0].baseline == base_p50 and verdicts[0].limit == pytest.approx(base_p50 * 1.10)
    assert "baseline" in verdicts[0].line() and "limit" in verdicts[0].line()
    with pytest.raises(ValueError, match="pass --baseline"):
        evaluate([parse_threshold(texts[0])], slower)


def test_baseline_without_data_fails() -> None:
    empty: dict[str, Any] = summarize([], CONFIG, {})
    [v] = evaluate([parse_threshold("ttft:p(50) < baseline * 1.1")], _view(_records()), baseline=RunView(empty))
    assert not v.passed and v.limit is None and "baseline has no data" in v.line()
