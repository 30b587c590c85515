"""Tokens per chunk inferred after the stream: apportioning, token events, and which events count."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
import pytest

from loadgen.http.chunk_tokens import apportion, infer_chunk_tokens, token_events
from loadgen.http.chunks import ChunkAccumulator
from loadgen.workload.text import ByteCounter, WordCounter
from metrics.records.record import RequestRecord
from tests.servers.scripted import chat_chunk


@pytest.mark.parametrize(("total", "weights", "expected"), [
    (10, [1, 1, 1, 1, 1], [2, 2, 2, 2, 2]),
    (8, [1, 1, 1, 1, 1], [2, 2, 2, 1, 1]),  # remainders tie: the earlier chunks get them
    (7, [3, 0, 1], [5, 0, 2]),
    (3, [0, 0, 0], [1, 1, 1]),  # nothing to weigh by: equal shares
    (0, [4, 2], [0, 0]),
    (5, [], []),
    (1000, [1, 2, 3, 4], [100, 200, 300, 400]),
])
def test_apportion(total: int, weights: list[int], expected: list[int]) -> None:
    assert apportion(total, weights) == expected


def test_apportion_always_sums_to_the_total() -> None:
    for total in range(0, 60, 7):
        for weights in ([5, 3, 9, 1], [1], [0, 7], [2, 2, 2, 2, 2, 2, 2]):
            parts = apportion(total, weights)
            assert sum(parts) == total and min(parts) >= 0


def test_token_events_carry_empty_events_forward() -> None:
    # Empty events before chunk 0, between chunks 1 and 2, and after the last chunk.
    assert token_events(3, [0, 2, 2, 3]) == ([2, 1, 4], 7)
    assert token_events(0, [0, 0]) == ([], 2)


def test_infer_prefers_the_final_usage_over_any_estimate() -> None:
    k, source, n = infer_chunk_tokens(["ab", "cdef"], [], 9, ByteCounter())
    assert (k, source, n) == ([3, 6], "final_split_by_tokenizer", 9)
    k, source, n = infer_chunk_tokens(["ab", "cdef"], [], 9, WordCounter())  # words: no tokenizer
    assert (k, source, n) == ([3, 6], "final_split_by_text_length", 9)
    assert infer_chunk_tokens([], [0], 4, ByteCounter()) == (None, "final_only", 4)
    # Tool calls only: no text to tokenize, so the events stand in.
    assert infer_chunk_tokens([None, None], [], None, ByteCounter()) == ([1, 1], "estimate_token_events", 2)
    assert infer_chunk_tokens(["é", "x"], [], None, ByteCounter()) == ([2, 1], "estimate_tokenizer", 3)


def _fill(objs: list[dict[str, Any]]) -> RequestRecord:
    acc = ChunkAccumulator()
    for i, obj in enumerate(objs):
        acc.feed(orjson.dumps(obj), i)
    record = RequestRecord(id=0, intended_ns=0, sent_ns=0)
    acc.fill(record)
    return record


def test_only_token_events_count_as_tokens() -> None:
    r = _fill([
        chat_chunk(role="assistant", content=""),  # role announcement: no token
        chat_chunk("a"),
        chat_chunk(""),  # a token whose text is held back
        chat_chunk("b"),
        {"id": "x", "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "stop"}]},  # finish
        {"id": "x", "choices": []},
    ])
    assert (r.chunk_tokens, r.output_tokens, r.token_source) == ([1, 2], 3, "estimate_token_events")


def test_completions_empty_text_events_count() -> None:
    def text(t: str, reason: str | None = None) -> dict[str, Any]:
        return {"choices": [{"index": 0, "text": t, "finish_reason": reason}]}

    r = _fill([text("a"), text(""), text(""), text("b"), text("", "length")])
    assert (r.chunk_tokens, r.output_tokens) == ([1, 3], 4)


def test_a_failing_tokenizer_falls_back_instead_of_raising() -> None:
    class Broken(ByteCounter):
        def piece_tokens(self, pieces: Sequence[str]) -> list[int] | None:
            raise RuntimeError("tokenizer failed")

    assert infer_chunk_tokens(["ab", "c"], [], 6, Broken()) == ([4, 2], "final_split_by_text_length", 6)
    assert infer_chunk_tokens(["ab", "c"], [1], None, Broken()) == ([1, 2], "estimate_token_events", 3)


def test_a_final_usage_is_split_by_the_tokenizer_not_by_characters() -> None:
    # Non-ASCII text, where tokens and characters differ: the byte tokenizer gives "héé" 5 tokens (h = 1
    # byte, é = 2 bytes each) and "ab" 2, so 14 tokens split 5:2 are 10 and 4. By characters (3:2) they
    # would be 8.4 and 5.6, i.e. 8 and 6. Only the first three values are compared: they are the same in
    # every version of this function's return.
    result = infer_chunk_tokens(["héé", "ab"], [], 14, ByteCounter())
    assert (result[0], result[1], result[2]) == ([10, 4], "final_split_by_tokenizer", 14)
    # Without a tokenizer, characters: the 3:2 split, 14·3/5 = 8.4 → 8, 14·2/5 = 5.6 → 6 (largest remainder).
    result = infer_chunk_tokens(["héé", "ab"], [], 14, WordCounter())
    assert (result[0], result[1], result[2]) == ([8, 6], "final_split_by_text_length", 14)
