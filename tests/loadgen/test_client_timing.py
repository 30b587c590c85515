"""The client's timestamps against the scripted server's real write times (the truth)."""

from __future__ import annotations

import asyncio
import time

import numpy as np

from loadgen.http.send.client import StreamingClient
from loadgen.types import ClientConfig, WorkItem
from metrics.records.record import RequestRecord
from tests.servers.scripted import (
    DONE,
    END,
    Action,
    ReceivedRequest,
    ScriptedServer,
    Send,
    chat_chunk,
    chunk,
    event,
    head,
    usage,
)

STREAMS = 8
CHUNKS = 12
TOLERANCE_NS = 2_000_000  # the brief's bound: 2 ms
STAGGER_S = 0.004


def paced(request: ReceivedRequest) -> list[Action]:
    """Headers at once, first token after a per-stream TTFT, then uneven gaps (5-17 ms)."""
    stream = int(request.json()["messages"][0]["content"])
    ttft = 0.030 + 0.004 * stream
    at = [ttft + sum(0.005 + 0.003 * ((j * 7 + stream) % 5) for j in range(i)) for i in range(CHUNKS)]
    actions: list[Action] = [Send(head())]
    actions += [
        Send(chunk(event(chat_chunk(f"t{i}", usage=usage(5, i + 1)))), at_s=t) for i, t in enumerate(at)
    ]
    actions.append(
        Send(
            chunk(event(chat_chunk("", finish_reason="stop", usage=usage(5, CHUNKS))) + DONE) + END,
            at_s=at[-1] + 0.005,
        )
    )
    return actions


async def _round(server: ScriptedServer, client: StreamingClient) -> tuple[list[int], list[int]]:
    """8 concurrent streams; returns the TTFT and ITL errors (client − server truth, ns)."""
    server.requests.clear()

    async def stream(s: int) -> RequestRecord:
        # Sends STAGGER_S apart: the streams overlap (each lasts 60-150 ms), but no request waits in the
        # shared event loop behind the other seven's sends, a queue the server's arrival stamp would count
        # as transit although no client stamp is wrong.
        await asyncio.sleep(s * STAGGER_S)
        return await client.send(
            WorkItem(messages=[{"role": "user", "content": str(s)}], max_tokens=CHUNKS),
            request_id=s,
            intended_ns=0,
            anchor_ns=0,
        )  # anchor 0: raw perf_counter_ns, as the server's

    records = await asyncio.gather(*(stream(s) for s in range(STREAMS)))
    assert max(r.sent_ns or 0 for r in records) < min(r.closed_ns or 0 for r in records)  # all 8 overlap
    by_stream = {int(r.json()["messages"][0]["content"]): r for r in server.requests}
    ttft_err: list[int] = []
    itl_err: list[int] = []
    for s, record in enumerate(records):
        assert record.status == "ok", record.error_message
        truth = by_stream[s].writes_ns  # [head, chunk_1..chunk_K, finish+DONE]
        assert record.sent_ns is not None and record.first_byte_ns is not None
        assert len(record.chunk_ns) == CHUNKS
        assert record.sent_ns <= by_stream[s].received_ns  # stamped before the request left
        # The client's TTFT includes the request's transit to the server, the truth starts at arrival.
        ttft_err.append((record.chunk_ns[0] - record.sent_ns) - (truth[1] - by_stream[s].received_ns))
        itl_err.extend((np.diff(record.chunk_ns) - np.diff(truth[1 : CHUNKS + 1])).tolist())
        ttft_err.append(record.first_byte_ns - truth[0])  # headers: delivery delay only
    return ttft_err, itl_err


async def test_ttft_and_itl_match_the_server_within_2ms_at_8_concurrent_streams() -> None:
    """Server and client share this process and a busy 2-core machine: one descheduling between a
    write and its read shifts a sample by milliseconds without any fault in the client. So the bound
    must hold for every sample of one whole round out of three; a systematic error fails all three."""
    worst: list[tuple[int, int]] = []
    async with (
        ScriptedServer(paced) as server,
        StreamingClient(ClientConfig(base_url=server.url, model="m")) as client,
    ):
        await _round(server, client)  # warm-up: connections open, first-call costs paid
        for _ in range(3):
            ttft_err, itl_err = await _round(server, client)
            worst.append((max(map(abs, ttft_err)), max(map(abs, itl_err))))
            if max(worst[-1]) < TOLERANCE_NS:
                break
    assert min(max(w) for w in worst) < TOLERANCE_NS, f"worst (ttft, itl) error per round, ns: {worst}"


async def test_time_fields_are_relative_to_the_anchor_and_ordered() -> None:
    async with (
        ScriptedServer(paced) as server,
        StreamingClient(ClientConfig(base_url=server.url, model="m")) as client,
    ):
        anchor = time.perf_counter_ns()
        record = await client.send(
            WorkItem(prompt="0", max_tokens=3), request_id=7, intended_ns=5, anchor_ns=anchor
        )
    assert record.status == "ok"
    assert record.id == 7 and record.intended_ns == 5
    assert record.sent_ns is not None and record.first_byte_ns is not None and record.closed_ns is not None
    assert 0 <= record.sent_ns <= record.first_byte_ns <= record.chunk_ns[0]
    assert record.chunk_ns == sorted(record.chunk_ns)
    assert record.chunk_ns[-1] <= record.closed_ns
    assert record.closed_ns < 10_000_000_000  # relative, not a raw clock reading


async def test_connections_are_reused_after_done() -> None:
    async with ScriptedServer(paced) as server:
        async with StreamingClient(ClientConfig(base_url=server.url, model="m")) as client:
            for i in range(3):
                record = await client.send(WorkItem(prompt="1"), request_id=i, intended_ns=0, anchor_ns=0)
                assert record.status == "ok"
        assert server.connections == 1


async def test_waiting_for_a_connection_slot_is_dispatch_lag_not_ttft() -> None:
    config = ClientConfig(base_url="", model="m", max_connections=1)
    async with ScriptedServer(paced) as server:
        config.base_url = server.url
        async with StreamingClient(config) as client:
            first, second = await asyncio.gather(
                *(
                    client.send(WorkItem(prompt="0"), request_id=i, intended_ns=0, anchor_ns=0)
                    for i in range(2)
                )
            )
    assert first.status == second.status == "ok"
    assert first.closed_ns is not None and second.sent_ns is not None and first.sent_ns is not None
    # The second request waited for the only connection: its send time is after the first finished,
    # so its TTFT is the server's, not the server's plus the queueing (the first request's whole
    # ~150 ms stream). Half of that wait is the bar: a busy machine may add a few ms to one TTFT.
    assert second.sent_ns >= first.closed_ns
    waited = first.closed_ns - first.sent_ns
    assert second.chunk_ns[0] - second.sent_ns < (first.chunk_ns[0] - first.sent_ns) + waited // 2
