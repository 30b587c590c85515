"""The console verdict line has one shape for every kind of threshold — plain, relative to a baseline,
over an empty metric, on a rate or a count: `PASS|FAIL EXPR  measured V, limit L[ (baseline B)][  note]`,
so a failing plain threshold names its limit as the README shows."""

from __future__ import annotations

from typing import Any

import pytest

from metrics.gate.evaluate import RunView, evaluate
from metrics.gate.thresholds import parse_threshold

SUMMARY: dict[str, Any] = {
    "latency": {"ttft_s": {"count": 4, "mean": 0.5, "std": 0.1, "min": 0.4, "p50": 0.5, "p90": 0.6, "p95": 0.6,
                           "p99": 0.6123, "p999": 0.62, "max": 0.62}},
    "goodput": {"good": 3, "attainment": 0.75, "requests_per_s": 1.5},
    "requests": {"in_window": 4, "in_window_failed": 1},
    "throughput": {"output_tokens_per_s": 812.5},
    "buckets": [],
}
BASELINE: dict[str, Any] = {**SUMMARY, "latency": {"ttft_s": {**SUMMARY["latency"]["ttft_s"], "p99": 0.5}}}
EMPTY: dict[str, Any] = {"latency": {"ttft_s": {"count": 0}}, "goodput": {}, "requests": {}, "throughput": {},
                         "buckets": []}


def _line(text: str, summary: dict[str, Any] = SUMMARY, baseline: dict[str, Any] | None = BASELINE) -> str:
    [verdict] = evaluate([parse_threshold(text)], RunView(summary), RunView(baseline) if baseline else None)
    return verdict.line()


@pytest.mark.parametrize(("text", "line"), [
    # plain: the limit is printed even though it is written in the expression (it used not to be)
    ("ttft:p(99) < 500ms", "FAIL ttft:p(99) < 500ms  measured 612.3 ms, limit 500 ms"),
    ("ttft:p(99) < 1s", "PASS ttft:p(99) < 1s  measured 612.3 ms, limit 1000 ms"),
    # relative: the limit and the baseline it came from
    ("ttft:p(99) < baseline * 1.10", "FAIL ttft:p(99) < baseline * 1.10  measured 612.3 ms, limit 550 ms (baseline 500 ms)"),
    # capacity-like: a rate, a count, a fraction
    ("throughput:output_tokens_per_s > 1000", "FAIL throughput:output_tokens_per_s > 1000  measured 812.5/s, limit 1000/s"),
    ("goodput:count >= 3", "PASS goodput:count >= 3  measured 3, limit 3"),
    ("errors:rate < 1%", "FAIL errors:rate < 1%  measured 0.25 (25.00%), limit 0.01 (1.00%)"),
])
def test_every_line_names_the_measured_value_and_the_limit(text: str, line: str) -> None:
    assert _line(text) == line


def test_no_data_lines_still_name_the_limit() -> None:
    assert _line("ttft:p(95) < 200ms", EMPTY) == (
        "FAIL ttft:p(95) < 200ms  measured no data, limit 200 ms  "
        "no data: nothing was measured for this metric (append '| nodata=pass' to allow that)")
    assert _line("ttft:p(95) < 200ms | nodata=pass", EMPTY) == (
        "PASS ttft:p(95) < 200ms | nodata=pass  measured no data, limit 200 ms  no data (nodata=pass)")
    assert _line("ttft:p(99) < baseline * 1.1", SUMMARY, EMPTY) == (
        "FAIL ttft:p(99) < baseline * 1.1  measured 612.3 ms, limit - (baseline no data)  baseline has no data")
    assert _line("ttft:p(99) < baseline + 50ms", EMPTY) == (
        "FAIL ttft:p(99) < baseline + 50ms  measured no data, limit 550 ms (baseline 500 ms)  "
        "no data: nothing was measured for this metric (append '| nodata=pass' to allow that)")
