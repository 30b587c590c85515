"""Anthropic's Messages API end to end through the client: streams written from the public event shapes
(message_start ... message_stop), thinking then text, tool_use with input_json deltas, the usage split
over message_start and message_delta, ping and error events, and a stream without message_stop failing
even after its stop_reason."""

from __future__ import annotations

from loadgen.types import WorkItem
from tests.loadgen._api_streams import (
    M_PING,
    M_STOP,
    body,
    m_block_start,
    m_block_stop,
    m_delta,
    m_message_delta,
    m_start,
    send,
    stream,
)

GAP_S = 0.03


async def test_thinking_then_text_with_cache_reads() -> None:
    text: list[str] = []
    record, request = await send("messages", stream(
        body(m_start(4, cache_read=16, cache_creation=2), m_block_start(0, "thinking"),
             m_delta(0, "thinking_delta", "Let me"), M_PING, m_delta(0, "thinking_delta", " see"),
             m_delta(0, "signature_delta", "c2lnbmF0dXJl"), m_block_stop(0)),
        body(m_block_start(1, "text"), m_delta(1, "text_delta", "Hi"), m_delta(1, "text_delta", " there"),
             m_block_stop(1), m_message_delta("end_turn", 7), M_STOP),
        gaps_s=GAP_S), text_out=text)
    assert request.path == "/v1/messages"
    assert record.status == "ok", record.error_message
    assert len(record.chunk_ns) == 4 and record.finish_reason == "stop"
    assert record.reasoning_ns == record.chunk_ns[0] and record.answer_ns == record.chunk_ns[2]
    assert record.answer_ns - (record.sent_ns or 0) >= GAP_S * 1e9
    # prompt = input + cache reads + cache creation; cached = the cache reads; output from message_delta.
    assert (record.prompt_tokens, record.cached_tokens, record.output_tokens) == (22, 16, 7)
    assert record.output_tokens_estimated is False and sum(record.chunk_tokens or []) == 7
    assert record.reasoning_tokens_source == "final_split_by_text_length"
    assert record.reasoning_tokens == sum((record.chunk_tokens or [])[:2])
    assert text == ["Hi there"]


async def test_the_reasoning_share_is_split_by_text_length() -> None:
    # 8 tokens over "ab", "cd" (thinking) and "efgh" (text): 2 + 2 reasoning tokens.
    record, _ = await send("messages", stream(body(
        m_start(3), m_block_start(0, "thinking"), m_delta(0, "thinking_delta", "ab"),
        m_delta(0, "thinking_delta", "cd"), m_block_stop(0), m_block_start(1, "text"),
        m_delta(1, "text_delta", "efgh"), m_block_stop(1), m_message_delta("end_turn", 8), M_STOP)))
    assert record.chunk_tokens == [2, 2, 4] and record.reasoning_tokens == 4
    assert record.prompt_tokens == 3 and record.cached_tokens is None  # no cache field: unknown, not 0


async def test_a_tool_use_block_with_input_json_deltas() -> None:
    text: list[str] = []
    record, _ = await send("messages", stream(
        body(m_start(30), m_block_start(0, "text"), m_delta(0, "text_delta", "Checking."), m_block_stop(0),
             m_block_start(1, "tool_use", name="get_weather"), m_delta(1, "input_json_delta", ""),
             m_delta(1, "input_json_delta", '{"city":')),
        body(m_delta(1, "input_json_delta", ' "Paris"}')),
        body(m_block_stop(1), m_message_delta("tool_use", 15), M_STOP),
        gaps_s=GAP_S), text_out=text)
    assert record.status == "ok" and record.finish_reason == "tool_calls"
    assert record.tool_calls == 1 and len(record.chunk_ns) == 4  # text, the call's start, two non-empty deltas
    assert record.answer_ns == record.chunk_ns[0] and record.tool_call_ns == record.chunk_ns[1]
    assert record.tool_call_done_ns is not None and record.tool_call_done_ns > record.chunk_ns[3]
    assert record.tool_call_done_ns - (record.sent_ns or 0) >= 2 * GAP_S * 1e9
    assert text == ["Checking."]


async def test_max_tokens_is_a_finish_by_length() -> None:
    record, _ = await send("messages", stream(body(
        m_start(3), m_block_start(0, "text"), m_delta(0, "text_delta", "cut"), m_message_delta("max_tokens", 8),
        M_STOP)))
    assert record.status == "ok" and record.finish_reason == "length"


async def test_an_error_event_is_an_error() -> None:
    record, _ = await send("messages", stream(body(
        m_start(3), m_block_start(0, "text"), m_delta(0, "text_delta", "par"),
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})))
    assert record.status == "error" and record.error_kind == "mid_stream_error"
    assert record.error_message == "overloaded_error: Overloaded" and len(record.chunk_ns) == 1


async def test_a_stream_without_message_stop_was_cut_off_even_after_its_stop_reason() -> None:
    record, _ = await send("messages", stream(body(
        m_start(3), m_block_start(0, "text"), m_delta(0, "text_delta", "Hi"), m_block_stop(0),
        m_message_delta("end_turn", 1))))
    assert record.status == "error" and record.error_kind == "stream_cut_off"
    assert record.error_message == "stream ended before message_stop"


async def test_the_body_and_headers() -> None:
    item = WorkItem(messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"},
                              {"role": "assistant", "content": "hello"}, {"role": "user", "content": "more"}],
                    max_tokens=64, min_tokens=64)
    _, request = await send("messages", stream(body(m_start(3), M_STOP)), item=item, ignore_eos=True,
                            api_key="sk-secret-value")
    assert request.json() == {"model": "m", "messages": [{"role": "user", "content": "hi"},
                                                         {"role": "assistant", "content": "hello"},
                                                         {"role": "user", "content": "more"}],
                              "max_tokens": 64, "stream": True, "system": "be brief", "min_tokens": 64,
                              "ignore_eos": True}
    assert request.headers["anthropic-version"] == "2023-06-01"
    # x-api-key as Anthropic's API wants it; the bearer token too, the only one vLLM's --api-key check reads.
    assert request.headers["x-api-key"] == "sk-secret-value"
    assert request.headers["authorization"] == "Bearer sk-secret-value"


async def test_max_tokens_is_always_sent() -> None:
    _, request = await send("messages", stream(body(m_start(3), M_STOP)), item=WorkItem(prompt="hi"))
    assert request.json()["max_tokens"] == 4096


async def test_the_key_never_reaches_the_record() -> None:
    secret = "sk-ant-very-secret"
    record, _ = await send("messages", stream(body(
        m_start(3), {"type": "error", "error": {"type": "authentication_error", "message": f"bad key {secret}"}})),
        api_key=secret)
    assert record.status == "error" and secret not in repr(record) and secret not in str(record.error_message)
