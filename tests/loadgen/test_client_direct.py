"""The client's direct path (FastTransport without httpx's Request/Response objects, the body parsed as each
read arrives) sends the same bytes and makes the same record as the same transport driven through httpx."""

from __future__ import annotations

import asyncio
import dataclasses
import gzip
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from loadgen.http.send.client import StreamingClient
from loadgen.http.transport import FastTransport
from loadgen.types import ClientConfig, Timeouts, WorkItem
from metrics.records.record import RequestRecord
from tests.servers.scripted import (
    DONE,
    END,
    Action,
    Close,
    Reset,
    ScriptedServer,
    Send,
    chat_chunk,
    chunk,
    event,
    head,
    usage,
)

TIMES = ("sent_ns", "first_byte_ns", "closed_ns", "chunk_ns", "answer_ns", "reasoning_ns", "tool_call_ns",
         "tool_call_done_ns")  # differ from run to run


class ThroughHttpx(httpx.AsyncBaseTransport):
    """The same FastTransport, reached the way any httpx transport is: through httpx.AsyncClient.send."""

    def __init__(self) -> None:
        self.inner = FastTransport(limits=httpx.Limits(max_connections=4, max_keepalive_connections=4))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def stream(*events: bytes, cut: int | None = None) -> bytes:
    body = b"".join(chunk(e) for e in events) + END
    return head() + (body[:cut] if cut is not None else body)


GOOD = [event(chat_chunk("a", usage=usage(5, 1))), event(chat_chunk("bc", usage=usage(5, 3))),
        event(chat_chunk(None, finish_reason="stop", usage=usage(5, 3))), DONE]
SCENARIOS: dict[str, list[Action]] = {
    "ok": [Send(stream(*GOOD))],
    "ok, one read per event": [Send(head()), *(Send(chunk(e), at_s=0.01 * (i + 1)) for i, e in enumerate(GOOD)),
                               Send(END, at_s=0.06)],
    "finish without [DONE], then close": [Send(head() + chunk(GOOD[0]) + chunk(GOOD[2]) + END)],
    "no finish, clean end": [Send(head() + chunk(GOOD[0]) + END)],
    "error status with a body": [Send(head(429, "application/json", chunked=False, length=28)
                                      + b'{"error":{"message":"slow"}}')],
    "not SSE": [Send(head(200, "application/json", chunked=False, length=2) + b"{}")],
    "bad JSON after a good event": [Send(stream(GOOD[0], b"data: {nope\n\n"))],
    "malformed SSE in the same read": [Send(stream(GOOD[0] + b"garbage line\n\n"))],
    "bad chunk framing after good chunks": [Send(head() + chunk(GOOD[0]) + b"zz\r\n"), Close(at_s=0.05)],
    "cut mid-chunk": [Send(stream(*GOOD, cut=40)), Close(at_s=0.02)],
    "reset mid-stream": [Send(head() + chunk(GOOD[0])), Reset(at_s=0.02)],
    "mid-stream error": [Send(stream(GOOD[0], event({"error": {"message": "engine died"}})))],
    "gzip": [Send(head(extra="Content-Encoding: gzip") + chunk(gzip.compress(b"".join(GOOD))) + END)],
    "empty [DONE]": [Send(stream(DONE))],
}


async def _one(transport: httpx.AsyncBaseTransport | None, actions: list[Action], **client: Any) -> RequestRecord:
    timeouts = Timeouts(connect_s=5, first_byte_s=5, between_chunks_s=5, total_s=10)
    async with ScriptedServer(lambda _request: list(actions)) as server:
        config = ClientConfig(base_url=server.url, model="m", timeouts=timeouts)
        async with StreamingClient(config, transport=transport, **client) as c:
            return await c.send(WorkItem(prompt="x", max_tokens=4), request_id=7, intended_ns=0, anchor_ns=0)


def _untimed(record: RequestRecord) -> dict[str, Any]:
    fields = dataclasses.asdict(record)
    return {k: (len(v) if k == "chunk_ns" else v is None) if k in TIMES else v for k, v in fields.items()}


@pytest.mark.parametrize("name", list(SCENARIOS))
async def test_the_direct_path_makes_the_record_httpx_makes(name: str) -> None:
    direct = await _one(None, SCENARIOS[name])
    via_httpx = await _one(ThroughHttpx(), SCENARIOS[name])
    assert _untimed(direct) == _untimed(via_httpx)


@pytest.mark.parametrize("limits", [{"max_event_bytes": 20}, {"max_response_bytes": 100}])
async def test_size_limits_are_the_same_on_both_paths(limits: dict[str, int]) -> None:
    actions = SCENARIOS["ok"]
    direct, via_httpx = await _one(None, actions, **limits), await _one(ThroughHttpx(), actions, **limits)
    assert direct.error_kind in ("chunk_too_large", "response_too_large")
    assert _untimed(direct) == _untimed(via_httpx)


