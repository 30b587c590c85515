"""The HTTP/1.1 layer under the client: framing, head parsing, keep-alive, limits."""

from __future__ import annotations

import asyncio
import random
import shutil
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from loadgen.http.http11 import Chunked, FixedLength, parse_head
from loadgen.http.send.client import StreamingClient
from loadgen.http.transport import FastTransport
from loadgen.types import ClientConfig, WorkItem
from tests.servers.scripted import (
    DONE,
    END,
    Close,
    Hang,
    ReceivedRequest,
    ScriptedServer,
    Send,
    chat_chunk,
    chunk,
    closed_port,
    event,
    head,
)

BODY = [b"data: one\n\n", b"x" * 300, b"", b"data: [DONE]\n\n"]
WIRE = b"".join(chunk(p) for p in BODY if p) + b"5;ext=1\r\nhello\r\n" + b"0\r\nTrailer: t\r\n\r\n"
DECODED = b"".join(BODY) + b"hello"


def decode(*reads: bytes) -> tuple[bytes, Chunked]:
    decoder = Chunked()
    return b"".join(decoder.feed(r) for r in reads), decoder


def test_chunked_decoding_is_the_same_at_every_cut() -> None:
    for cut in range(len(WIRE) + 1):
        body, decoder = decode(WIRE[:cut], WIRE[cut:])
        assert body == DECODED and decoder.done and decoder.reusable, cut


def test_chunked_decoding_random_multi_cuts_and_byte_by_byte() -> None:
    rng = random.Random(7)
    for _ in range(300):
        cuts = sorted(rng.sample(range(len(WIRE) + 1), rng.randint(1, 10)))
        pieces = [WIRE[a:b] for a, b in zip([0, *cuts], [*cuts, len(WIRE)], strict=True)]
        assert decode(*pieces)[0] == DECODED
    assert decode(*(WIRE[i : i + 1] for i in range(len(WIRE))))[0] == DECODED


@pytest.mark.parametrize("bad", [b"zz\r\n", b"+5\r\nhello\r\n", b"0x5\r\nhello\r\n", b"5\r\nhelloXX"])
def test_chunked_rejects_bad_framing(bad: bytes) -> None:
    decoder = Chunked()
    with pytest.raises(httpx.RemoteProtocolError):
        decoder.feed(bad + b"\r\n0\r\n\r\n")
        decoder.feed(b"")  # one that first handed over the good bytes raises on the next call
    assert not decoder.reusable or decoder.error is None


def test_chunked_hands_over_good_chunks_before_bad_framing() -> None:
    decoder = Chunked()
    assert decoder.feed(b"5\r\nhello\r\nzz\r\n") == b"hello"
    assert decoder.error is not None and not decoder.reusable
    with pytest.raises(httpx.RemoteProtocolError):
        decoder.feed(b"more")


def test_fixed_length_and_extra_bytes() -> None:
    decoder = FixedLength(5)
    assert decoder.feed(b"hel") == b"hel" and not decoder.done
    assert decoder.feed(b"loEXTRA") == b"lo" and decoder.done and not decoder.reusable


def test_head_parsing() -> None:
    h = parse_head(b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nConnection: close")
    assert (h.status, h.reason, h.keep_alive) == (429, b"Too Many Requests", False)
    assert h.headers == [(b"Retry-After", b"1"), (b"Connection", b"close")]
    for bad in [
        b"HTTP/2 200 OK",
        b"HTTP/1.1 20 OK",
        b"HTTP/1.1 200 OK\r\nno colon",
        b"HTTP/1.1 200 OK\r\n folded: x",
    ]:
        with pytest.raises(httpx.RemoteProtocolError):
            parse_head(bad)


def _limits(n: int = 4) -> httpx.Limits:
    return httpx.Limits(max_connections=n, max_keepalive_connections=n, keepalive_expiry=4.0)


async def _get(client: httpx.AsyncClient, url: str) -> tuple[int, bytes]:
    async with client.stream("POST", url, content=b"{}") as response:
        return response.status_code, b"".join([b async for b in response.aiter_raw()])


async def test_bodies_by_content_length_until_close_and_interim_responses() -> None:
    answers: Iterator[list[Send | Close]] = iter(
        [
            [
                Send(
                    b"HTTP/1.1 100 Continue\r\n\r\n"
                    + head(200, "text/plain", chunked=False, length=5)
                    + b"hello"
                )
            ],
            [
                Send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil"),
                Send(b" close", at_s=0.02),
                Close(at_s=0.03),
            ],
            [Send(head() + chunk(b"abc") + END)],
        ]
    )

    def handler(_: ReceivedRequest) -> list[Send | Close]:
        return next(answers)

    async with ScriptedServer(handler) as server:
        async with httpx.AsyncClient(transport=FastTransport(limits=_limits())) as client:
            assert await _get(client, server.url) == (200, b"hello")
            assert await _get(client, server.url) == (200, b"until close")
            assert await _get(client, server.url) == (200, b"abc")
        assert server.connections == 2  # reused after the Content-Length body, not after close-delimited


async def test_max_connections_bounds_requests_in_flight() -> None:
    async with ScriptedServer(lambda _: [Send(head()), Send(chunk(b"x") + END, at_s=0.1)]) as server:
        async with httpx.AsyncClient(transport=FastTransport(limits=_limits(2))) as client:
            results = await asyncio.gather(*(_get(client, server.url) for _ in range(6)))
        assert results == [(200, b"x")] * 6
        assert server.connections == 2


async def test_read_and_connect_timeouts_are_httpx_exceptions() -> None:
    async with ScriptedServer(lambda _: [Hang()]) as server:
        transport = FastTransport(limits=_limits())
        async with httpx.AsyncClient(transport=transport, timeout=httpx.Timeout(5.0, read=0.2)) as client:
            with pytest.raises(httpx.ReadTimeout):
                await _get(client, server.url)


async def test_rejects_header_injection() -> None:
    async with ScriptedServer(lambda _: [Send(head() + END)]) as server:
        async with httpx.AsyncClient(transport=FastTransport(limits=_limits())) as client:
            with pytest.raises(httpx.LocalProtocolError):
                await client.post(server.url, content=b"{}", headers={"x-bad": "a\r\nInjected: 1"})
        assert server.requests == []


@pytest.fixture
def self_signed(tmp_path: Path) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


async def test_https(self_signed: tuple[Path, Path]) -> None:
    cert, key = self_signed
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert, key)
    client_ctx = ssl.create_default_context(cafile=str(cert))
    final = chunk(event(chat_chunk("hi", finish_reason="stop")) + DONE) + END
    async with ScriptedServer(lambda _: [Send(head() + final)], ssl_context=server_ctx) as server:
        transport = FastTransport(limits=_limits(), ssl_context=client_ctx)
        async with StreamingClient(
            ClientConfig(base_url=server.url, model="m"), transport=transport
        ) as client:
            r = await client.send(WorkItem(prompt="x"), request_id=1, intended_ns=0, anchor_ns=0)
    assert server.url.startswith("https://")
    assert r.status == "ok" and len(r.chunk_ns) == 1


