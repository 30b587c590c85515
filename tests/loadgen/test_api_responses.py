"""The Responses API end to end through the client: streams written from the public event shapes
(response.created ... response.completed), each event read as answer, reasoning, tool call, usage,
finish, error or nothing, and a stream without a terminal event failing as chat's without [DONE]."""

from __future__ import annotations

from loadgen.types import WorkItem
from tests.loadgen._api_streams import (
    body,
    r_args,
    r_args_done,
    r_created,
    r_end,
    r_in_progress,
    r_item,
    r_reasoning,
    r_text,
    r_usage,
    send,
    stream,
)

GAP_S = 0.03


async def test_reasoning_then_answer_with_the_servers_usage() -> None:
    text: list[str] = []
    record, request = await send("responses", stream(
        body(r_created(), r_in_progress(), r_item("added", "reasoning", summary=[]),
             r_reasoning("Let me"), r_reasoning(" think")),
        body(r_item("done", "reasoning"), r_item("added", "message", role="assistant", content=[]),
             {"type": "response.content_part.added", "output_index": 1, "content_index": 0,
              "part": {"type": "output_text", "text": ""}},
             r_text("Hel"), r_text("lo"), r_text("!"),
             {"type": "response.output_text.done", "output_index": 1, "content_index": 0, "text": "Hello!"}),
        body(r_end(usage=r_usage(21, 9, cached=16, reasoning=4))),
        gaps_s=GAP_S), text_out=text)
    assert request.path == "/v1/responses"
    assert record.status == "ok", record.error_message
    assert len(record.chunk_ns) == 5 and record.finish_reason == "stop"
    assert record.reasoning_ns == record.chunk_ns[0] and record.answer_ns == record.chunk_ns[2]
    assert record.answer_ns > record.reasoning_ns
    assert record.answer_ns - (record.sent_ns or 0) >= GAP_S * 1e9  # written 30 ms after the request came
    assert (record.reasoning_tokens, record.reasoning_tokens_source) == (4, "usage")
    assert (record.prompt_tokens, record.cached_tokens, record.output_tokens) == (21, 16, 9)
    assert record.prompt_tokens_estimated is False and record.output_tokens_estimated is False
    assert sum(record.chunk_tokens or []) == 9 and record.token_source == "final_split_by_text_length"
    assert text == ["Hello!"] and record.tool_calls == 0 and record.tool_call_ns is None


async def test_reasoning_tokens_are_counted_over_the_reasoning_chunks_without_usage_details() -> None:
    # 8 output tokens split by text length over "ab", "cd", "efgh": 2, 2, 4 → 4 reasoning tokens.
    record, _ = await send("responses", stream(body(
        r_created(), r_reasoning("ab"), r_reasoning("cd"), r_text("efgh"), r_end(usage=r_usage(5, 8)))))
    assert record.chunk_tokens == [2, 2, 4]
    assert (record.reasoning_tokens, record.reasoning_tokens_source) == (4, "final_split_by_text_length")


async def test_reasoning_summary_deltas_are_reasoning() -> None:
    record, _ = await send("responses", stream(body(
        r_created(), r_reasoning("plan", summary=True), r_text("answer"), r_end(usage=r_usage(5, 3)))))
    assert record.reasoning_ns == record.chunk_ns[0] and record.answer_ns == record.chunk_ns[1]


async def test_a_request_that_did_not_reason_has_no_reasoning_stamp() -> None:
    record, _ = await send("responses", stream(body(r_created(), r_text("hi"), r_end(usage=r_usage(5, 1)))))
    assert record.reasoning_ns is None and record.answer_ns == record.chunk_ns[0]
    assert record.reasoning_tokens is None and record.reasoning_tokens_source is None


async def test_a_function_call_with_streamed_arguments() -> None:
    text: list[str] = []
    record, _ = await send("responses", stream(
        body(r_created(), r_item("added", "function_call", name="get_weather", call_id="call_1", arguments=""),
             r_args('{"city"')),
        body(r_args(': "Paris"}')),
        body(r_args_done('{"city": "Paris"}'),
             r_item("done", "function_call", name="get_weather", call_id="call_1", arguments='{"city": "Paris"}'),
             r_end(usage=r_usage(30, 12))),
        gaps_s=GAP_S), text_out=text)
    assert record.status == "ok" and record.finish_reason == "tool_calls"
    assert record.tool_calls == 1 and len(record.chunk_ns) == 3  # the call's start, two argument deltas
    assert record.tool_call_ns == record.answer_ns == record.chunk_ns[0]
    assert record.tool_call_done_ns is not None and record.tool_call_done_ns > record.chunk_ns[2]
    assert record.tool_call_done_ns - (record.sent_ns or 0) >= 2 * GAP_S * 1e9  # its done event came 60 ms in
    assert text == [""] and sum(record.chunk_tokens or []) == 12


