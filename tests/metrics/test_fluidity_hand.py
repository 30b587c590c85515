"""Fluidity at its edges, by hand: a token exactly on its deadline is on time (both the scalar reference
and the vectorised index), late deadlines are counted with Python's float floor division as the Etalon
reference does, token intervals start at the send time, and every chunk carrying two tokens repeats its
time twice."""

from __future__ import annotations

import numpy as np
import pytest

from metrics.latency.fluidity import deadline_miss_rate, fluidity_index, token_intervals
from metrics.records.frame import frame_from_records
from tests.metrics._records import rec

ALL = np.array([True])


def test_a_token_exactly_on_its_deadline_is_on_time() -> None:
    # D_p = 0.5 s, D_d = 0.25 s; first token at exactly 0.5 s, the next ones exactly 0.25 s apart.
    assert deadline_miss_rate([0.5, 0.25, 0.25], 0.5, 0.25) == (0.0, 0, 3)
    frame = frame_from_records([rec(d=1000, chunks=[1500, 1750, 2000], k=[1, 1, 1])])
    assert token_intervals(frame)[0].tolist() == [0.5, 0.25, 0.25]
    assert fluidity_index(frame, 0.5, 0.25, ALL).tolist() == [1.0]


def test_late_deadlines_use_float_floor_division() -> None:
    # 0.1 is stored as 0.1000000000000000055…, so 1.0 // 0.1 == 9.0 (while 1.0 / 0.1 rounds to 10.0):
    # a 1 s gap against D_d = 0.1 s misses 9 deadlines, a 1.5 s first token against D_p = 0.5 s 1 + 9.
    assert 1.0 // 0.1 == 9.0 and int(1.0 / 0.1) == 10
    assert deadline_miss_rate([0.5, 1.0], 0.5, 0.1) == (9 / 10, 9, 10)
    assert deadline_miss_rate([1.5], 0.5, 0.1) == (1.0, 10, 10)
    frame = frame_from_records([rec(d=0, chunks=[500, 1500], k=[1, 1]), rec(1, d=0, chunks=[1500], k=[1])])
    assert fluidity_index(frame, 0.5, 0.1, np.array([True, True])).tolist() == pytest.approx([1 / 10, 0.0])


def test_intervals_start_at_the_send_time() -> None:
    # Sent at 2 s, chunks at 2.3 s and 2.5 s: intervals 0.3 and 0.2 (not 2.3 or 4.3).
    frame = frame_from_records([rec(d=2000, a=2000, chunks=[2300, 2500], k=[1, 1])])
    intervals, off = token_intervals(frame)
    assert intervals.tolist() == pytest.approx([0.3, 0.2], abs=1e-12) and off.tolist() == [0, 2]
    frame = frame_from_records([rec(d=2000, a=2000, chunks=[2300, 2500], k=[2, 2])])
    assert token_intervals(frame)[0].tolist() == pytest.approx([0.3, 0.0, 0.2, 0.0], abs=1e-12)


def test_every_chunk_with_two_tokens_repeats_each_time() -> None:
    # Every chunk carries 2 tokens (no chunk with 1): tokens at 100, 100, 300, 300 ms after the send.
    frame = frame_from_records([rec(d=0, chunks=[100, 300], k=[2, 2]), rec(1, d=0, chunks=[50], k=[2])])
    intervals, off = token_intervals(frame)
    assert off.tolist() == [0, 4, 6]
    assert intervals.tolist() == pytest.approx([0.1, 0.0, 0.2, 0.0, 0.05, 0.0], abs=1e-12)


def test_a_zero_decode_deadline_is_refused() -> None:
    frame = frame_from_records([rec(d=0, chunks=[100], k=[1])])
    with pytest.raises(ValueError) as info:
        fluidity_index(frame, 0.5, 0.0, ALL)
    assert str(info.value) == "fluidity decode deadline must be > 0"
