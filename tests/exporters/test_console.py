"""The console summary says what its figures are worth: counts that add up, warnings, estimate marks."""

from __future__ import annotations

from typing import Any

import pytest

from exporters.console import format_summary
from metrics.records.record import RequestRecord
from metrics.slo import parse_slo
from metrics.summary.build import SummaryConfig, summarize

MS = 1_000_000


def _ok(i: int, **fields: Any) -> RequestRecord:
    base: dict[str, Any] = {
        "id": i, "intended_ns": i * 10 * MS, "sent_ns": i * 10 * MS + 1000, "status": "ok",
        "chunk_ns": [i * 10 * MS + 5 * MS, i * 10 * MS + 7 * MS], "chunk_tokens": [1, 1], "token_source": "server",
        "output_tokens": 2, "output_tokens_estimated": False, "prompt_tokens": 100, "prompt_tokens_estimated": False,
        "prompt_tokens_target": 100, "finish_reason": "stop", "closed_ns": i * 10 * MS + 8 * MS,
    }
    base.update(fields)
    return RequestRecord(**base)


def _failed(i: int, *, sent: bool = True, kind: str = "http_status") -> RequestRecord:
    return RequestRecord(id=i, intended_ns=i * 10 * MS, sent_ns=i * 10 * MS + 1000 if sent else None,
                         status="error", error_kind=kind, closed_ns=i * 10 * MS + 2 * MS)


def _text(records: list[RequestRecord], slo: list[str] | None = None, run: dict[str, Any] | None = None) -> str:
    return format_summary(summarize(records, SummaryConfig(slo=parse_slo(slo or [])), run or {}))


def test_no_slo_says_every_success_counts_as_good() -> None:
    text = _text([_ok(i) for i in range(15)])
    assert "(15/15 good; no SLO given: every successful request with content counts as good)" in text
    assert "SLO )" not in text
    assert "good; SLO ttft_s=0.5" in _text([_ok(i) for i in range(3)], slo=["ttft=500ms"])


def test_request_counts_add_up_and_name_never_sent_requests() -> None:
    cancelled = RequestRecord(id=9, intended_ns=90 * MS, sent_ns=None, status="cancelled",
                              error_kind="client_cancelled")
    records = [_ok(0), _ok(1), _failed(2), _failed(3, sent=False, kind="connect_error"),
               _failed(4, sent=False, kind="connect_error"), cancelled]
    line = next(x for x in _text(records).splitlines() if x.startswith("requests:"))
    assert line.startswith("requests: 6 = 3 sent + 3 never sent (failed 2, cancelled 1 before sending)"
                           "  |  6 = ok 2 + failed 3 + cancelled 1  |  errors: ")
    assert "connect_error=2" in line and "http_status=1" in line


def test_counts_of_a_schema_1_summary_still_add_up() -> None:
    summary = summarize([_ok(0), _failed(1, sent=False)], SummaryConfig(), {})
    req = summary["requests"]
    summary["requests"] = {"sent": req["records"], "never_sent": req["never_sent"], "succeeded": 1, "failed": 1,
                           "cancelled": 0}  # `sent` used to count every record
    assert "requests: 2 = 1 sent + 1 never sent  |  2 = ok 1 + failed 1 + cancelled 0" in format_summary(summary)


@pytest.mark.parametrize(("failed", "warned"), [(1, False), (2, True)])
def test_error_rate_above_5_percent_is_a_warning(failed: int, warned: bool) -> None:
    records = [_ok(i) for i in range(20 - failed)] + [_failed(20 + i) for i in range(failed)]
    text = _text(records)
    assert ("WARNING: 2 of 20 measured requests failed (10.0% > 5%)" in text) is warned
    assert ("WARNING" in text) is warned  # 1 of 20 is exactly 5 %: no warning


def test_nothing_succeeded_says_there_are_no_latencies() -> None:
    text = _text([_failed(i, sent=False, kind="connect_error") for i in range(4)])
    assert "WARNING: 4 of 4 measured requests failed (100.0% > 5%); no measured request succeeded" in text


def test_successes_without_content_are_shown() -> None:
    empty = _ok(1, chunk_ns=[], chunk_tokens=[], output_tokens=0, finish_reason="length")
    text = _text([_ok(0), empty])
    assert "WARNING: 1 of 2 successful measured requests streamed no content" in text
    assert "WARNING" not in _text([_ok(0), _ok(1)])


