"""Which kind of output each chunk was and the reasoning tokens' count and source, from hand-written chunk
positions and counts (docs/metrics.md, reasoning and tool calls; the rules in loadgen/http/output_kinds.py's
docstring). Each expected value is read off the positions and counts written in the test."""

from __future__ import annotations

from typing import Any

import pytest

from loadgen.http.output_kinds import EXACT_PER_CHUNK, fill_output_kinds, first_answer_chunk, reasoning_tokens
from metrics.records.record import RequestRecord, TokenSource


def usage(told: Any) -> dict[str, Any]:
    return {"completion_tokens": 99, "completion_tokens_details": {"reasoning_tokens": told}}


@pytest.mark.parametrize(("reasoning_at", "chunks", "first"), [
    ([], 0, None),
    ([], 3, 0),
    ([0], 1, None),
    ([0], 2, 1),
    ([0, 1], 2, None),
    ([0, 1], 5, 2),
    ([0, 1, 3], 5, 2),  # reasoning again after the answer began
    ([1, 2], 3, 0),  # answered before reasoning
    ([0, 2], 3, 1),
])
def test_the_first_answer_chunk(reasoning_at: list[int], chunks: int, first: int | None) -> None:
    assert first_answer_chunk(reasoning_at, chunks) == first


def test_the_per_chunk_sources_that_are_the_servers_own() -> None:
    assert frozenset({"usage_delta", "server"}) == EXACT_PER_CHUNK


@pytest.mark.parametrize(("reasoning_at", "chunk_tokens", "source", "usage_", "answered", "expected"), [
    # no server count: the reasoning chunks' tokens (2 + 3), in the per-chunk counts' source
    ([0, 2], [2, 5, 3], "final_split_by_text_length", {}, True, (5, "final_split_by_text_length")),
    ([0, 2], [2, 5, 3], "final_split_by_text_length", {"completion_tokens_details": None}, True,
     (5, "final_split_by_text_length")),
    ([0, 2], [2, 5, 3], "final_split_by_text_length", {"completion_tokens_details": [4]}, True,
     (5, "final_split_by_text_length")),
    # the server's count, at or above the number of reasoning chunks
    ([0, 2], [2, 5, 3], "final_split_by_text_length", usage(7), True, (7, "usage")),
    ([0, 2], [2, 5, 3], "final_split_by_text_length", usage(2), True, (2, "usage")),  # = 2 chunks: taken
    ([0, 2], [2, 5, 3], "final_split_by_text_length", usage(1), True, (5, "final_split_by_text_length")),
    ([0, 2], [2, 5, 3], "final_split_by_text_length", usage(0), True, (5, "final_split_by_text_length")),
    ([0, 2], [2, 5, 3], "final_split_by_text_length", usage(7.0), True, (5, "final_split_by_text_length")),
    ([0, 2], [2, 5, 3], "final_split_by_text_length", usage(True), True, (5, "final_split_by_text_length")),
    ([0, 2], [2, 5, 3], "final_split_by_text_length", usage(None), True, (5, "final_split_by_text_length")),
    # no answer streamed: a count below the stream's own would leave answer tokens never seen
    ([0, 1], [4, 6], "final_split_by_text_length", usage(7), False, (10, "final_split_by_text_length")),
    ([0, 1], [4, 6], "final_split_by_text_length", usage(10), False, (10, "usage")),
    ([0, 1], [4, 6], "final_split_by_text_length", usage(12), False, (12, "usage")),
    ([0, 1], None, "final_split_by_text_length", usage(2), False, (2, "usage")),  # nothing counted: taken
    # the server's own per-chunk counts win over a final detail that disagrees
    ([0, 1], [4, 6, 1], "usage_delta", usage(3), True, (10, "usage_delta")),
    ([0, 1], [4, 6, 1], "server", usage(30), True, (10, "server")),
    ([0, 1], [4, 6, 1], "usage_delta", usage(10), True, (10, "usage")),
    ([0, 1], [4, 6, 1], "server", {}, True, (10, "server")),
    # per-chunk counts that do not reach the last reasoning chunk count nothing
    ([0, 2], [2, 5], "usage_delta", usage(7), True, (7, "usage")),
    ([0, 2], [2, 5], "usage_delta", {}, True, (None, None)),
    ([0, 2], None, "estimate", usage(6), True, (6, "usage")),
    ([0, 2], None, "estimate", {}, True, (None, None)),
    # no reasoning streamed
    ([], [3, 4], "usage_delta", {}, True, (None, None)),
    ([], [3, 4], "usage_delta", usage(0), True, (0, "usage")),
    ([], [3, 4], "final_split_by_text_length", usage(5), True, (5, "usage")),
])
def test_reasoning_tokens(reasoning_at: list[int], chunk_tokens: list[int] | None, source: str,
                          usage_: dict[str, Any], answered: bool, expected: tuple[int | None, str | None]) -> None:
    assert reasoning_tokens(reasoning_at, chunk_tokens, source, usage_, answered=answered) == expected


