"""Chat Completions with a reasoning model and tool calls: `reasoning_content` / `reasoning` deltas stay
content chunks (TTFT keeps its meaning) but are marked reasoning; `delta.tool_calls` are tool calls; the
server's `completion_tokens_details.reasoning_tokens` is taken when given."""

from __future__ import annotations

from typing import Any

from loadgen.http.send.client import StreamingClient
from loadgen.types import ClientConfig, WorkItem
from tests.loadgen._api_streams import TIMEOUTS, send
from tests.servers.scripted import DONE, END, ScriptedServer, Send, chat_chunk, chunk, event, head, usage

GAP_S = 0.03


def sse(*objs: dict[str, Any]) -> bytes:
    return chunk(b"".join(event(o) for o in objs))


def call(index: int, *, name: str | None = None, arguments: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if name is not None:
        out.update(id=f"call_{index}", type="function")
        out["function"]["name"] = name
    return out


async def test_reasoning_deltas_are_chunks_marked_reasoning() -> None:
    with_details = {**usage(5, 6), "completion_tokens_details": {"reasoning_tokens": 3}}
    text: list[str] = []
    record, _ = await send("chat", [
        Send(head()),
        Send(sse(chat_chunk(role="assistant", content=""), chat_chunk(reasoning_content="Let"),
                 chat_chunk(reasoning="me see"))),
        Send(sse(chat_chunk("Hi"), chat_chunk(" you", finish_reason="stop"), {"choices": [], "usage": with_details})
             + chunk(DONE) + END, at_s=GAP_S)], text_out=text, include_usage=False, continuous_usage_stats=False)
    assert record.status == "ok" and len(record.chunk_ns) == 4
    assert record.first_byte_ns is not None and record.chunk_ns[0] == record.reasoning_ns  # TTFT: any output
    assert record.answer_ns == record.chunk_ns[2] and record.answer_ns - (record.sent_ns or 0) >= GAP_S * 1e9
    assert (record.reasoning_tokens, record.reasoning_tokens_source) == (3, "usage")
    assert text == ["Hi you"]


async def test_without_details_the_reasoning_chunks_tokens_are_summed() -> None:
    # Running usage: the two reasoning chunks carried 2 and 3 tokens, the answer 1.
    record, _ = await send("chat", [Send(head()), Send(sse(
        chat_chunk(reasoning_content="ab", usage=usage(5, 2)), chat_chunk(reasoning_content="cde", usage=usage(5, 5)),
        chat_chunk("f", finish_reason="stop", usage=usage(5, 6))) + chunk(DONE) + END)])
    assert record.token_source == "usage_delta" and record.chunk_tokens == [2, 3, 1]
    assert (record.reasoning_tokens, record.reasoning_tokens_source) == (5, "usage_delta")


async def test_a_servers_zero_beside_streamed_reasoning_is_not_taken() -> None:
    zero = {**usage(5, 3), "completion_tokens_details": {"reasoning_tokens": 0}}
    record, _ = await send("chat", [Send(head()), Send(sse(
        chat_chunk(reasoning_content="ab", usage=usage(5, 2)), chat_chunk("c", finish_reason="stop", usage=zero))
        + chunk(DONE) + END)])
    assert (record.reasoning_tokens, record.reasoning_tokens_source) == (2, "usage_delta")


async def test_tool_call_deltas_count_calls_and_close_the_first_at_the_next() -> None:
    record, _ = await send("chat", [
        Send(head()),
        Send(sse(chat_chunk(role="assistant", content=None, tool_calls=[call(0, name="a")]),
                 chat_chunk(None, tool_calls=[call(0, arguments='{"x": 1}')]))),
        Send(sse(chat_chunk(None, tool_calls=[call(1, name="b", arguments="{}")]),
                 chat_chunk(None, finish_reason="tool_calls")) + chunk(DONE) + END, at_s=GAP_S)])
    assert record.status == "ok" and record.finish_reason == "tool_calls"
    assert record.tool_calls == 2 and len(record.chunk_ns) == 3
    assert record.tool_call_ns == record.answer_ns == record.chunk_ns[0]
    assert record.tool_call_done_ns == record.chunk_ns[2]  # the second call began: the first was complete
    assert record.reasoning_ns is None


async def test_a_single_tool_call_closes_at_the_finish() -> None:
    record, _ = await send("chat", [
        Send(head()),
        Send(sse(chat_chunk(None, tool_calls=[call(0, name="a", arguments="{}")]))),
        Send(sse(chat_chunk(None, finish_reason="tool_calls")) + chunk(DONE) + END, at_s=GAP_S)])
    assert record.tool_calls == 1 and record.tool_call_done_ns is not None
    assert record.tool_call_done_ns - (record.sent_ns or 0) >= GAP_S * 1e9


async def test_plain_answers_have_no_reasoning_or_tool_fields() -> None:
    record, _ = await send("chat", [Send(head()), Send(sse(chat_chunk("a"), chat_chunk("b", finish_reason="stop"))
                                                       + chunk(DONE) + END)], item=WorkItem(prompt="x"))
    assert record.answer_ns == record.chunk_ns[0] and record.reasoning_ns is None
    assert record.reasoning_tokens is None and record.tool_calls == 0 and record.tool_call_done_ns is None


async def test_arguments_sent_as_an_object_are_kept_as_json_text() -> None:
    calls: list[dict[str, Any]] = []
    whole = {"index": 0, "id": "c1", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}}
    actions = [Send(head()), Send(sse(chat_chunk(None, tool_calls=[whole]), chat_chunk(None, finish_reason="tool_calls"))
                                  + chunk(DONE) + END)]
    async with (ScriptedServer(lambda _r: actions) as server,
                StreamingClient(ClientConfig(base_url=server.url, model="m", timeouts=TIMEOUTS)) as client):
        record = await client.send(WorkItem(prompt="x"), request_id=1, intended_ns=0, anchor_ns=0, text_out=[],
                                   calls_out=calls)
    assert record.status == "ok" and record.tool_calls == 1
    assert calls == [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"x":1}'}}]


