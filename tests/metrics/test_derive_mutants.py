"""Per-request derivations on inputs the other derive tests do not build, each checked against values worked
out by hand: epoch-scale clocks (nanoseconds since 1970 do not fit a float64 exactly), a request with no
chunk at the end of the frame, a first request of one chunk, gaps cut into slices, a failed request with a
token count but no chunk, and counts that must stay integers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from metrics.latency import derive
from metrics.latency.derive import chunk_gaps, stalls
from metrics.records.frame import frame_from_records
from metrics.records.record import RequestRecord
from tests.metrics._records import rec

EPOCH = 1_733_000_000_123_456_789  # 2024-11-30 in ns: float64 spaces its values 256 ns apart here


def _at_epoch(chunks: list[int], tokens: list[int]) -> RequestRecord:
    return RequestRecord(id=0, intended_ns=EPOCH, sent_ns=EPOCH, status="ok",
                         chunk_ns=[EPOCH + c for c in chunks], chunk_tokens=tokens, token_source="server",
                         output_tokens=sum(tokens), output_tokens_estimated=False, closed_ns=None)


def test_epoch_scale_chunk_times_are_kept_to_the_nanosecond() -> None:
    # First chunk 100,000,001 ns after the send, last 150,000,004 ns after it, 3 tokens: TTFT and E2E are
    # those spans to the ns, TPOT (150,000,004 − 100,000,001) / 2 ns. Held as float64, c_1 and c_K would
    # round to a multiple of 256 ns and every one of them would be off.
    frame = frame_from_records([_at_epoch([100_000_001, 120_000_002, 150_000_004], [1, 1, 1])])
    assert derive.first_chunk_ns(frame).tolist() == [EPOCH + 100_000_001]
    assert derive.last_chunk_ns(frame).tolist() == [EPOCH + 150_000_004]
    assert derive.first_chunk_ns(frame).dtype == np.int64 and derive.last_chunk_ns(frame).dtype == np.int64
    assert derive.ttft_s(frame)[0] == 100_000_001 / 1e9
    assert derive.tpot_s(frame)[0] == 50_000_003 / 2 / 1e9


def test_a_request_without_chunks_at_the_end_of_the_frame() -> None:
    # Chunks at 10, 15, 30 ms, then a failed request with none: two gaps, both the first request's.
    frame = frame_from_records([rec(0, chunks=[10, 15, 30], k=[1, 1, 1]),
                                rec(1, chunks=[], n=0, status="error", error_kind="http_status")])
    gaps = chunk_gaps(frame)
    assert gaps.ns.tolist() == [5_000_000, 15_000_000] and gaps.off.tolist() == [0, 2, 2]


def test_the_step_from_a_one_chunk_first_request_into_the_next_is_no_gap() -> None:
    # Request 0: one chunk at 10 ms; request 1: chunks at 20 and 26 ms. The one gap is request 1's 6 ms,
    # not the 10 ms from request 0's chunk to request 1's first.
    frame = frame_from_records([rec(0, chunks=[10], k=[1]), rec(1, chunks=[20, 26], k=[1, 1])])
    gaps = chunk_gaps(frame)
    assert gaps.ns.tolist() == [6_000_000] and gaps.off.tolist() == [0, 0, 1]


@pytest.mark.parametrize("size", [1, 2, 3, 1 << 20])
def test_gaps_are_the_same_whatever_the_slice_they_are_computed_in(size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # Chunks 10, 15, 30 | 40, 41 | 50, 52, 55, 63 ms: gaps 5, 15 | 1 | 2, 3, 8 ms, read a slice at a time.
    monkeypatch.setattr(derive, "_SLICE", size)
    frame = frame_from_records([rec(0, chunks=[10, 15, 30], k=[1, 2, 1]), rec(1, chunks=[40, 41], k=[1, 1]),
                                rec(2, chunks=[50, 52, 55, 63], k=[1, 1, 3, 1])])
    gaps = chunk_gaps(frame)
    assert gaps.ns.tolist() == [5_000_000, 15_000_000, 1_000_000, 2_000_000, 3_000_000, 8_000_000]
    assert gaps.tokens is not None and gaps.tokens.tolist() == [2, 1, 1, 1, 3, 1]


def test_tpot_is_nan_for_a_failed_request_with_a_count_but_no_chunk() -> None:
    # The server's usage said 5 tokens, but no content chunk arrived: there is no c_1 or c_K to time.
    frame = frame_from_records([rec(0, chunks=[], n=5, status="error", error_kind="http_status")])
    assert np.isnan(derive.tpot_s(frame)).all()


def test_tpot_of_one_token_over_two_chunks_is_nan_without_a_warning() -> None:
    # N = 1 spread over two chunks (the second carried no token): N − 1 = 0, so no TPOT, and the 40 ms / 0
    # must not reach the console as a RuntimeWarning.
    frame = frame_from_records([rec(0, chunks=[10, 50], k=[1, 0])])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tpot = derive.tpot_s(frame)
    assert np.isnan(tpot).all()


def test_stall_counts_are_integers() -> None:
    # Gaps 5, 1500, 2500 ms for request 0 and 10 ms for request 1, threshold 1 s: 2 stalls of 4 s in all.
    frame = frame_from_records([rec(0, chunks=[0, 5, 1505, 4005], k=[1, 1, 1, 1]), rec(1, chunks=[0, 10], k=[1, 1])])
    count, total = stalls(chunk_gaps(frame), 2, 1.0)
    assert count.tolist() == [2, 0] and count.dtype == np.int64
    assert total.tolist() == [4.0, 0.0]


def test_a_frame_of_fewer_than_two_chunks_has_no_gap_and_integer_gap_times() -> None:
    # One chunk in all: no gap, and the empty gap array is still integer nanoseconds (Gaps.ns's type).
    gaps = chunk_gaps(frame_from_records([rec(0, chunks=[10], k=[1])]))
    assert gaps.ns.shape == (0,) and gaps.ns.dtype == np.int64 and gaps.off.tolist() == [0, 0]
