"""Cancelled requests in summary.json: the three kinds counted apart, no cancelled request a latency sample,
and planned cancellations (with the turns their sessions never sent) outside goodput's denominator. Every
expected number is worked out by hand in the comments."""

from __future__ import annotations

from typing import Any

from metrics.records.record import RequestRecord
from metrics.slo import parse_slo
from metrics.summary.build import SummaryConfig, summarize
from tests.metrics._records import rec


def _run() -> list[RequestRecord]:
    return [
        # 0: ok, TTFT 100 ms → good under ttft=200ms
        rec(0, a=0, d=0, chunks=[100, 120], closed=130),
        # 1: ok, TTFT 300 ms → not good
        rec(1, a=100, d=100, chunks=[400, 420], closed=430),
        # 2: cancelled as planned after one fast chunk (TTFT 50 ms): would be good, and the fastest TTFT
        rec(2, a=200, d=200, chunks=[250], closed=300, status="cancelled", error_kind="planned_cancel",
            cancel_at_ns=300_000_000),
        # 3: in flight when the run stopped (Ctrl-C): stays in the denominator, never good
        rec(3, a=300, d=300, chunks=[320], closed=900, status="cancelled", error_kind="client_cancelled"),
        # 4: HTTP error: stays in the denominator
        rec(4, a=400, d=400, chunks=[], n=0, closed=410, status="error", error_kind="http_status"),
        # session 7: turn 1 cancelled as planned, turn 2 never sent (abandoned: out of the denominator)
        rec(5, a=500, d=500, chunks=[540], closed=600, status="cancelled", error_kind="planned_cancel",
            session=7, turn=1),
        rec(6, a=600, d=None, chunks=[], n=0, status="cancelled", error_kind="session_ended", session=7, turn=2),
        # session 8: turn 1 failed, turn 2 never sent (a failure's session: stays in the denominator)
        rec(7, a=700, d=700, chunks=[], n=0, closed=710, status="error", error_kind="timeout_first_byte",
            session=8, turn=1),
        rec(8, a=800, d=None, chunks=[], n=0, status="cancelled", error_kind="session_ended", session=8, turn=2),
    ]


def _summary() -> dict[str, Any]:
    config = SummaryConfig(slo=parse_slo(["ttft=200ms"]), schedule_end_s=0.8)
    return summarize(_run(), config, {})


def test_the_three_kinds_of_cancelled_are_counted_apart() -> None:
    req = _summary()["requests"]
    assert req["records"] == 9
    assert (req["succeeded"], req["failed"], req["cancelled"]) == (2, 2, 5)  # 2, 3, 5, 6, 8 cancelled
    assert req["errors"] == {"client_cancelled": 1, "http_status": 1, "planned_cancel": 2, "session_ended": 2,
                             "timeout_first_byte": 1}
    assert req["planned_cancels"] == 2 and req["in_window_planned_cancels"] == 2
    assert req["turns_abandoned_after_cancel"] == 1  # record 6 only: record 8's session failed
    assert req["cancelled_before_send"] == 2  # 6 and 8


def test_no_cancelled_request_is_a_latency_sample() -> None:
    ttft = _summary()["latency"]["ttft_s"]
    assert ttft["count"] == 2  # records 0 and 1: not 2's 50 ms, nor 3's or 5's
    assert ttft["min"] == 0.1 and ttft["max"] == 0.3


def test_planned_cancels_and_their_abandoned_turns_leave_the_goodput_denominator() -> None:
    goodput = _summary()["goodput"]
    # 9 measured − (2, 5, 6) = 6 in the denominator (0, 1, 3, 4, 7, 8); good: record 0 only.
    assert goodput["measured"] == 6 and goodput["excluded_planned_cancels"] == 3
    assert goodput["good"] == 1 and goodput["attainment"] == 1 / 6


def test_a_run_without_planned_cancels_keeps_every_request_in_the_denominator() -> None:
    records = [r for r in _run() if r.error_kind != "planned_cancel" and r.id != 6]
    goodput = summarize(records, SummaryConfig(slo=parse_slo(["ttft=200ms"]), schedule_end_s=0.8), {})["goodput"]
    assert goodput["measured"] == 6 and goodput["excluded_planned_cancels"] == 0 and goodput["good"] == 1


def test_the_console_says_how_many_were_cancelled_as_planned_and_left_out() -> None:
    from exporters.console_notes import goodput_line, requests_line
    from metrics.results.summary_view import SummaryView

    summary = _summary()
    view = SummaryView.from_json(summary)
    line = requests_line(view.requests)
    assert "cancelled 5 (2 as planned by --cancel-rate)" in line
    assert view.goodput is not None
    good = goodput_line(view.goodput, "1", "16.7%")
    assert "(1/6 good;" in good and "3 planned cancellations and the turns they ended left out" in good
