"""The progress line's samples: TTFT and every gap of successful requests, nothing from failed ones."""

from __future__ import annotations

import io

from loadgen.run.progress import Progress
from loadgen.run.runner import RunState
from metrics.records.record import RequestRecord


def test_progress_keeps_ttft_and_every_gap_of_ok_requests() -> None:
    progress = Progress(RunState(), duration_s=None, stream=io.StringIO(), window=10)
    progress(RequestRecord(id=0, intended_ns=0, sent_ns=100, chunk_ns=[150, 170, 200, 260]))
    progress(RequestRecord(id=1, intended_ns=0, sent_ns=100, chunk_ns=[130]))
    progress(RequestRecord(id=2, intended_ns=0, sent_ns=100, status="error", chunk_ns=[110, 120]))
    progress(RequestRecord(id=3, intended_ns=0, sent_ns=None, status="error"))
    assert list(progress._ttft) == [50, 30]
    assert list(progress._itl) == [20, 30, 60]
