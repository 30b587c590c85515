"""`requests.failure_messages` and `stopped_before_max_tokens` against a hand-counted run."""

from __future__ import annotations

import numpy as np

from metrics.records.frame import frame_from_records
from metrics.records.record import RequestRecord
from metrics.summary.failures import (
    MESSAGES_SHOWN,
    failure_messages,
    failures_section,
    stopped_before_max_tokens,
)
from tests.metrics._records import rec


def _error(rid: int, kind: str | None, status: int | None, message: str | None) -> RequestRecord:
    return rec(rid, chunks=[], n=0, status="error", error_kind=kind, http_status=status, error_message=message)


def test_distinct_failures_in_order_of_first_appearance_with_whole_run_counts() -> None:
    frame = frame_from_records([
        _error(0, "http_status", 503, "overloaded"),
        rec(1, chunks=[1]),
        _error(2, "http_status", 500, "boom"),
        _error(3, "http_status", 503, "overloaded"),
        _error(4, None, None, None),  # no kind, no status, no message
        rec(5, chunks=[], n=0, status="cancelled", error_kind="client_cancelled", error_message="stop"),  # not one
        _error(6, "http_status", 503, "other"),  # same kind and status, another message: its own failure
        _error(7, "timeout_total", None, "slow"),
        _error(8, "connect_error", None, "refused"),  # the sixth distinct failure: counted, not shown
        _error(9, "http_status", 500, "boom"),
    ])
    shown, distinct = failure_messages(frame)
    assert MESSAGES_SHOWN == 5 and distinct == 6
    assert [m.to_json() for m in shown] == [
        {"kind": "http_status", "http_status": 503, "message": "overloaded", "count": 2},
        {"kind": "http_status", "http_status": 500, "message": "boom", "count": 2},
        {"kind": "unknown", "http_status": None, "message": "", "count": 1},
        {"kind": "http_status", "http_status": 503, "message": "other", "count": 1},
        {"kind": "timeout_total", "http_status": None, "message": "slow", "count": 1},
    ]


def test_stopped_before_max_tokens_by_hand() -> None:
    frame = frame_from_records([
        rec(0, chunks=[1], k=[5], finish_reason="stop", output_tokens_target=10),  # 5 < 10: stopped early
        rec(1, chunks=[1], k=[10], finish_reason="stop", output_tokens_target=10),  # reached it
        rec(2, chunks=[1], k=[5], finish_reason="length", output_tokens_target=10),  # not "stop"
        rec(3, chunks=[1], k=[5], finish_reason="stop"),  # no max_tokens asked
        rec(4, chunks=[1], k=[5], finish_reason="stop", output_tokens_target=10, status="error", error_kind="x"),
        rec(5, chunks=[1], k=[2], finish_reason="stop", output_tokens_target=3),  # stopped early
    ])
    assert stopped_before_max_tokens(frame) == 2
    section = failures_section(frame)
    assert ([m.to_json() for m in section.messages], section.distinct, section.stopped_before_max_tokens) == (
        [{"kind": "x", "http_status": None, "message": "", "count": 1}], 1, 2)


def test_without_finish_reasons_nothing_stopped_early() -> None:
    frame = frame_from_records([rec(0, chunks=[1], k=[5], output_tokens_target=10)])
    assert stopped_before_max_tokens(frame) == 0


def test_a_frame_without_finish_reasons_or_targets_reports_none_stopped_early() -> None:
    # Frames read from older records may lack either column (an empty list, a zero-length array).
    records = [rec(0, chunks=[1], k=[5], finish_reason="stop", output_tokens_target=10),
               rec(1, chunks=[1], k=[5], finish_reason="stop", output_tokens_target=10)]
    without_targets = frame_from_records(records)
    without_targets.output_target = np.zeros(0)
    assert stopped_before_max_tokens(without_targets) == 0
    without_reasons = frame_from_records(records)
    without_reasons.finish_reason = []
    assert stopped_before_max_tokens(without_reasons) == 0