def test_a_request_counts_as_answered_unless_told_otherwise() -> None:
    assert reasoning_tokens([0, 1], [4, 6], "final_split_by_text_length", usage(7)) == (7, "usage")


def record(chunk_ns: list[int] | None, chunk_tokens: list[int] | None = None,
           source: TokenSource = "estimate") -> RequestRecord:
    rec = RequestRecord(id=0, intended_ns=0, sent_ns=0)
    rec.chunk_ns = chunk_ns  # type: ignore[assignment]
    rec.chunk_tokens = chunk_tokens
    rec.token_source = source
    return rec


def test_reasoning_then_an_answer_then_a_tool_call() -> None:
    rec = record([10, 20, 30, 40, 50], [1, 2, 3, 4, 5], "final_split_by_text_length")
    fill_output_kinds(rec, [0, 1], [3, 4], 1, 45, {})
    assert (rec.reasoning_ns, rec.answer_ns) == (10, 30)
    assert (rec.tool_calls, rec.tool_call_ns, rec.tool_call_done_ns) == (1, 40, 45)
    assert (rec.reasoning_tokens, rec.reasoning_tokens_source) == (3, "final_split_by_text_length")


def test_reasoning_that_answered_takes_a_servers_count_below_the_streams() -> None:
    rec = record([10, 20, 30], [4, 6, 1], "final_split_by_text_length")
    fill_output_kinds(rec, [0, 1], [], 0, None, usage(7))  # 7 >= 2 reasoning chunks, and an answer came
    assert rec.answer_ns == 30
    assert (rec.reasoning_tokens, rec.reasoning_tokens_source) == (7, "usage")


def test_reasoning_that_never_answered_keeps_the_streams_count() -> None:
    rec = record([10, 20], [4, 6], "final_split_by_text_length")
    fill_output_kinds(rec, [0, 1], [], 0, None, usage(7))
    assert (rec.reasoning_ns, rec.answer_ns) == (10, None)
    assert (rec.tool_calls, rec.tool_call_ns, rec.tool_call_done_ns) == (0, None, None)
    assert (rec.reasoning_tokens, rec.reasoning_tokens_source) == (10, "final_split_by_text_length")


def test_an_answer_without_reasoning_takes_the_servers_count() -> None:
    rec = record([10, 20], [4, 6], "final_split_by_text_length")
    fill_output_kinds(rec, [], [], 0, 99, usage(0))
    assert (rec.reasoning_ns, rec.answer_ns) == (None, 10)
    assert rec.tool_call_done_ns is None  # no tool chunk: a done time means nothing
    assert (rec.reasoning_tokens, rec.reasoning_tokens_source) == (0, "usage")


def test_a_tool_call_first_is_the_answer() -> None:
    rec = record([7, 8], [1, 1], "usage_delta")
    fill_output_kinds(rec, [1], [0], 2, None, {})
    assert (rec.reasoning_ns, rec.answer_ns, rec.tool_call_ns, rec.tool_call_done_ns) == (8, 7, 7, None)
    assert rec.tool_calls == 2
    assert (rec.reasoning_tokens, rec.reasoning_tokens_source) == (1, "usage_delta")


def test_a_record_without_chunks() -> None:
    rec = record(None)
    fill_output_kinds(rec, [], [], 0, None, {})
    assert (rec.reasoning_ns, rec.answer_ns, rec.tool_call_ns, rec.tool_call_done_ns) == (None, None, None, None)
    assert (rec.reasoning_tokens, rec.reasoning_tokens_source) == (None, None)