async def _connections(server: ScriptedServer, n: int) -> None:
    """Until the server has accepted `n` connections (bounded: the test fails on its own timeout otherwise)."""
    async with asyncio.timeout(10):
        while server.connections < n:  # noqa: ASYNC110 - the scripted server counts accepts, no event for it
            await asyncio.sleep(0.005)


async def test_a_spare_connection_is_ready_for_the_next_request() -> None:
    """With `spare`, a request that leaves no idle connection opens one more in the background, and the next
    request (sent while the first still streams) is written on it: 3 connections in all, where connecting
    on the request's own path would make 4 (its own, then a spare again)."""
    async with ScriptedServer(lambda _: [Send(head()), Send(chunk(b"x") + END, at_s=0.2)]) as server:
        async with httpx.AsyncClient(transport=FastTransport(limits=_limits(), spare=True)) as client:
            first = asyncio.ensure_future(_get(client, server.url))
            await _connections(server, 2)  # the first request's own, and the spare
            second = asyncio.ensure_future(_get(client, server.url))
            assert await asyncio.gather(first, second) == [(200, b"x")] * 2
            await asyncio.sleep(0.05)  # room for any connect that should not happen
        assert server.connections == 3


async def test_no_spare_beyond_max_connections() -> None:
    """Two slots, two requests streaming at once: every slot is in use, so no third connection is opened."""
    async with ScriptedServer(lambda _: [Send(head()), Send(chunk(b"x") + END, at_s=0.2)]) as server:
        async with httpx.AsyncClient(transport=FastTransport(limits=_limits(2), spare=True)) as client:
            first = asyncio.ensure_future(_get(client, server.url))
            await _connections(server, 2)  # the first request's own, and the spare
            second = asyncio.ensure_future(_get(client, server.url))
            assert await asyncio.gather(first, second) == [(200, b"x")] * 2
            await asyncio.sleep(0.05)
        assert server.connections == 2


async def test_without_spare_every_connection_is_opened_by_a_request() -> None:
    async with (ScriptedServer(lambda _: [Send(head()), Send(chunk(b"x") + END, at_s=0.05)]) as server,
                httpx.AsyncClient(transport=FastTransport(limits=_limits())) as client):
        assert await _get(client, server.url) == (200, b"x")
        await asyncio.sleep(0.05)
        assert server.connections == 1


async def test_a_spare_that_cannot_connect_is_dropped_quietly() -> None:
    """Nothing listens: the spare's failed connect is nobody's error (no exception left in a task), and a
    request to that address still fails with its own ConnectError."""
    with closed_port() as port:  # bound, not listening: refuses connections until the test ends
        loop = asyncio.get_running_loop()
        unhandled: list[dict[str, object]] = []
        loop.set_exception_handler(lambda _, context: unhandled.append(context))
        transport = FastTransport(limits=_limits(), spare=True)
        transport._open_spare(("http", "127.0.0.1", port), 1.0)
        async with asyncio.timeout(10):
            while transport._spares:  # noqa: ASYNC110 - the spare's task ends on its own
                await asyncio.sleep(0.005)
        async with httpx.AsyncClient(transport=transport) as client:
            with pytest.raises(httpx.ConnectError):
                await _get(client, f"http://127.0.0.1:{port}")
    assert unhandled == [] and transport._idle.get(("http", "127.0.0.1", port)) in (None, [])