def test_prompts_far_from_their_target_are_a_warning_naming_the_fix() -> None:
    long = [_ok(i, prompt_tokens=1300, prompt_tokens_target=256) for i in range(5)]
    run = {"workload": {"kind": "synthetic", "token_counter": "words"}}
    text = _text(long, run=run)
    line = next(x for x in text.splitlines() if x.startswith("WARNING: prompts"))
    assert "median error 408% of the target over 5 requests" in line and "mean error +1044 tokens" in line
    assert "'words' token counter" in line and "--tokenizer with the model's tokenizer.json" in line
    close = [_ok(i, prompt_tokens=270, prompt_tokens_target=256) for i in range(5)]  # 5.5 % off: fine
    assert "WARNING" not in _text(close, run=run)


def test_estimated_output_tokens_mark_the_token_rates() -> None:
    guessed = [_ok(i, output_tokens_estimated=True, token_source="estimate", chunk_tokens=None) for i in range(3)]
    summary = summarize([*guessed, _ok(3)], SummaryConfig(), {})
    text = format_summary(summary)
    throughput = next(x for x in text.splitlines() if x.startswith("throughput:"))
    assert " ~" in throughput and "output tok/s  ~" in throughput
    assert "note: ~ output tokens are estimates for 3 of 4 requests (no usage from the server; basis: " in text
    assert "note: ITL per token (summary itl_token_s) is not from reported per-chunk counts: " in text
    summary["tokens"].pop("output_estimate_basis", None)  # a summary that does not say which estimate
    assert "basis: not recorded; token sources estimate 3, server 1)" in format_summary(summary)
    exact = _text([_ok(0, cached_tokens=0), _ok(1, cached_tokens=0)])  # every count reported: no note at all
    assert "~" not in exact and "note:" not in exact


@pytest.mark.parametrize(("basis", "said"), [
    ("one_token_per_chunk", "each chunk counted as one token"),
    ("split_by_text_length", "the reported total spread over the chunks in proportion to their text length"),
    ("mixed", "the bases differ between requests (requests per basis: one_token_per_chunk 3, reported 1)"),
])
def test_itl_per_token_basis_is_named(basis: str, said: str) -> None:
    summary = summarize([_ok(0)], SummaryConfig(), {})
    summary["tokens"].update(itl_token_basis=basis, itl_token_bases={"one_token_per_chunk": 3, "reported": 1})
    assert f"is not from reported per-chunk counts: {said}" in format_summary(summary)


def test_estimate_basis_and_unknown_token_keys_are_handled() -> None:
    summary = summarize([_ok(0, output_tokens_estimated=True, chunk_tokens=None)], SummaryConfig(), {})
    summary["tokens"].update(output_estimate_basis={"tokenizer": 1}, itl_token_basis="text_length",
                             something_new={"a": [1, 2]})
    text = format_summary(summary)
    assert "estimates for 1 of 1 requests (no usage from the server; basis: tokenizer 1)" in text
    assert "not from reported per-chunk counts: basis: text_length" in text
    summary["tokens"] = {"output_estimated": "odd"}  # a malformed section never crashes the console
    assert "throughput:" in format_summary(summary)


def test_exact_server_phase_times_are_printed() -> None:
    records = [_ok(i, server={"queue_s": 0.002 * (i + 1), "prefill_s": 0.01, "decode_s": 0.02}) for i in range(3)]
    lines = _text(records).splitlines()
    assert "  queue   p50 4.0 ms, p99 6.0 ms  (per request)" in lines
    assert "  prefill p50 10.0 ms, p99 10.0 ms  (per request)" in lines
    assert not any(x.startswith("server") for x in _text([_ok(0)]).splitlines())


# A scraped vLLM-like /metrics section over the same run: queue and TTFT histograms, load gauges.
PROMETHEUS = {
    "url": "http://127.0.0.1:1/metrics", "available": True, "scrapes": 4, "absent": [],
    "histograms": {
        "queue_s": {"metric": "vllm:request_queue_time_seconds", "count": 3, "sum": 6e-05, "mean": 2e-05,
                    "p50": 4e-05, "p50_bucket": [0.0, 0.3], "p50_range": [0.0, 4e-05],
                    "p99": 6e-05, "p99_bucket": [0.0, 0.3], "p99_range": [0.0, 6e-05]},
        "e2e_s": {"metric": "vllm:e2e_request_latency_seconds", "count": 3, "sum": 0.03, "mean": 0.01,
                  "p50": 0.015, "p50_bucket": [0.0, 0.02], "p50_range": [0.0, 0.015],
                  "p99": 0.02, "p99_bucket": [0.0, 0.02], "p99_range": [0.0, 0.02]}},
    "gauges": {"running": {"mean": 1.5, "max": 3.0}}, "prefix_cache_hit_rate": 0.25,
}


