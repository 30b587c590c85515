"""`FastTransport`: an `httpx.AsyncBaseTransport` for streaming HTTP/1.1 at load-test rates.

It plugs into `httpx.AsyncClient(transport=...)`, so requests, responses, headers and exceptions are
httpx's own; only the wire work is replaced (see `loadgen.http.http11` for why). What it keeps of
httpcore's contract: `extensions["timeout"]` (connect, read, pool), the `extensions["trace"]` hook
for `http11.send_request_headers.started` (the client's "request written" time), keep-alive reuse,
and `httpx.Limits`. Connections per origin are reused last-in first-out; `max_connections` bounds
requests in flight, and a request waiting for a slot waits *before* it is written, so that wait shows
up as dispatch lag rather than as latency. With `spare=True` (an open-loop run's client), a request that
leaves no idle connection behind opens one more in the background, so the next request is not the one
that waits for a connect.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Awaitable, Callable

import httpx

from loadgen.http.connection import Connection
from loadgen.http.http11 import body_decoder, read_head
from loadgen.http.response import Origin, ResponseBody

RECEIVE_CLOCK = "goodput.receive_clock"  # response extension: an object with `received_ns`

_DEFAULT_PORTS = {"http": 80, "https": 443}


class FastTransport(httpx.AsyncBaseTransport):
    def __init__(self, *, limits: httpx.Limits, ssl_context: ssl.SSLContext | None = None,
                 spare: bool = False) -> None:
        if limits.max_connections is None:
            raise ValueError("FastTransport needs an explicit max_connections")
        self._max_connections = limits.max_connections
        self._max_idle = limits.max_keepalive_connections or 0
        self._expiry = limits.keepalive_expiry
        self._ssl = ssl_context
        self._idle: dict[Origin, list[Connection]] = {}
        self._slots: asyncio.Semaphore | None = None
        self._closed = False
        self._spare = spare
        self._spares: dict[Origin, asyncio.Task[None]] = {}  # per origin: the spare connection being opened

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._closed:
            raise RuntimeError("FastTransport is closed")
        url = request.url
        if url.scheme not in _DEFAULT_PORTS:
            raise httpx.UnsupportedProtocol(f"unsupported URL scheme {url.scheme!r}", request=request)
        origin = (url.scheme, url.host, url.port or _DEFAULT_PORTS[url.scheme])
        timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        trace = request.extensions.get("trace")
        head = _request_head(request)
        body = await _request_body(request)

        async def traced(event: str) -> None:
            if trace is not None:
                await trace(event, {"request": request})

        stream = await self.open(origin, head, body, connect_s=timeouts.get("connect"),
                                 pool_s=timeouts.get("pool"), read_s=timeouts.get("read"), trace=traced,
                                 request=request)
        response_head = stream.head
        return httpx.Response(
            response_head.status,
            headers=response_head.headers,
            stream=stream,
            extensions={
                "http_version": response_head.http_version,
                "reason_phrase": response_head.reason,
                RECEIVE_CLOCK: stream.conn,  # `.received_ns`: when the loop handed over the latest bytes
            },
        )

    async def open(
        self,
        origin: Origin,
        head: bytes,
        body: bytes,
        *,
        connect_s: float | None,
        pool_s: float | None = None,
        read_s: float | None = None,
        written: Callable[[], None] | None = None,
        trace: Callable[[str], Awaitable[None]] | None = None,
        request: httpx.Request | None = None,
    ) -> ResponseBody:
        """Send one request (`head` and `body` already encoded) on a pooled connection and return once its
        response head is in: the direct path for callers that need no httpx objects. `written` is called
        (and `trace` awaited with the httpcore event names) just before the request's bytes are written.
        Failures raise httpx's exception types, as `handle_async_request` does."""
        if self._closed:
            raise RuntimeError("FastTransport is closed")
        await self._acquire(pool_s, request)
        conn: Connection | None = None
        try:
            conn = self._checkout(origin) or await self._connect(origin, connect_s, request)
            if trace is not None:
                await trace("http11.send_request_headers.started")
            if written is not None:
                written()
            conn.write(head + body if len(body) < 65536 else head)
            if len(body) >= 65536:
                conn.write(body)
            if self._spare and not self._idle.get(origin):  # after the write: not between wake-up and send
                self._open_spare(origin, connect_s)
            if read_s is None:
                response_head = await read_head(conn)
            else:
                try:
                    async with asyncio.timeout(read_s):
                        response_head = await read_head(conn)
                except TimeoutError:
                    raise httpx.ReadTimeout(
                        "no response headers within the read timeout", request=request
                    ) from None
            if trace is not None:
                await trace("http11.receive_response_headers.complete")
            decoder = body_decoder(response_head, head[: head.find(b" ")])
        except BaseException:
            if conn is not None:
                conn.close()
            self._release()
            raise
        return ResponseBody(self, origin, conn, response_head, decoder, read_s)

    def _open_spare(self, origin: Origin, connect_s: float | None) -> None:
        """With `spare`: this request left no idle connection, so one more is opened in the background and
        pooled; the next request finds it ready instead of connecting between its wake-up and its send.
        None while every `max_connections` slot is in use: the pool never holds more than that allows."""
        if origin in self._spares or self._closed or (self._slots is not None and self._slots.locked()):
            return
        task = asyncio.ensure_future(self._pool_spare(origin, connect_s))
        self._spares[origin] = task

    async def _pool_spare(self, origin: Origin, connect_s: float | None) -> None:
        try:
            conn = await self._connect(origin, connect_s, None)
        except httpx.TransportError:
            return  # the next request connects itself, and its record says what failed
        finally:
            self._spares.pop(origin, None)
        idle = self._idle.setdefault(origin, [])
        if self._closed or len(idle) >= self._max_idle:
            conn.close()
            return
        conn.idle_since = time.monotonic()
        idle.insert(0, conn)  # below the connections just used: those are taken first (last in, first out)

    async def aclose(self) -> None:
        self._closed = True
        spares = list(self._spares.values())
        for task in spares:
            task.cancel()
        await asyncio.gather(*spares, return_exceptions=True)
        for conns in self._idle.values():
            for conn in conns:
                conn.close()
        self._idle.clear()

    async def _acquire(self, limit_s: float | None, request: httpx.Request | None) -> None:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._max_connections)
        if limit_s is None:
            await self._slots.acquire()
            return
        try:
            async with asyncio.timeout(limit_s):
                await self._slots.acquire()
        except TimeoutError:
            raise httpx.PoolTimeout(
                "no free connection slot within the pool timeout", request=request
            ) from None

    def _release(self) -> None:
        assert self._slots is not None
        self._slots.release()

    def _checkout(self, origin: Origin) -> Connection | None:
        idle = self._idle.get(origin)
        now = time.monotonic()
        while idle:
            conn = idle.pop()
            if conn.reusable and (self._expiry is None or now - conn.idle_since < self._expiry):
                return conn
            conn.close()
        return None

    def checkin(self, origin: Origin, conn: Connection, reusable: bool) -> None:
        self._release()
        idle = self._idle.setdefault(origin, [])
        if reusable and conn.reusable and not self._closed and len(idle) < self._max_idle:
            conn.idle_since = time.monotonic()
            idle.append(conn)
        else:
            conn.close()

    async def _connect(self, origin: Origin, limit_s: float | None, request: httpx.Request | None) -> Connection:
        scheme, host, port = origin
        loop = asyncio.get_running_loop()
        context: ssl.SSLContext | None = None
        if scheme == "https":
            context = self._ssl or ssl.create_default_context()
        try:
            async with asyncio.timeout(limit_s):
                _, conn = await loop.create_connection(
                    lambda: Connection(loop),
                    host,
                    port,
                    ssl=context,
                    server_hostname=host if context else None,
                )
        except TimeoutError:
            raise httpx.ConnectTimeout(
                f"no connection to {host}:{port} within {limit_s} s", request=request
            ) from None
        except OSError as exc:
            raise httpx.ConnectError(f"cannot connect to {host}:{port}: {exc}", request=request) from None
        return conn


