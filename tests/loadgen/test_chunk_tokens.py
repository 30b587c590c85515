"""Tokens per chunk inferred after the stream: apportioning, token events, and which events count."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
import pytest

from loadgen.http.chunk_tokens import (
    apportion,
    apportion_above,
    choose_estimate,
    infer_chunk_tokens,
    text_weights,
    token_events,
)
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
    k, source, n, _ = infer_chunk_tokens(["ab", "cdef"], [], 9, ByteCounter())
    assert (k, source, n) == ([3, 6], "final_split_by_tokenizer", 9)
    k, source, n, _ = infer_chunk_tokens(["ab", "cdef"], [], 9, WordCounter())  # words: no tokenizer
    assert (k, source, n) == ([3, 6], "final_split_by_text_length", 9)
    assert infer_chunk_tokens([], [0], 4, ByteCounter()) == (None, "final_only", 4, None)
    # Tool calls only: no text to tokenize, so the events stand in.
    assert infer_chunk_tokens([None, None], [], None, ByteCounter()) == ([1, 1], "estimate_token_events", 2, None)
    assert infer_chunk_tokens(["é", "x"], [], None, ByteCounter()) == ([2, 1], "estimate_tokenizer", 3, 3)


@pytest.mark.parametrize(("total", "weights", "floors", "expected"), [
    (14, [2, 9, 9, 1, 9, 1, 1], [1] * 7, [1, 4, 3, 1, 3, 1, 1]),  # 0s set to 1, the rest split again
    (14, [2, 3, 3, 1, 3, 1, 1], [1] * 7, [2, 3, 3, 1, 3, 1, 1]),  # weights that add up: taken as they are
    (6, [5, 0, 0], [1, 1, 3], [2, 1, 3]),  # a floor above its weight (empty events carried to that chunk)
    (4, [0, 0, 0], [1, 1, 1], [2, 1, 1]),  # nothing above the floors to weigh by: equal shares
    (2, [3, 3, 3], [1, 1, 1], [1, 1, 0]),  # fewer tokens than floors: split by the floors
])
def test_apportion_above_keeps_every_floor(total: int, weights: list[int], floors: list[int],
                                           expected: list[int]) -> None:
    parts = apportion_above(total, weights, floors)
    assert parts == expected and sum(parts) == total


def test_a_replacement_character_weighs_one_token() -> None:
    # The byte tokenizer counts U+FFFD as its three UTF-8 bytes; the bytes it replaced were one token here.
    assert text_weights(["a\ufffd", "\ufffd\ufffdbc"], ByteCounter()) == [2, 4]
    assert text_weights(["ab"], WordCounter()) is None


@pytest.mark.parametrize(("by_tokenizer", "by_events", "expected"), [
    (14, 31, "estimate_token_events_tokenizer_low"),  # bytes that never became text: the events are a floor
    (31, 31, "estimate_tokenizer"),
    (45, 31, "estimate_tokenizer"),  # several tokens per event: the tokenizer is believed up to 1.5x
    (47, 31, "estimate_token_events_tokenizer_high"),
    (1349, 762, "estimate_token_events_tokenizer_high"),
    (6, 2, "estimate_tokenizer"),  # a few tokens more on a short answer is no wide margin
    (7, 2, "estimate_token_events_tokenizer_high"),
])
def test_choose_estimate(by_tokenizer: int, by_events: int, expected: str) -> None:
    assert choose_estimate(by_tokenizer, by_events) == expected


def test_no_usage_never_counts_fewer_tokens_than_token_events() -> None:
    # Two content chunks and three empty token events; the tokenizer finds 2 tokens in the text.
    k, source, n, by_tokenizer = infer_chunk_tokens(["ab", "c"], [0, 1, 1], None, _Fixed([1, 1]))
    assert (k, source, n, by_tokenizer) == ([2, 3], "estimate_token_events_tokenizer_low", 5, 2)
    # Far more than the events: recorded, not believed.
    k, source, n, by_tokenizer = infer_chunk_tokens(["ab", "c"], [], None, _Fixed([9, 9]))
    assert (k, source, n, by_tokenizer) == ([1, 1], "estimate_token_events_tokenizer_high", 2, 18)
    # Within the margin: the tokenizer's count, no chunk below one token.
    k, source, n, by_tokenizer = infer_chunk_tokens(["ab", "c", "d"], [], None, _Fixed([4, 0, 1]))
    assert (k, source, n, by_tokenizer) == ([3, 1, 1], "estimate_tokenizer", 5, 5)


class _Fixed(ByteCounter):
    """A tokenizer whose split of the pieces is given (the shape is what matters here)."""

    def __init__(self, split: list[int]) -> None:
        super().__init__()
        self.split = split

    def piece_tokens(self, pieces: Sequence[str]) -> list[int] | None:
        return list(self.split)


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

    assert infer_chunk_tokens(["ab", "c"], [], 6, Broken()) == ([4, 2], "final_split_by_text_length", 6, None)
    assert infer_chunk_tokens(["ab", "c"], [1], None, Broken()) == ([1, 2], "estimate_token_events", 3, None)


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
