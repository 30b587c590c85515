"""The `sessions` section and the planned-cancel counters against a hand-counted run of three conversations."""

from __future__ import annotations

import numpy as np

from metrics.records.frame import RequestFrame, frame_from_records
from metrics.summary.cancels import abandoned_turns, cancel_counts, excluded_from_goodput, planned
from metrics.summary.sessions import sessions_section
from tests.metrics._records import rec


def _frame() -> RequestFrame:
    return frame_from_records([
        # session 1: three turns, all ok
        rec(0, a=0, d=0, chunks=[10], closed=20, session=1, turn=1),
        rec(1, a=100, d=100, chunks=[110], closed=120, session=1, turn=2),
        rec(2, a=200, d=200, chunks=[210], closed=220, session=1, turn=3),
        # session 2: turn 1 cancelled as planned, turns 2 and 3 never sent
        rec(3, a=300, d=300, chunks=[310], closed=320, status="cancelled", error_kind="planned_cancel",
            session=2, turn=1),
        rec(4, a=400, d=None, chunks=[], n=0, status="cancelled", error_kind="session_ended", session=2, turn=2),
        rec(5, a=500, d=None, chunks=[], n=0, status="cancelled", error_kind="session_ended", session=2, turn=3),
        # session 3: turn 1 failed, nothing left to end
        rec(6, a=600, d=600, chunks=[], n=0, closed=610, status="error", error_kind="http_status",
            session=3, turn=1),
        # a lone request cancelled as planned: no session
        rec(7, a=700, d=700, chunks=[710], closed=720, status="cancelled", error_kind="planned_cancel"),
    ])


def test_sessions_by_hand() -> None:
    frame = _frame()
    measured = np.array([False, True, True, True, True, True, True, True])
    section = sessions_section(frame, measured)
    assert section is not None and {"sessions": section.to_json()} == {"sessions": {
        "sessions": 3,
        "completed": 1,  # session 1 only (session 3 failed)
        "ended_early": 1,  # session 2: its turns never sent
        "turns": 7,
        "turns_sent": 5,
        "turns_not_sent": 2,
        "turns_measured": 6,
        "turns_per_session": {"mean": 7 / 3, "max": 3},
    }}


def test_no_session_no_section() -> None:
    frame = frame_from_records([rec(0, chunks=[1]), rec(1, chunks=[1])])
    assert sessions_section(frame, np.ones(2, dtype=np.bool_)) is None


def test_planned_cancels_and_their_abandoned_turns_by_hand() -> None:
    frame = _frame()
    assert planned(frame).tolist() == [False, False, False, True, False, False, False, True]
    assert abandoned_turns(frame, planned(frame)).tolist() == [False, False, False, False, True, True, False, False]
    assert excluded_from_goodput(frame).tolist() == [False, False, False, True, True, True, False, True]
    measured = np.array([True, True, True, True, True, True, True, False])
    assert cancel_counts(frame, measured) == {"planned_cancels": 2, "in_window_planned_cancels": 1,
                                             "turns_abandoned_after_cancel": 2}


def test_without_a_planned_cancel_no_turn_is_abandoned() -> None:
    frame = frame_from_records([
        rec(0, a=0, d=0, chunks=[], n=0, closed=5, status="error", error_kind="x", session=1, turn=1),
        rec(1, a=10, d=None, chunks=[], n=0, status="cancelled", error_kind="session_ended", session=1, turn=2),
    ])
    assert not abandoned_turns(frame, planned(frame)).any()
    assert cancel_counts(frame, np.ones(2, dtype=np.bool_))["turns_abandoned_after_cancel"] == 0