async def test_the_request_bytes_are_the_same_on_both_paths() -> None:
    """Byte for byte: request line, every header in httpx's order, Content-Length, body."""
    seen: list[bytes] = []
    answer = stream(*GOOD)

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head_bytes = await reader.readuntil(b"\r\n\r\n")
        length = int(head_bytes.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        seen.append(head_bytes + await reader.readexactly(length))
        writer.write(answer)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        port = server.sockets[0].getsockname()[1]
        config = ClientConfig(base_url=f"http://127.0.0.1:{port}/v1", model="m", api_key="k",
                              extra_headers={"X-Tenant": "t1"})
        for transport in (None, ThroughHttpx()):
            async with StreamingClient(config, transport=transport) as client:
                r = await client.send(WorkItem(prompt="héllo", max_tokens=3), request_id=1, intended_ns=0,
                                      anchor_ns=0)
                assert r.status == "ok"
    finally:
        server.close()
        await server.wait_closed()
    assert len(seen) == 2 and seen[0] == seen[1]
    assert seen[0].startswith(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:")


async def test_reads_delivered_in_one_loop_round_keep_their_own_times() -> None:
    """Two reads that arrive before the client gets to parse either are stamped when each arrived, not
    both with the later time."""
    from loadgen.http.connection import Connection

    loop = asyncio.get_running_loop()
    conn = Connection(loop)
    got: list[tuple[bytes, int]] = []

    class Listener:
        def data(self, data: bytes, received_ns: int) -> None:
            got.append((data, received_ns))

        def ended(self) -> None:
            got.append((b"<end>", 0))

    conn.listen(Listener())
    conn.data_received(b"one")
    await asyncio.sleep(0)  # nothing delivered yet: the delivery runs after this round of socket events
    busy_until = time.perf_counter_ns() + 3_000_000  # the loop busy elsewhere while the second read arrives
    while time.perf_counter_ns() < busy_until:
        pass
    conn.data_received(b"two")
    conn.eof_received()
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert [d for d, _ in got] == [b"one", b"two", b"<end>"]
    assert got[1][1] - got[0][1] >= 3_000_000


def _stops_after_first(got: list[bytes]) -> Callable[[bytes, int], bool]:
    def on_body(body: bytes, received_ns: int) -> bool:
        got.append(body)
        return True

    return on_body


async def test_what_follows_done_stays_readable_in_order() -> None:
    """`consume` stops at the callback's word; later pieces are read back in order (the drain after [DONE])."""
    async with ScriptedServer(lambda _r: [Send(head() + chunk(b"data: [DONE]\n\n")),
                                          Send(chunk(b": after\n\n"), at_s=0.02), Send(END, at_s=0.04)]) as server:
        transport = FastTransport(limits=httpx.Limits(max_connections=1, max_keepalive_connections=1))
        host_port = server.url.removeprefix("http://").split(":")
        origin = ("http", host_port[0], int(host_port[1]))
        response = await transport.open(origin, b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n", b"{}",
                                        connect_s=5)
        got: list[bytes] = []
        assert await response.consume(_stops_after_first(got)) is True
        assert got == [b"data: [DONE]\n\n"]
        assert await response.read() == b": after\n\n"
        assert await response.read() == b""
        assert response.decoder.done
        await response.aclose()
        await transport.aclose()


@pytest.mark.parametrize("terminator_after_s", [None, 0.05])
async def test_after_done_the_connection_is_kept_and_only_a_late_terminator_is_waited_for(
    monkeypatch: pytest.MonkeyPatch, terminator_after_s: float | None,
) -> None:
    """[DONE] ends the record; the chunked terminator is then read so the connection can be reused. When it
    came in the same read as [DONE] (None) there is nothing to wait for; when it comes later it is waited for."""
    import loadgen.http.send.client as client_module

    drains: list[int] = []
    real_drain = client_module._drain

    async def counted_drain(next_read: Callable[[], Any]) -> None:
        drains.append(1)
        await real_drain(next_read)

    monkeypatch.setattr(client_module, "_drain", counted_drain)
    last = chunk(event(chat_chunk("b", finish_reason="stop", usage=usage(3, 2))) + DONE)

    def answer(_request: Any) -> list[Action]:
        if terminator_after_s is None:
            return [Send(head() + chunk(event(chat_chunk("a"))) + last + END)]
        return [Send(head() + chunk(event(chat_chunk("a"))) + last), Send(END, at_s=terminator_after_s)]

    async with ScriptedServer(answer) as server:
        async with StreamingClient(ClientConfig(base_url=server.url, model="m")) as client:
            records = [await client.send(WorkItem(prompt="x"), request_id=i, intended_ns=0, anchor_ns=0)
                       for i in range(3)]
        assert server.connections == 1
    assert [r.status for r in records] == ["ok"] * 3
    assert all(len(r.chunk_ns) == 2 for r in records)
    assert len(drains) == (0 if terminator_after_s is None else 3)
    if terminator_after_s is not None:  # the record closed at [DONE], not at the terminator
        assert all(r.closed_ns is not None and r.closed_ns - r.chunk_ns[-1] < terminator_after_s * 1e9
                   for r in records)