def test_one_server_section_each_figure_once_within_100_columns() -> None:
    records = [_ok(i, server={"queue_s": 0.002 * (i + 1), "prefill_s": 0.01, "decode_s": 0.02},
                   server_chunk_s=[0.004, 0.006]) for i in range(3)]
    summary = summarize(records, SummaryConfig(), {"settings": {"slo": ["ttft=100ms", "tpot=40ms", "e2e=2s"]}})
    summary["server"]["prometheus"] = PROMETHEUS  # as `goodput run` and `goodput report` add it
    text = format_summary(summary)
    lines = text.splitlines()
    server = lines[next(i for i, x in enumerate(lines) if x.startswith("server")):]
    # Queue time: the exact per-request figure, once; the histogram's (in vLLM's 0.3 s bucket) not at all.
    assert sum("queue" in x for x in server) == 1 and "≤ 0.06 ms" not in text
    assert sum(x.lstrip().startswith("TTFT") for x in server) == 1  # per request, with client − server
    assert any(x.startswith("  E2E     mean 10.0 ms, p50 ≤ 15 ms, p99 ≤ 20 ms  (/metrics)") for x in server)
    assert any("running mean/max 2/3" in x and "prefix-cache hit rate 25.0%" in x for x in server)
    assert "server-side" not in text and "server /metrics" not in text
    table = lines[lines.index("latency p50/p99 in ms:"):]  # the table, the server section and what follows
    assert max(len(x) for x in table) <= 100, max(table, key=len)


@pytest.mark.parametrize(("run", "state"), [
    ({"complete": False, "interrupted": True}, "[INCOMPLETE: interrupted]"),
    ({"complete": False, "write_error": "records.jsonl: No space left on device"},
     "[INCOMPLETE: records could not be written: No space left on device]"),
    ({"complete": False, "ended_by": "killed or still running: records.jsonl was never closed"},
     "[INCOMPLETE: killed or still running: records.jsonl was never closed]"),
    ({"complete": False, "workers": {"lost": [{"worker": 1, "reason": "exited with -9"}]}},
     "[INCOMPLETE: 1 worker(s) lost]"),
    ({"complete": True}, ""),
])
def test_the_header_says_why_a_run_is_incomplete(run: dict[str, Any], state: str) -> None:
    header = _text([_ok(i) for i in range(3)], run=run).splitlines()[0]
    assert header.endswith(state) if state else "INCOMPLETE" not in header


def _said(i: int, status: int, message: str) -> RequestRecord:
    return RequestRecord(id=i, intended_ns=i * 10 * MS, sent_ns=i * 10 * MS + 1000, status="error",
                         error_kind="http_status", http_status=status, error_message=f"HTTP {status}: {message}",
                         closed_ns=i * 10 * MS + 2 * MS)


def test_the_servers_messages_are_listed_first_distinct_counted() -> None:
    """Failures of several kinds: the first distinct ones in order of appearance, each counted over the run."""
    records = [_ok(0), _said(1, 429, "queue full"), _said(2, 500, "engine died"), _said(3, 429, "queue full"),
               *(_said(4 + j, 400, f"bad request {j}") for j in range(5))]
    lines = _text(records).splitlines()
    at = lines.index("failures (the first 5 of 7 distinct, counted over the run):")
    assert lines[at + 1:at + 6] == ["  2 × HTTP 429: queue full", "  1 × HTTP 500: engine died",
                                    "  1 × HTTP 400: bad request 0", "  1 × HTTP 400: bad request 1",
                                    "  1 × HTTP 400: bad request 2"]
    assert not any(line.startswith("FAILED:") for line in lines)


def test_every_request_failing_alike_is_one_line() -> None:
    lines = _text([_said(i, 404, "The model `nope` does not exist.") for i in range(4)]).splitlines()
    assert "FAILED: all 4 requests failed the same way: HTTP 404: The model `nope` does not exist." in lines
    assert not any(line.startswith("failures (") for line in lines)