def vllm_usage(completion: int, reasoning: int) -> dict[str, Any]:
    """vLLM's running usage with `--reasoning-parser deepseek_r1`: its reasoning count takes only tokens
    after a `<think>` the model generated, so a model whose thinking the prompt opened gets 0 or a part."""
    return {**usage(53, completion), "completion_tokens_details": {"reasoning_tokens": reasoning}}


async def test_a_servers_count_below_the_reasoning_chunks_streamed_is_not_taken() -> None:
    # As vLLM 0.32 streams it (running usage with its reasoning count): four reasoning chunks, then the
    # answer (the `</think>` token before it sent no delta); the usage says 1 reasoning token although
    # four reasoning chunks, each at least one token, came first.
    record, _ = await send("chat", [Send(head()), Send(sse(
        chat_chunk(role="assistant", content="", usage=vllm_usage(0, 0)),
        chat_chunk(reasoning_content="a", usage=vllm_usage(1, 0)),
        chat_chunk(reasoning="b", usage=vllm_usage(2, 0)), chat_chunk(reasoning="c", usage=vllm_usage(3, 0)),
        chat_chunk(reasoning="d", usage=vllm_usage(4, 1)), chat_chunk("e", finish_reason="length", usage=vllm_usage(6, 1)),
        {"choices": [], "usage": vllm_usage(6, 1)}) + chunk(DONE) + END)])
    assert record.status == "ok" and len(record.chunk_ns) == 5 and record.answer_ns == record.chunk_ns[4]
    assert (record.reasoning_tokens, record.reasoning_tokens_source) == (4, "usage_delta")
    assert record.output_tokens == 6


async def test_a_request_that_never_answered_keeps_the_streams_count_over_a_smaller_servers() -> None:
    # vLLM 0.32, a stream that never left reasoning (finish length): empty reasoning deltas (a generated
    # `<think>`, a byte that completes no character) put 5 tokens in 3 reasoning chunks; vLLM counted only
    # the 3 tokens after the `<think>`. The stream shows all 5 went to reasoning, none to an answer.
    record, _ = await send("chat", [Send(head()), Send(sse(
        chat_chunk(role="assistant", content="", usage=vllm_usage(0, 0)),
        chat_chunk(reasoning="a", usage=vllm_usage(1, 0)), chat_chunk(reasoning="", usage=vllm_usage(2, 0)),
        chat_chunk(reasoning="b", usage=vllm_usage(3, 1)), chat_chunk(reasoning="", usage=vllm_usage(4, 2)),
        chat_chunk(reasoning="c", finish_reason="length", usage=vllm_usage(5, 3)),
        {"choices": [], "usage": vllm_usage(5, 3)}) + chunk(DONE) + END)])
    assert record.status == "ok" and record.answer_ns is None and record.chunk_tokens == [1, 2, 2]
    assert (record.reasoning_tokens, record.reasoning_tokens_source) == (5, "usage_delta")
    assert record.output_tokens == 5


async def test_the_servers_running_count_wins_over_a_final_detail_that_disagrees() -> None:
    # vLLM 0.32 with deepseek_r1, a request that answered: running usage shows 5 tokens in the reasoning
    # deltas (the `</think>` token's count rides on the first answer delta), the final detail says 7 (it was
    # seen both above and below the stream's own count): the server's per-delta count wins.
    record, _ = await send("chat", [Send(head()), Send(sse(
        chat_chunk(role="assistant", content="", usage=vllm_usage(0, 0)),
        chat_chunk(reasoning="a", usage=vllm_usage(2, 0)), chat_chunk(reasoning="b", usage=vllm_usage(4, 0)),
        chat_chunk(reasoning="c", usage=vllm_usage(5, 0)), chat_chunk("x", usage=vllm_usage(7, 0)),
        chat_chunk("y", finish_reason="length", usage=vllm_usage(8, 7)),
        {"choices": [], "usage": vllm_usage(8, 7)}) + chunk(DONE) + END)])
    assert record.status == "ok" and record.chunk_tokens == [2, 2, 1, 2, 1]
    assert (record.reasoning_tokens, record.reasoning_tokens_source) == (5, "usage_delta")
    assert record.output_tokens == 8