async def _request_body(request: httpx.Request) -> bytes:
    body = request.content if isinstance(request.stream, httpx.ByteStream) else await request.aread()
    if "transfer-encoding" in request.headers:  # httpx announced chunked for a streamed body
        return (b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)) if body else b"0\r\n\r\n"
    return body


def _request_head(request: httpx.Request) -> bytes:
    lines = [b"%s %s HTTP/1.1" % (request.method.encode(), request.url.raw_path)]
    for name, value in request.headers.raw:
        if b"\r" in value or b"\n" in value or b"\r" in name or b"\n" in name:
            raise httpx.LocalProtocolError("header name or value contains a line break", request=request)
        lines.append(name + b": " + value)
    lines.append(b"\r\n")
    return b"\r\n".join(lines)


def request_head_template(request: httpx.Request) -> tuple[bytes, bytes]:
    """The head `_request_head` writes for `request`, split around its Content-Length value: (before,
    after), so `before + b"%d" % len(body) + after` is the head of the same request with another body."""
    head = _request_head(request)
    marker = b"\r\ncontent-length: "
    at = head.lower().find(marker)
    if at < 0:
        raise ValueError("the request has no Content-Length header")
    start = at + len(marker)
    end = head.index(b"\r\n", start)
    return head[:start], head[end:]
