"""Which requests reasoned or ended in a tool call, and when a run's outputs show the answer figures, on
requests built by hand to sit on each edge: a stamp without a count, a count of exactly one, a single
request, an empty frame, a tool-call stamp alone, and a frame without answer columns."""

from __future__ import annotations

import dataclasses

import numpy as np

from metrics.latency.answer import ended_in_tool_call, reasoned, shows_answer_figures
from metrics.records.frame import frame_from_records
from tests.metrics._records import MS, rec


def test_reasoning_is_known_from_its_stamp_or_from_its_count() -> None:
    # 0: a reasoning delta stamped, the server counted nothing; 1: one reasoning token counted, no delta
    # streamed (a server that hides the text); 2: neither; 3: a stamp and 40 tokens.
    frame = frame_from_records([
        rec(0, chunks=[10, 20], reasoning_ns=10 * MS),
        rec(1, chunks=[10, 20], reasoning_tokens=1),
        rec(2, chunks=[10, 20]),
        rec(3, chunks=[10, 20], reasoning_ns=10 * MS, reasoning_tokens=40),
    ])
    assert reasoned(frame).tolist() == [True, True, False, True]


def test_one_tool_call_ends_the_turn_in_a_tool_call_whatever_the_finish_reason() -> None:
    frame = frame_from_records([rec(0, chunks=[10], tool_calls=1, finish_reason="stop"),
                                rec(1, chunks=[10], finish_reason="tool_use"),
                                rec(2, chunks=[10], finish_reason="stop")])
    assert ended_in_tool_call(frame).tolist() == [True, True, False]


def test_a_single_request_that_reasoned_shows_the_figures() -> None:
    assert shows_answer_figures(frame_from_records([rec(0, chunks=[10, 20], reasoning_ns=10 * MS)])) is True
    assert shows_answer_figures(frame_from_records([rec(0, chunks=[10, 20])])) is False


def test_an_empty_frame_shows_no_answer_figures() -> None:
    assert shows_answer_figures(frame_from_records([])) is False


def test_each_sign_alone_shows_the_figures() -> None:
    # A tool-call delta stamped with no count of calls; one call counted; a tool finish reason alone.
    assert shows_answer_figures(frame_from_records([rec(0, chunks=[10], tool_call_ns=10 * MS)])) is True
    assert shows_answer_figures(frame_from_records([rec(0, chunks=[10], tool_calls=1)])) is True
    assert shows_answer_figures(frame_from_records([rec(0, chunks=[10], finish_reason="tool_calls")])) is True


def test_a_frame_without_answer_columns_shows_no_answer_figures() -> None:
    # A frame built without the answer columns (their defaults: empty) is a run from before they existed,
    # even when a finish reason names a tool call.
    full = frame_from_records([rec(0, chunks=[10], finish_reason="tool_calls")])
    bare = dataclasses.replace(full, reasoning_ns=np.zeros(0), answer_ns=np.zeros(0), tool_call_ns=np.zeros(0),
                               tool_call_done_ns=np.zeros(0), reasoning_tokens=np.zeros(0),
                               tool_calls=np.zeros(0, dtype=np.int64))
    assert shows_answer_figures(bare) is False
