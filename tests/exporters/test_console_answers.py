"""The console's reasoning and tool-call lines, with values worked out by hand (tests.metrics._reasoning):
TTFO 50, 110, 310 ms → p50 110.0, p99 110 + 0.98 × 200 = 306.0; TTFT 10, 10, 50 ms → p99 10 + 0.98 × 40
= 49.2; reasoning time 100, 300 ms → p50 200.0, p99 298.0."""

from __future__ import annotations

from exporters.console import format_summary
from metrics.summary.build import SummaryConfig, summarize
from tests.metrics._reasoning import reasoning_records
from tests.metrics._records import MS, rec


def test_reasoning_and_tool_call_lines() -> None:
    lines = format_summary(summarize(reasoning_records(), SummaryConfig(), {})).splitlines()
    assert ("reasoning: 2 of 3 reasoned, 3 answered; p50/p99 ms: TTFO 110.0/306.0 (TTFT 10.0/49.2), "
            "reasoning time 200.0/298.0") in lines
    assert ("  reasoning tokens: 50 in the 3 requests with a count (tokenizer 1, usage 2); "
            "answer tokens: 50") in lines
    assert "  per request p50/p99: reasoning tokens 20/30, answer tokens 10/30" in lines
    assert ("tool calls: 1 by 1 of 3 requests; p50/p99 ms: first delta 310.0/310.0, "
            "complete call 395.0/395.0") in lines


def test_no_reasoning_count_is_said_so_never_zero() -> None:
    records = [rec(0, d=0, chunks=[10, 20], reasoning_ns=10 * MS, answer_ns=20 * MS)]
    summary = summarize(records, SummaryConfig(), {})
    assert summary["reasoning"]["reasoning_tokens_total"] is None
    lines = format_summary(summary).splitlines()
    assert "  tokens: no request has a reasoning count (the server reported none and none was counted)" in lines
    assert not any(line.startswith("  reasoning tokens:") for line in lines)


def test_a_run_without_reasoning_prints_what_it_did() -> None:
    plain = [rec(i, a=100 * i, d=100 * i, chunks=[100 * i + 30, 100 * i + 45]) for i in range(3)]
    stamped = [rec(i, a=100 * i, d=100 * i, chunks=[100 * i + 30, 100 * i + 45], answer_ns=(100 * i + 30) * MS)
               for i in range(3)]
    text = format_summary(summarize(stamped, SummaryConfig(), {}))
    assert text == format_summary(summarize(plain, SummaryConfig(), {}))
    assert "reasoning" not in text and "tool calls" not in text and "TTFO" not in text


def test_the_ttfo_line_says_how_many_answered() -> None:
    # Two requests reasoned until they were cut off (as a reasoning model on vLLM does when max_tokens ends
    # its thinking): no TTFO; the percentiles are over the one that answered, and the line says so.
    records = [rec(0, d=0, chunks=[10, 20], reasoning_ns=10 * MS, answer_ns=20 * MS),
               rec(1, d=0, chunks=[10, 30], reasoning_ns=10 * MS),
               rec(2, d=0, chunks=[15, 40], reasoning_ns=15 * MS)]
    summary = summarize(records, SummaryConfig(), {})
    assert summary["latency"]["ttfo_s"]["count"] == 1
    lines = format_summary(summary).splitlines()
    assert any(line.startswith("reasoning: 3 of 3 reasoned, 1 answered; p50/p99 ms: TTFO 20.0/20.0 ") for line in lines)