async def test_two_calls_count_two_and_the_first_closes_at_its_done_event() -> None:
    record, _ = await send("responses", stream(
        body(r_created(), r_item("added", "function_call", name="a", call_id="1", arguments=""), r_args("{}"),
             r_args_done("{}")),
        body(r_item("added", "function_call", name="b", call_id="2", arguments="{}"), r_args_done("{}"),
             r_end(usage=r_usage(30, 6))),
        gaps_s=GAP_S))
    assert record.tool_calls == 2 and record.tool_call_done_ns == record.chunk_ns[1]


async def test_an_incomplete_response_is_a_finish_by_length() -> None:
    for kind, status in (("response.completed", "incomplete"), ("response.incomplete", "incomplete")):
        record, _ = await send("responses", stream(body(
            r_created(), r_text("cut"), r_end(kind, status, usage=r_usage(5, 8),
                                              incomplete_details={"reason": "max_output_tokens"}))))
        assert record.status == "ok" and record.finish_reason == "length"


async def test_a_failed_response_is_an_error_with_the_servers_message() -> None:
    record, _ = await send("responses", stream(body(
        r_created(), r_text("par"),
        r_end("response.failed", "failed", error={"code": "server_error", "message": "engine died"}))))
    assert record.status == "error" and record.error_kind == "mid_stream_error"
    assert record.error_message == "server_error: engine died"
    assert record.chunk_ns and record.output_tokens == 1  # what streamed before is kept


async def test_an_error_event_is_an_error() -> None:
    record, _ = await send("responses", stream(body(
        r_created(), {"type": "error", "code": "rate_limit_exceeded", "message": "slow down", "param": None})))
    assert record.error_kind == "mid_stream_error" and record.error_message == "rate_limit_exceeded: slow down"


async def test_a_stream_without_a_terminal_event_was_cut_off() -> None:
    record, _ = await send("responses", stream(body(r_created(), r_text("Hello"), r_text(" there"))))
    assert record.status == "error" and record.error_kind == "stream_cut_off"
    assert "response.completed" in (record.error_message or "")


async def test_an_event_of_another_shape_is_invalid_json_not_a_crash() -> None:
    record, _ = await send("responses", stream(body(r_created(), {"type": "response.output_text.delta"})))
    assert record.error_kind == "invalid_json"


async def test_the_body_asks_for_what_the_metrics_need() -> None:
    item = WorkItem(messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
                    max_tokens=64, min_tokens=64)
    _, request = await send("responses", stream(body(r_created(), r_text("x"), r_end(usage=r_usage(5, 1)))),
                            item=item, ignore_eos=True, temperature=0.0)
    assert request.json() == {"model": "m", "input": [{"role": "system", "content": "be brief"},
                                                       {"role": "user", "content": "hi"}],
                              "stream": True, "store": False, "max_output_tokens": 64, "min_tokens": 64,
                              "ignore_eos": True, "temperature": 0.0}
    assert request.headers["accept"] == "text/event-stream"


async def test_the_reference_servers_per_chunk_stamps_are_read_on_any_api() -> None:
    def stamped(event: dict[str, object], t: float, n: int) -> dict[str, object]:
        return {**event, "goodput": {"t": t, "n": n}}

    record, _ = await send("responses", stream(body(
        r_created(), stamped(r_reasoning("ab"), 0.010, 2), stamped(r_text("c"), 0.012, 1),
        stamped(r_text("de"), 0.015, 3),
        {**r_end(usage=r_usage(5, 6)), "goodput": {"queue_s": 0.001, "prefill_s": 0.004}})))
    assert record.token_source == "server" and record.chunk_tokens == [2, 1, 3]
    assert record.server_chunk_s == [0.010, 0.012, 0.015]
    assert record.server == {"queue_s": 0.001, "prefill_s": 0.004}
    assert (record.reasoning_tokens, record.reasoning_tokens_source) == (2, "server")
