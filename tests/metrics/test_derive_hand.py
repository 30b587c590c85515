"""Per-request metrics by hand where the intended time is not zero; ITL per token on the path where every chunk carries one token (no token column) and where a
chunk carried none: the values, the weights, and no numpy warning for the 0-token chunks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from metrics.latency import derive
from metrics.latency.derive import Gaps, chunk_gaps, itl_token_ns, itl_token_weighted_ns, stalls
from metrics.records.frame import frame_from_records
from tests.metrics._records import rec


def test_one_token_per_chunk_gives_each_gap_weight_one() -> None:
    # Chunks at 10, 15, 30 ms and at 5, 9 ms: gaps 5, 15 and 4 ms, each one token.
    frame = frame_from_records([rec(0, d=0, chunks=[10, 15, 30], k=[1, 1, 1]), rec(1, d=0, chunks=[5, 9], k=[1, 1])])
    gaps = chunk_gaps(frame)
    assert gaps.tokens is None  # one token each: no token column
    values, weights = itl_token_weighted_ns(gaps)
    assert values.tolist() == [5e6, 15e6, 4e6] and values.dtype == np.float64
    assert weights.tolist() == [1, 1, 1] and weights.shape == (3,)
    samples, owners = itl_token_ns(gaps)
    assert samples.tolist() == [5e6, 15e6, 4e6] and owners.tolist() == [0, 0, 1]


def test_a_chunk_without_tokens_gives_no_sample_and_no_warning() -> None:
    # Gaps of 6 ns over 3 tokens, 5 ns over none, 0 ns over none: 2 ns × 3 samples, the others weight 0.
    gaps = Gaps(ns=np.array([6, 5, 0], dtype=np.int64), tokens=np.array([3, 0, 0], dtype=np.int32),
                off=np.array([0, 3], dtype=np.int64))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 5/0 and 0/0 must not reach the console as RuntimeWarnings
        values, weights = itl_token_weighted_ns(gaps)
    assert values[0] == 2.0 and weights.tolist() == [3, 0, 0]
    samples, owners = itl_token_ns(gaps)
    assert samples.tolist() == [2.0, 2.0, 2.0] and owners.tolist() == [0, 0, 0]


def test_schedule_relative_metrics_subtract_the_intended_time() -> None:
    # Intended at 1000 ms, sent at 1004 ms, chunks at 1104 and 1154 ms (N = 2).
    frame = frame_from_records([rec(a=1000, d=1004, chunks=[1104, 1154], k=[1, 1])])
    assert derive.dispatch_lag_s(frame)[0] == pytest.approx(0.004, abs=1e-12)
    assert derive.ttft_s(frame)[0] == pytest.approx(0.100, abs=1e-12)
    assert derive.ttft_from_schedule_s(frame)[0] == pytest.approx(0.104, abs=1e-12)
    assert derive.e2e_s(frame)[0] == pytest.approx(0.150, abs=1e-12)
    assert derive.e2e_from_schedule_s(frame)[0] == pytest.approx(0.154, abs=1e-12)
    assert derive.tpot_s(frame)[0] == pytest.approx(0.050, abs=1e-12)  # (1154 − 1104) / (2 − 1)


def test_tpot_of_one_token_and_of_no_chunk_is_nan_without_a_warning() -> None:
    frame = frame_from_records([rec(0, d=0, chunks=[10], k=[1]), rec(1, d=0, chunks=[], n=0, status="error",
                                                                     error_kind="http_status")])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tpot = derive.tpot_s(frame)
    assert np.isnan(tpot).all()


def test_a_stall_in_the_first_gap_of_a_later_request_is_that_requests() -> None:
    # Request 0: gaps 10, 10 ms; request 1: gaps 200, 10 ms. Threshold 50 ms: one stall, request 1's.
    frame = frame_from_records([rec(0, d=0, chunks=[10, 20, 30], k=[1, 1, 1]),
                                rec(1, d=0, chunks=[100, 300, 310], k=[1, 1, 1])])
    count, total = stalls(chunk_gaps(frame), frame.n, 0.05)
    assert count.tolist() == [0, 1]
    assert total.tolist() == pytest.approx([0.0, 0.2])
