from __future__ import annotations

import numpy as np
import pytest

from metrics.latency.fluidity import deadline_miss_rate, fluidity_index, token_intervals
from metrics.records.frame import frame_from_records
from tests.metrics._records import rec


def test_reference_recurrence_by_hand() -> None:
    # D_p = 1 s, D_d = 0.5 s. 0.8 on time (bank 0.2); 0.2 on time (bank 0.5); 1.6 is late by
    # floor((1.6 − 0.5) / 0.5) = 2 deadlines (bank emptied); 0.1 on time. 2 missed of 5.
    rate, missed, total = deadline_miss_rate([0.8, 0.2, 1.6, 0.1], 1.0, 0.5)
    assert (missed, total) == (2, 5)
    assert rate == pytest.approx(0.4)


def test_late_first_token_misses_its_own_and_later_deadlines() -> None:
    # 1 + floor((2.2 − 1.0) / 0.5) = 3 deadlines missed, then one on time.
    rate, missed, total = deadline_miss_rate([2.2, 0.1], 1.0, 0.5)
    assert (missed, total) == (3, 4)
    assert rate == pytest.approx(0.75)


def test_no_tokens_no_deadlines() -> None:
    assert deadline_miss_rate([], 1.0, 0.5) == (0.0, 0, 0)


def test_record_with_multi_token_chunk() -> None:
    # Chunks at 0.8, 1.0, 2.6 (2 tokens), 2.7 s → token intervals 0.8, 0.2, 1.6, 0, 0.1.
    record = rec(d=0, chunks=[800, 1000, 2600, 2700], k=[1, 1, 2, 1])
    frame = frame_from_records([record])
    intervals, off = token_intervals(frame)
    assert intervals.tolist() == pytest.approx([0.8, 0.2, 1.6, 0.0, 0.1])
    assert off.tolist() == [0, 5]
    # Misses 2 at the 1.6 s gap; the zero gap and 0.1 s are on time: 2 of 6 → fluidity 2/3.
    index = fluidity_index(frame, 1.0, 0.5, np.array([True]))
    assert index.tolist() == pytest.approx([2 / 3])


def test_excluded_and_empty_requests_are_nan() -> None:
    frame = frame_from_records([rec(0, d=0, chunks=[100], k=[1]), rec(1, d=0, chunks=[], n=0)])
    index = fluidity_index(frame, 1.0, 0.5, np.array([False, True]))
    assert np.isnan(index).all()


def test_vectorised_equals_reference_on_random_streams() -> None:
    rng = np.random.default_rng(7)
    records = []
    for i in range(300):
        k = [int(x) for x in rng.integers(1, 4, size=int(rng.integers(1, 40)))]
        gaps = rng.gamma(1.5, 40.0, size=len(k))
        records.append(rec(i, d=float(rng.uniform(0, 5)), chunks=list(np.cumsum(gaps) + 10), k=k))
    frame = frame_from_records(records)
    intervals, off = token_intervals(frame)
    index = fluidity_index(frame, 0.2, 0.05, np.ones(frame.n, dtype=bool))
    for i in range(frame.n):
        rate, _, _ = deadline_miss_rate(intervals[off[i] : off[i + 1]].tolist(), 0.2, 0.05)
        assert index[i] == pytest.approx(1.0 - rate, abs=1e-12)


def test_chunk_without_tokens_folds_into_the_next_token() -> None:
    frame = frame_from_records([rec(d=0, chunks=[100, 110, 130], k=[1, 0, 2])])
    intervals, off = token_intervals(frame)
    assert intervals.tolist() == pytest.approx([0.1, 0.03, 0.0])  # tokens at 100, 130, 130 ms
    assert off.tolist() == [0, 3]
