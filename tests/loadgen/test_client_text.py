"""The client hands back the answer as streamed (a conversation's history): content only, never the
reasoning or tool calls, and nothing on a request that failed before any content."""

from __future__ import annotations

from typing import Any

from loadgen.http.send.client import StreamingClient
from loadgen.types import ClientConfig, WorkItem
from tests.servers.scripted import (
    DONE,
    END,
    ReceivedRequest,
    ScriptedServer,
    Send,
    chat_chunk,
    chunk,
    event,
    head,
)


def answer(_: ReceivedRequest) -> list[Send]:
    objs = [chat_chunk(role="assistant", content=""), chat_chunk(reasoning_content="let me think"),
            chat_chunk("Héllo"), chat_chunk(", "), chat_chunk(None, tool_calls=[{"index": 0}]),
            chat_chunk("wörld"), chat_chunk("", finish_reason="stop")]
    body = b"".join(chunk(event(o)) for o in objs)
    return [Send(head()), Send(body + chunk(DONE) + END)]


async def _send(handler: Any, text: list[str] | None) -> Any:
    async with ScriptedServer(handler) as server:
        config = ClientConfig(base_url=server.url, model="m")
        async with StreamingClient(config) as client:
            return await client.send(WorkItem(prompt="hi", max_tokens=8), request_id=0, intended_ns=0, anchor_ns=0,
                                     text_out=text)


async def test_the_streamed_content_comes_back_without_reasoning_or_tool_calls() -> None:
    text: list[str] = []
    record = await _send(answer, text)
    assert record.status == "ok" and len(record.chunk_ns) == 5  # reasoning and tool calls are still chunks
    assert text == ["Héllo, wörld"]


async def test_without_a_list_nothing_is_joined() -> None:
    assert (await _send(answer, None)).status == "ok"


async def test_a_failed_request_hands_back_what_it_streamed() -> None:
    def refused(_: ReceivedRequest) -> list[Send]:
        return [Send(b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 2\r\n\r\n{}")]

    text: list[str] = []
    assert (await _send(refused, text)).status == "error" and text == [""]
