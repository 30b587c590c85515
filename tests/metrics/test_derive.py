"""Golden per-request metrics: every expected value below was worked out by hand from the times."""

from __future__ import annotations

import math

import numpy as np
import pytest

from metrics.latency import derive
from metrics.records.frame import frame_from_records
from tests.metrics._records import rec


def test_one_stream_every_time_metric() -> None:
    # Stream seen by the client: role-only event at 90 ms, content at 101/111/131 ms, a keep-alive
    # comment, a usage-only event at 135 ms, close at 140 ms. Only the content chunks are recorded.
    frame = frame_from_records([rec(a=0, d=1, chunks=[101, 111, 131], k=[1, 1, 1], closed=140)])
    assert derive.ttft_s(frame)[0] == pytest.approx(0.100)
    assert derive.ttft_from_schedule_s(frame)[0] == pytest.approx(0.101)
    assert derive.e2e_s(frame)[0] == pytest.approx(0.130)
    assert derive.e2e_close_s(frame)[0] == pytest.approx(0.139)
    assert derive.e2e_from_schedule_s(frame)[0] == pytest.approx(0.131)
    assert derive.dispatch_lag_s(frame)[0] == pytest.approx(0.001)
    assert derive.tpot_s(frame)[0] == pytest.approx(0.015)  # (131 − 101) / (3 − 1)
    gaps = derive.chunk_gaps(frame)
    assert derive.itl_s(gaps).tolist() == pytest.approx([0.010, 0.020])
    assert derive.max_itl_s(gaps, frame.n)[0] == pytest.approx(0.020)


def test_chunk_with_three_tokens_splits_its_gap() -> None:
    frame = frame_from_records([rec(d=0, chunks=[100, 130], k=[1, 3])])
    gaps = derive.chunk_gaps(frame)
    assert derive.itl_s(gaps).tolist() == pytest.approx([0.030])
    per_token, owner = derive.itl_token_ns(gaps)
    assert (per_token / 1e9).tolist() == pytest.approx([0.010, 0.010, 0.010])
    assert owner.tolist() == [0, 0, 0]
    assert derive.tpot_s(frame)[0] == pytest.approx(0.010)  # 30 ms over N − 1 = 3


def test_first_chunk_with_two_tokens() -> None:
    frame = frame_from_records([rec(d=0, chunks=[100, 110, 120], k=[2, 1, 1])])
    assert derive.ttft_s(frame)[0] == pytest.approx(0.100)
    assert derive.tpot_s(frame)[0] == pytest.approx(0.020 / 3)  # N = 4
    gaps = derive.chunk_gaps(frame)
    per_token, _ = derive.itl_token_ns(gaps)
    assert (per_token / 1e9).tolist() == pytest.approx([0.010, 0.010])  # the first chunk ends no gap


def test_single_token_has_no_tpot_and_no_itl() -> None:
    frame = frame_from_records([rec(d=0, chunks=[80], k=[1])])
    assert derive.ttft_s(frame)[0] == pytest.approx(0.080)
    assert derive.e2e_s(frame)[0] == pytest.approx(0.080)
    assert math.isnan(derive.tpot_s(frame)[0])
    gaps = derive.chunk_gaps(frame)
    assert gaps.ns.size == 0
    assert math.isnan(derive.max_itl_s(gaps, 1)[0])


def test_single_chunk_carrying_all_tokens() -> None:
    frame = frame_from_records([rec(d=0, chunks=[80], k=[5])])
    assert derive.tpot_s(frame)[0] == 0.0  # c_K = c_1: every token arrived together
    assert derive.chunk_gaps(frame).ns.size == 0


def test_no_content_chunk_has_no_ttft_or_e2e() -> None:
    frame = frame_from_records([rec(d=0, chunks=[], n=0, closed=50)])
    for metric in (derive.ttft_s, derive.e2e_s, derive.e2e_close_s, derive.tpot_s, derive.ttft_from_schedule_s):
        assert math.isnan(metric(frame)[0])
    assert derive.dispatch_lag_s(frame)[0] == 0.0


def test_never_sent_has_no_lag_and_no_ttft() -> None:
    frame = frame_from_records([rec(a=5, d=None, chunks=[], n=0, status="error", error_kind="connect_error")])
    assert math.isnan(derive.dispatch_lag_s(frame)[0])
    assert math.isnan(derive.ttft_s(frame)[0])


def test_gaps_never_cross_requests() -> None:
    frame = frame_from_records([
        rec(0, d=0, chunks=[10, 15], k=[1, 1]),
        rec(1, d=0, chunks=[], n=0),
        rec(2, d=0, chunks=[7], k=[1]),
        rec(3, d=0, chunks=[100, 140, 150], k=[1, 2, 1]),
    ])
    gaps = derive.chunk_gaps(frame)
    assert (gaps.ns / 1e6).tolist() == [5, 40, 10]
    assert gaps.owner.tolist() == [0, 3, 3]
    assert gaps.off.tolist() == [0, 1, 1, 1, 3]
    assert derive.max_itl_s(gaps, 4)[[0, 3]].tolist() == pytest.approx([0.005, 0.040])
    per_token, owner = derive.itl_token_ns(gaps)
    assert (per_token / 1e6).tolist() == [5, 20, 20, 10]
    assert owner.tolist() == [0, 3, 3, 3]


def test_stalls_count_gaps_strictly_over_threshold() -> None:
    frame = frame_from_records([
        rec(0, d=0, chunks=[100, 1100, 1200, 3700], k=[1, 1, 1, 1]),  # gaps 1000, 100, 2500 ms
        rec(1, d=0, chunks=[100, 200], k=[1, 1]),
    ])
    count, total = derive.stalls(derive.chunk_gaps(frame), 2, threshold_s=1.0)
    assert count.tolist() == [1, 0]  # 1000 ms is not over 1 s
    assert total.tolist() == pytest.approx([2.5, 0.0])


def test_tpot_is_request_weighted_and_itl_gap_weighted() -> None:
    fast = rec(0, d=0, chunks=[100, 110], k=[1, 1])  # TPOT 10 ms, one gap of 10 ms
    slow = rec(1, d=0, chunks=[100 + 50 * j for j in range(11)], k=[1] * 11)  # TPOT 50 ms, ten gaps
    frame = frame_from_records([fast, slow])
    assert float(np.mean(derive.tpot_s(frame))) == pytest.approx(0.030)
    assert float(np.mean(derive.itl_s(derive.chunk_gaps(frame)))) == pytest.approx(0.510 / 11)


def test_chunk_without_tokens_gives_no_per_token_sample() -> None:
    # Running usage did not move on the 110 ms chunk (k = 0); the 130 ms chunk carried two tokens.
    frame = frame_from_records([rec(d=0, chunks=[100, 110, 130], k=[1, 0, 2])])
    gaps = derive.chunk_gaps(frame)
    assert (gaps.ns / 1e6).tolist() == [10, 20]
    per_token, _ = derive.itl_token_ns(gaps)
    assert (per_token / 1e6).tolist() == [10, 10]
