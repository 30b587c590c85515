"""The chunk accumulator, event by event, against hand-counted streams (docs/metrics.md, content chunks and
token accounting). Written for the mutants that survived the client-level tests (docs/testing.md): each
expected value is counted from the events written out in the test."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from loadgen.http.chunks import ChunkAccumulator, error_text
from loadgen.http.errors import InvalidJSON, InvalidUTF8, MidStreamError
from loadgen.workload.text import ByteCounter
from metrics.records.record import RequestRecord


def delta(content: str | None = None, *, reason: str | None = None, usage: dict[str, Any] | None = None,
          goodput: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    d = dict(fields)
    if content is not None:
        d["content"] = content
    obj: dict[str, Any] = {"choices": [{"index": 0, "delta": d, "finish_reason": reason}]}
    if usage is not None:
        obj["usage"] = usage
    if goodput is not None:
        obj["goodput"] = goodput
    return obj


def feed(*objs: dict[str, Any]) -> ChunkAccumulator:
    acc = ChunkAccumulator()
    for i, obj in enumerate(objs):
        assert acc.feed(orjson.dumps(obj), 1000 * (i + 1)) is False
    return acc


def fill(acc: ChunkAccumulator, counter: ByteCounter | None = None) -> RequestRecord:
    record = RequestRecord(id=0, intended_ns=0, sent_ns=0)
    acc.fill(record, counter)
    return record


def test_done_ends_the_stream_and_nothing_else_does() -> None:
    acc = ChunkAccumulator()
    assert acc.done is False
    assert acc.feed(orjson.dumps(delta("a")), 5) is False
    assert acc.done is False
    assert acc.feed(b"[DONE]", 6) is True
    assert acc.done is True
    assert acc.chunk_ns == [5]


def test_undecodable_data_is_named_by_its_fault() -> None:
    with pytest.raises(InvalidUTF8) as utf:
        ChunkAccumulator().feed(b'{"a": "\xff"}', 0)
    assert str(utf.value) == "event data is not UTF-8 (invalid start byte at byte 7)"
    with pytest.raises(InvalidJSON) as bad:
        ChunkAccumulator().feed(b"{" + b"x" * 100, 0)
    assert str(bad.value).startswith("event data is not JSON (unexpected character")  # the parser's reason
    assert str(bad.value).endswith(": " + repr("{" + "x" * 79))  # the first 80 characters
    with pytest.raises(InvalidJSON) as not_object:
        ChunkAccumulator().feed(b"[1, 2]", 0)
    assert str(not_object.value) == "event data is not a JSON object: b'[1, 2]'"
    long_list = b"[" + b"1," * 60 + b"1]"
    with pytest.raises(InvalidJSON) as long_not_object:
        ChunkAccumulator().feed(long_list, 0)
    assert str(long_not_object.value) == f"event data is not a JSON object: {long_list[:80]!r}"
    with pytest.raises(InvalidJSON) as shape:
        ChunkAccumulator().feed(b'{"choices": [7]}', 0)
    assert str(shape.value).startswith("unexpected chunk shape (AttributeError: ")
    assert str(shape.value).endswith("""): b'{"choices": [7]}'""")
    long_shape = b'{"choices": [7], "pad": "' + b"p" * 100 + b'"}'
    with pytest.raises(InvalidJSON) as shape:
        ChunkAccumulator().feed(long_shape, 0)
    assert str(shape.value).endswith(f"): {long_shape[:80]!r}")


@pytest.mark.parametrize(("error", "text"), [
    ({"message": "too long", "code": 400}, "400: too long"),
    ({"detail": "no model", "type": "invalid_request"}, "invalid_request: no model"),
    ({"error": "boom"}, "boom"),
    ({"message": "m", "detail": "d"}, "m"),
    ({"code": 9}, '9: {"code":9}'),
    ({}, "{}"),
    ("plain   text\n here", "plain text here"),
])
def test_error_text(error: Any, text: str) -> None:
    assert error_text(error) == text


def test_errors_in_the_stream_fail_the_request() -> None:
    with pytest.raises(MidStreamError, match=r"^overloaded: busy$"):
        feed({"error": {"message": "busy", "code": "overloaded"}})
    with pytest.raises(MidStreamError, match=r"^bad: no$"):
        feed({"object": "error", "message": "no", "type": "bad"})
    feed({"error": None, "object": "chat.completion.chunk"})  # a null error is no error


def test_content_reasoning_and_tool_calls_are_chunks_and_only_the_answer_is_text() -> None:
    acc = feed(
        delta(role="assistant", content=""),  # the role announcement: not a chunk, not a token
        delta(reasoning_content="think "),
        delta(reasoning="more "),
        delta("Hello"),
        delta(tool_calls=[{"index": 0}]),
        delta(" world"),
        delta("", reason="stop"),
    )
    assert acc.chunk_ns == [2000, 3000, 4000, 5000, 6000]
    assert acc.texts == ["think ", "more ", "Hello", None, " world"]
    assert acc.reasoning_at == [0, 1]
    assert acc.empty_at == []
    assert acc.finish_reason == "stop"
    assert acc.content_text() == "Hello world"


def test_empty_token_events_and_their_positions() -> None:
    acc = feed(
        delta(""),  # a held-back token before any chunk
        delta("a"),
        delta(""), delta(""),
        delta("b"),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": None}]},  # no content field: not a token
        {"choices": [{"index": 0, "text": "", "finish_reason": None}]},  # completions' empty text: a token
    )
    assert acc.empty_at == [0, 1, 1, 2]
    record = fill(acc)
    # No usage, no tokenizer: one token per event; the leading one goes to chunk 0, the two middle ones to
    # chunk 1, the one after the last chunk to it.
    assert (record.chunk_tokens, record.output_tokens, record.token_source) == ([2, 4], 6, "estimate_token_events")
    assert record.output_tokens_estimated is True


def test_completions_text_and_a_non_string_finish_reason() -> None:
    acc = feed({"choices": [{"text": "ab", "finish_reason": None}]}, {"choices": [{"text": "c", "finish_reason": 1}]})
    assert (acc.texts, acc.finish_reason, acc.content_text()) == (["ab", "c"], "1", "abc")


def test_running_usage_gives_each_chunk_its_delta_and_carries_non_content_counts() -> None:
    acc = feed(
        delta("a", usage={"prompt_tokens": 9, "completion_tokens": 2}),
        delta(role="assistant", usage={"prompt_tokens": 9, "completion_tokens": 3}),  # not a chunk: 1 carried
        delta("b", usage={"prompt_tokens": 9, "completion_tokens": 6}),  # 3 + the carried 1
        delta("", reason="length", usage={"prompt_tokens": 9, "completion_tokens": 8}),  # 2 more, to "b"
    )
    record = fill(acc)
    assert (record.chunk_tokens, record.token_source) == ([2, 6], "usage_delta")
    assert (record.output_tokens, record.output_tokens_estimated) == (8, False)
    assert (record.prompt_tokens, record.prompt_tokens_estimated) == (9, False)
    assert record.finish_reason == "length"


def test_a_usage_count_that_goes_down_is_not_used_per_chunk() -> None:
    acc = feed(delta("ab", usage={"completion_tokens": 5}), delta("cd", usage={"completion_tokens": 4}))
    record = fill(acc)
    # Deltas 5 and -1: not a count per chunk; the final 4 is split by text length, 2:2.
    assert (record.chunk_tokens, record.token_source, record.output_tokens) == (
        [2, 2], "final_split_by_text_length", 4)


def test_usage_on_only_some_chunks_is_a_final_count_split_by_length() -> None:
    acc = feed(delta("abc"), delta("d", usage={"completion_tokens": 8, "prompt_tokens": "x"}))
    record = fill(acc)
    assert (record.chunk_tokens, record.token_source) == ([6, 2], "final_split_by_text_length")
    assert (record.prompt_tokens, record.prompt_tokens_estimated) == (None, True)  # not an int: not taken


def test_server_counts_per_chunk_with_carried_tokens_and_final_figures() -> None:
    acc = feed(
        delta("a", goodput={"t": 0.5, "n": 1}),
        delta("", goodput={"n": 2}),  # held-back tokens on a non-content event: carried to the next chunk
        delta("b", goodput={"t": 0.75, "n": 1}),
        delta(reason="stop", goodput={"n": 4, "queue_s": 0.1, "cached_tokens": 3}),  # final: 4 to "b"
        {"timings": {"cache_n": 5, "predicted_n": 8}},
    )
    record = fill(acc)
    assert (record.chunk_tokens, record.token_source) == ([1, 7], "server")
    assert record.server_chunk_s == [0.5, 0.75]
    assert record.server == {"queue_s": 0.1, "cached_tokens": 3, "timings": {"cache_n": 5, "predicted_n": 8}}
    assert record.cached_tokens == 5  # llama.cpp's timings before the reference server's figure
    assert (record.output_tokens, record.output_tokens_estimated) == (8, True)  # Σ k_j, no usage


def test_per_chunk_goodput_alone_is_not_a_final_figure() -> None:
    acc = feed(delta("a", goodput={"t": 0.5, "n": 1}), delta("b", goodput={"t": 1.0}))
    record = fill(acc)
    assert acc.goodput_final is None
    assert record.server is None
    assert record.server_chunk_s == [0.5, 1.0]
    assert record.token_source == "estimate_token_events"  # "n" on one chunk of two: not a per-chunk count
    assert fill(feed(delta("a", goodput={"n": 1, "x": 2}))).server == {"x": 2}


@pytest.mark.parametrize(("usage", "timings", "goodput", "cached"), [
    ({"prompt_tokens_details": {"cached_tokens": 7}}, {"cache_n": 5}, {"n": 1, "cached_tokens": 3}, 7),
    ({"prompt_tokens_details": {"cached_tokens": None}}, {"cache_n": 5}, {"n": 1, "cached_tokens": 3}, 5),
    ({"prompt_tokens_details": "x"}, {"cache_n": "5"}, {"n": 1, "cached_tokens": 3}, 3),
    ({"completion_tokens": 1}, None, {"n": 1, "cached_tokens": 2.0}, None),
])
def test_cached_tokens_by_source(usage: dict[str, Any], timings: dict[str, Any] | None,
                                 goodput: dict[str, Any], cached: int | None) -> None:
    obj = delta("a", usage=usage, goodput=goodput)
    if timings is not None:
        obj["timings"] = timings
    assert fill(feed(obj)).cached_tokens == cached


def test_a_tokenizer_weighs_the_text_when_the_server_counts_nothing() -> None:
    acc = feed(delta("héé"), delta(""), delta("ab"))  # ByteCounter: 5 and 2 tokens; 3 events
    record = fill(acc, ByteCounter())
    assert (record.chunk_tokens, record.token_source, record.output_tokens) == ([5, 2], "estimate_tokenizer", 7)
    assert (record.output_tokens_by_events, record.output_tokens_by_tokenizer) == (3, 7)
    plain = fill(feed(delta("héé"), delta("ab")))
    assert (plain.output_tokens_by_events, plain.output_tokens_by_tokenizer) == (None, None)


def test_no_chunks_and_a_final_usage() -> None:
    record = fill(feed(delta(role="assistant"), {"choices": [], "usage": {"completion_tokens": 3}}))
    assert (record.chunk_tokens, record.token_source, record.output_tokens) == (None, "final_only", 3)
    assert record.output_tokens_estimated is False
    assert record.server_chunk_s is None


def test_the_record_gets_the_chunk_times_and_no_finish_reason_when_none_came() -> None:
    record = fill(feed(delta("a"), delta("b")))
    assert record.chunk_ns == [1000, 2000]
    assert record.finish_reason is None


def test_usage_on_events_without_choices_is_carried_to_the_last_chunk() -> None:
    acc = feed(
        delta("a", usage={"completion_tokens": 1}),
        delta(role="assistant", usage={"completion_tokens": 2}),  # two non-content events in a row: 1 + 1
        delta(role="assistant", usage={"completion_tokens": 3}),
        delta("b", usage={"completion_tokens": 5}),  # 2 + the carried 2
        delta("c", usage={"completion_tokens": 6}),
        {"choices": [], "usage": {"completion_tokens": 9}},  # the usage-only final event: 3 more, to "c"
    )
    assert (fill(acc).chunk_tokens, fill(acc).token_source) == ([1, 4, 4], "usage_delta")


def test_a_chunk_the_usage_did_not_advance_on_counts_zero() -> None:
    acc = feed(delta("a", usage={"completion_tokens": 2}), delta("b", usage={"completion_tokens": 2}),
               delta("c", usage={"completion_tokens": 3}))
    assert (fill(acc).chunk_tokens, fill(acc).token_source) == ([2, 0, 1], "usage_delta")


def test_server_counts_on_consecutive_non_content_events_add_up() -> None:
    acc = feed(delta("a", goodput={"n": 1}), delta("", goodput={"n": 1}), delta("", goodput={"n": 2}),
               delta("b", goodput={"n": 1}), delta("c", goodput={"n": 1}), {"choices": [], "goodput": {"n": 2}})
    assert (fill(acc).chunk_tokens, fill(acc).token_source) == ([1, 4, 3], "server")


def test_fields_of_the_wrong_type_are_ignored() -> None:
    acc = feed(delta("ab", usage="n/a", goodput="x"), {"timings": "none", "usage": {"completion_tokens": "4"}})
    record = fill(acc)
    assert (record.server, record.server_chunk_s, record.cached_tokens) == (None, None, None)
    # "4" is not a count: no final usage, one token per event.
    assert (record.output_tokens, record.output_tokens_estimated, record.token_source) == (
        1, True, "estimate_token_events")


def test_token_events_without_text_still_count() -> None:
    record = fill(feed(delta(""), delta("")))  # two held-back tokens, no content chunk, no usage
    assert (record.chunk_tokens, record.output_tokens) == ([], 2)
