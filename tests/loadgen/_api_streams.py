"""Streams of the Responses and Messages APIs written from their public event shapes, and one request
through the real client against a scripted loopback server that sends them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from loadgen.http.send.client import StreamingClient
from loadgen.types import ClientConfig, Timeouts, WorkItem
from metrics.records.record import RequestRecord
from tests.servers.scripted import END, Action, ReceivedRequest, ScriptedServer, Send, chunk, head

TIMEOUTS = Timeouts(connect_s=5, first_byte_s=10, between_chunks_s=10, total_s=30)


def named(obj: dict[str, Any]) -> bytes:
    """One SSE event as these APIs send it: `event: TYPE` and the object (which repeats its type)."""
    return b"event: " + str(obj["type"]).encode() + b"\ndata: " + orjson.dumps(obj) + b"\n\n"


def body(*events: dict[str, Any]) -> bytes:
    return chunk(b"".join(named(e) for e in events))


def stream(*parts: bytes, gaps_s: float = 0.0, end: bool = True) -> list[Action]:
    """The head, then each part (a `body(...)`) `gaps_s` after the previous one, then the terminator."""
    actions: list[Action] = [Send(head())]
    actions += [Send(p, at_s=i * gaps_s) for i, p in enumerate(parts)]
    if end:
        actions.append(Send(END, at_s=len(parts) * gaps_s))
    return actions


async def send(endpoint: str, actions: Sequence[Action], *, item: WorkItem | None = None,
               text_out: list[str] | None = None, **config: Any) -> tuple[RequestRecord, ReceivedRequest]:
    async with ScriptedServer(lambda _request: list(actions)) as server:
        cfg = ClientConfig(base_url=server.url, model="m", endpoint=endpoint,  # type: ignore[arg-type]
                           timeouts=TIMEOUTS, **config)
        async with StreamingClient(cfg) as client:
            record = await client.send(item or WorkItem(prompt="hi", max_tokens=8), request_id=1, intended_ns=0,
                                       anchor_ns=0, text_out=text_out)
        return record, server.requests[0]


# --- the Responses API -------------------------------------------------------------------------------

def r_created() -> dict[str, Any]:
    return {"type": "response.created", "sequence_number": 0,
            "response": {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}}


def r_in_progress() -> dict[str, Any]:
    return {"type": "response.in_progress", "sequence_number": 1,
            "response": {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}}


def r_item(kind: str, item_type: str, **item: Any) -> dict[str, Any]:
    return {"type": f"response.output_item.{kind}", "output_index": 0, "item": {"type": item_type, "id": "it", **item}}


def r_text(delta: str) -> dict[str, Any]:
    return {"type": "response.output_text.delta", "item_id": "msg", "output_index": 0, "content_index": 0,
            "delta": delta}


def r_reasoning(delta: str, *, summary: bool = False) -> dict[str, Any]:
    kind = "response.reasoning_summary_text.delta" if summary else "response.reasoning_text.delta"
    return {"type": kind, "item_id": "rs", "output_index": 0, "content_index": 0, "delta": delta}


def r_args(delta: str) -> dict[str, Any]:
    return {"type": "response.function_call_arguments.delta", "item_id": "fc", "output_index": 1, "delta": delta}


def r_args_done(arguments: str) -> dict[str, Any]:
    return {"type": "response.function_call_arguments.done", "item_id": "fc", "output_index": 1,
            "arguments": arguments}


def r_usage(prompt: int, output: int, *, cached: int | None = None, reasoning: int | None = None) -> dict[str, Any]:
    u: dict[str, Any] = {"input_tokens": prompt, "output_tokens": output, "total_tokens": prompt + output}
    if cached is not None:
        u["input_tokens_details"] = {"cached_tokens": cached}
    if reasoning is not None:
        u["output_tokens_details"] = {"reasoning_tokens": reasoning}
    return u


def r_end(kind: str = "response.completed", status: str = "completed", usage: dict[str, Any] | None = None,
          **response: Any) -> dict[str, Any]:
    out = {"id": "resp_1", "object": "response", "status": status, "output": [], **response}
    if usage is not None:
        out["usage"] = usage
    return {"type": kind, "sequence_number": 99, "response": out}


# --- the Messages API --------------------------------------------------------------------------------

def m_start(input_tokens: int, *, cache_read: int | None = None, cache_creation: int | None = None) -> dict[str, Any]:
    usage: dict[str, Any] = {"input_tokens": input_tokens, "output_tokens": 1}
    if cache_read is not None:
        usage["cache_read_input_tokens"] = cache_read
    if cache_creation is not None:
        usage["cache_creation_input_tokens"] = cache_creation
    return {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                                 "content": [], "model": "m", "stop_reason": None,
                                                 "stop_sequence": None, "usage": usage}}


def m_block_start(index: int, block_type: str, **block: Any) -> dict[str, Any]:
    defaults: Any = {"text": {"text": ""}, "thinking": {"thinking": ""},
                                "tool_use": {"id": "toolu_1", "name": "f", "input": {}}}[block_type]
    return {"type": "content_block_start", "index": index,
            "content_block": {"type": block_type, **defaults, **block}}


def m_delta(index: int, delta_type: str, value: str) -> dict[str, Any]:
    field = {"text_delta": "text", "thinking_delta": "thinking", "signature_delta": "signature",
             "input_json_delta": "partial_json"}[delta_type]
    return {"type": "content_block_delta", "index": index, "delta": {"type": delta_type, field: value}}


def m_block_stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def m_message_delta(stop_reason: str | None, output_tokens: int) -> dict[str, Any]:
    return {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens}}


M_STOP = {"type": "message_stop"}
M_PING = {"type": "ping"}
