"""The summary's reasoning section on edges the other tests do not build (values by hand): reasoning counts
unknown for every measured request, and a request outside the measurement window that carried a count."""

from __future__ import annotations

from metrics.records.record import RequestRecord
from metrics.summary.build import SummaryConfig, summarize
from tests.metrics._records import MS, rec


def _records() -> list[RequestRecord]:
    # Request 0, scheduled at 0 (inside a 0.5 s warm-up): 10 reasoning tokens counted by the server.
    # Requests 1 and 2, scheduled at 1 s: one tool call each, no reasoning count (unknown, not 0).
    return [
        rec(0, a=0, d=0, chunks=[10, 20], reasoning_ns=10 * MS, reasoning_tokens=10, reasoning_tokens_source="usage"),
        rec(1, a=1000, d=1000, chunks=[1010, 1020], tool_calls=1, finish_reason="tool_calls"),
        rec(2, a=1000, d=1000, chunks=[1010, 1030], tool_calls=1, finish_reason="tool_calls"),
    ]


def test_reasoning_totals_are_unknown_when_no_measured_request_has_a_count() -> None:
    r = summarize(_records(), SummaryConfig(warmup_s=0.5), {})["reasoning"]
    assert r["requests"] == 2 and r["reasoning_tokens_known"] == 0
    assert r["reasoning_tokens_total"] is None and r["answer_tokens_total"] is None  # unknown, not 0


def test_a_request_outside_the_window_adds_nothing_to_the_sources() -> None:
    assert summarize(_records(), SummaryConfig(warmup_s=0.5), {})["reasoning"]["reasoning_tokens_source"] == {}
    # Without the warm-up, request 0 is measured: its count and its source are in.
    whole = summarize(_records(), SummaryConfig(), {})["reasoning"]
    assert whole["reasoning_tokens_source"] == {"usage": 1} and whole["reasoning_tokens_total"] == 10
