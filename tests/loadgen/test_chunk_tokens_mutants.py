"""Edges of the token split that mutation testing found unguarded (docs/testing.md); every expected split
is worked out by hand in the comment beside it (largest remainder, ties to the earlier index)."""

from __future__ import annotations

from loadgen.http.chunk_tokens import apportion, apportion_above, infer_chunk_tokens
from loadgen.workload.text import ByteCounter


def test_weights_summing_to_one_are_still_proportions() -> None:
    assert apportion(3, [1, 0]) == [3, 0]  # 3·1/1 and 3·0/1: not the equal split [2, 1]


def test_a_part_exactly_on_its_floor_stays_in_the_proportional_split() -> None:
    # 16 over weights 1:2:9:2 (sum 14): 16/14 = 1.14, 32/14 = 2.29, 144/14 = 10.29, 32/14 = 2.29 → 1, 2, 10, 2
    # (15); one left, remainders 2, 4, 4, 4 → index 1. No part below its floor (1, 1, 3, 1): the plain split.
    assert apportion_above(16, [1, 2, 9, 2], [1, 1, 3, 1]) == [1, 3, 10, 2]


def test_a_zero_weight_part_with_no_floor_gets_nothing() -> None:
    assert apportion_above(3, [1, 0], [0, 0]) == [3, 0]


def test_no_parts_split_nothing() -> None:
    assert apportion_above(5, [], []) == []


def test_a_tool_call_chunk_has_no_text_length() -> None:
    # Final 6 over the lengths 2 ("ab") and 0 (a tool call): 6 and 0, then the tool call's floor of one token
    # (one event) takes one from the text chunk.
    assert infer_chunk_tokens(["ab", None], [], 6, None) == ([5, 1], "final_split_by_text_length", 6, None)


def test_a_one_token_text_is_split_by_the_tokenizer() -> None:
    # ByteCounter: "a" is one token; the final 5 all go to the only chunk, on the tokenizer's basis.
    assert infer_chunk_tokens(["a"], [], 5, ByteCounter()) == ([5], "final_split_by_tokenizer", 5, None)
