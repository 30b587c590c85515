"""Token intervals (fluidity's input) for a frame whose last request carried no token, on the path where
chunks carry several tokens: the offsets still cover every request (hand-counted)."""

from __future__ import annotations

import numpy as np

from metrics.latency.fluidity import token_intervals
from metrics.records.frame import frame_from_records
from tests.metrics._records import rec


def test_a_last_request_without_tokens_keeps_its_empty_row() -> None:
    # Request 0: sent at 0, chunks at 10 ms (2 tokens) and 20 ms (1 token): token times 10, 10, 20 ms, so
    # intervals 10 ms (from the send), 0, 10 ms. Request 1 failed with no chunk: an empty row at the end.
    frame = frame_from_records([rec(0, chunks=[10, 20], k=[2, 1]),
                                rec(1, chunks=[], n=0, status="error", error_kind="http_status")])
    intervals, off = token_intervals(frame)
    assert off.tolist() == [0, 3, 3]
    assert np.allclose(intervals, [0.010, 0.0, 0.010], rtol=0, atol=1e-15)
