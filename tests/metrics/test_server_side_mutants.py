"""The `server` section against hand-worked server stamps: server TTFT and ITL per request, gaps never
taken across two requests, requests without stamps or outside the selection left out."""

from __future__ import annotations

import numpy as np
import pytest

from metrics.records.frame import RequestFrame, frame_from_records
from metrics.summary.server_side import server_itl_s, server_section, server_ttft_s
from tests.metrics._records import rec


def _frame() -> RequestFrame:
    return frame_from_records([
        rec(0, chunks=[100, 110, 130], server_chunk_s=[0.09, 0.1, 0.115]),  # gaps 10, 15 ms
        rec(1, chunks=[200, 240], server_chunk_s=[0.5, 0.53]),  # gap 30 ms; the step from 0.115 is no gap
        rec(2, chunks=[300, 305]),  # no stamps
        rec(3, chunks=[], n=0, status="error", error_kind="x"),  # no chunk
        rec(4, chunks=[400, 420, 450], server_chunk_s=[0.2, 0.22, 0.26], server={"queue_s": 0.05}),  # 20, 40 ms
    ])


def test_server_ttft_is_the_first_stamp() -> None:
    ttft = server_ttft_s(_frame())
    assert ttft[[0, 1, 4]].tolist() == [0.09, 0.5, 0.2]
    assert np.isnan(ttft[[2, 3]]).all()


def test_server_itl_keeps_gaps_within_one_chosen_request() -> None:
    frame = _frame()
    everything = np.ones(frame.n, dtype=np.bool_)
    assert sorted(server_itl_s(frame, everything).tolist()) == pytest.approx([0.01, 0.015, 0.02, 0.03, 0.04])
    only = np.array([False, True, True, True, True])
    assert sorted(server_itl_s(frame, only).tolist()) == pytest.approx([0.02, 0.03, 0.04])
    first = np.array([True, False, False, False, False])
    assert sorted(server_itl_s(frame, first).tolist()) == pytest.approx([0.01, 0.015])


def test_one_stamp_has_no_gap() -> None:
    frame = frame_from_records([rec(0, chunks=[100], server_chunk_s=[0.1])])
    assert server_itl_s(frame, np.ones(1, dtype=np.bool_)).size == 0


def test_server_section_by_hand() -> None:
    frame = _frame()
    include = np.array([True, True, True, True, False])
    client_ttft = np.array([0.1, 0.51, 0.3, np.nan, 0.4])
    section = server_section(frame, include, client_ttft).to_json()
    assert section["requests_with_timing"] == 2  # 0 and 1 (4 is left out, 2 has no stamps)
    assert (section["ttft_s"]["count"], section["ttft_s"]["min"], section["ttft_s"]["max"]) == (2, 0.09, 0.5)
    assert section["itl_s"]["count"] == 3 and section["itl_s"]["max"] == pytest.approx(0.03)
    diff = section["ttft_client_minus_server_s"]
    assert diff["count"] == 2 and diff["mean"] == pytest.approx(0.01)  # 10 ms each
    assert section["queue_s"]["count"] == 0  # request 4's phase is outside the selection
    assert server_section(frame, ~include, client_ttft).to_json()["queue_s"]["max"] == 0.05


def test_one_stamp_requests_and_a_last_request_without_chunks() -> None:
    frame = frame_from_records([
        rec(0, chunks=[100], server_chunk_s=[0.1]),  # one stamp: a TTFT, no gap
        rec(1, chunks=[200, 230], server_chunk_s=[0.5, 0.53]),  # one gap, 30 ms
        rec(2, chunks=[300], server_chunk_s=[0.9]),  # one stamp
        rec(3, chunks=[], n=0, server_chunk_s=[], status="error", error_kind="x"),  # last, no chunk
    ])
    everything = np.ones(frame.n, dtype=np.bool_)
    assert server_itl_s(frame, everything).tolist() == pytest.approx([0.03])
    ttft = server_ttft_s(frame)
    assert ttft[:3].tolist() == [0.1, 0.5, 0.9] and np.isnan(ttft[3])


def test_two_stamps_make_one_gap() -> None:
    frame = frame_from_records([rec(0, chunks=[100, 120], server_chunk_s=[0.1, 0.125])])
    assert server_itl_s(frame, np.ones(1, dtype=np.bool_)).tolist() == pytest.approx([0.025])
