"""The progress line's samples: TTFT and every gap of successful requests, nothing from failed ones."""

from __future__ import annotations

import io
import time

from loadgen.dispatch.progress import Progress, clock, completion
from loadgen.dispatch.runner import RunState
from metrics.records.record import RequestRecord


def test_progress_keeps_ttft_and_every_gap_of_ok_requests() -> None:
    progress = Progress(RunState(), duration_s=None, stream=io.StringIO(), window=10)
    progress(RequestRecord(id=0, intended_ns=0, sent_ns=100, chunk_ns=[150, 170, 200, 260]))
    progress(RequestRecord(id=1, intended_ns=0, sent_ns=100, chunk_ns=[130]))
    progress(RequestRecord(id=2, intended_ns=0, sent_ns=100, status="error", chunk_ns=[110, 120]))
    progress(RequestRecord(id=3, intended_ns=0, sent_ns=None, status="error"))
    assert list(progress._ttft) == [50, 30]
    assert list(progress._itl) == [20, 30, 60]


def test_the_line_says_percent_done_and_time_left_for_a_timed_run() -> None:
    state = RunState(anchor_ns=time.perf_counter_ns() - 15_000_000_000, sent=40, done=30, in_flight=10)
    line = Progress(state, duration_s=60.0, stream=io.StringIO()).line()
    assert "25% done, 45s left" in line


def test_a_counted_run_estimates_time_left_from_its_completion_rate() -> None:
    assert completion(20.0, duration_s=None, planned=100, done=40, in_flight=5) == "40% done, 30s left"
    assert completion(1.0, duration_s=None, planned=100, done=0, in_flight=5) == "0% done"
    # Both bounds: whichever ends first.
    assert completion(10.0, duration_s=300.0, planned=100, done=50, in_flight=1) == "50% done, 10s left"
    assert completion(100.0, duration_s=400.0, planned=10_000, done=10, in_flight=1) == "25% done, 5m00s left"


def test_after_dispatching_the_line_counts_what_is_draining() -> None:
    assert completion(61.0, duration_s=60.0, planned=None, done=90, in_flight=7) == \
        "100% dispatched, draining 7 in flight"
    assert completion(61.0, duration_s=60.0, planned=None, done=97, in_flight=0) == "100% done"
    assert completion(5.0, duration_s=None, planned=None, done=3, in_flight=1) == ""
    assert clock(3725) == "1h02m" and clock(185) == "3m05s" and clock(-2) == "0s"
