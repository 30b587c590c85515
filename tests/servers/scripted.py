"""A loopback HTTP/1.1 server that writes exactly the bytes a test scripts, at scripted times.

It is deliberately not a real web framework: it can misbehave in every way a test needs (garbage
framing, resets, stalls, half-written chunks). Each request is answered by `handler(request)`, which
returns a list of actions run in order; `Send(data, at_s)` writes raw bytes at `at_s` seconds after
the request arrived (absolute, never chained sleeps) and stamps the real write time, which is the
truth that timing tests compare the client with.

    async with ScriptedServer(lambda req: [Send(sse_head()), Send(chunk(event(...)), at_s=0.05), ...]) as srv:
        ... srv.url ...  srv.requests[0].writes_ns ...
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from time import perf_counter_ns
from typing import Any

import orjson


@dataclass(slots=True)
class Send:
    data: bytes
    at_s: float = 0.0  # seconds after the request arrived


@dataclass(slots=True)
class Close:
    """Close gracefully (FIN) — after everything written so far."""

    at_s: float = 0.0


@dataclass(slots=True)
class Reset:
    """Abort with a TCP RST (SO_LINGER 0), discarding anything unsent."""

    at_s: float = 0.0


@dataclass(slots=True)
class Hang:
    """Write nothing more and keep the connection open until the client or the server stops."""


@dataclass(slots=True)
class WatchClose:
    """From here on, note when the client closes the connection (`ReceivedRequest.closed_ns`, the server's own
    stamp of the end of file) while the script goes on; the connection serves no further request."""


Action = Send | Close | Reset | Hang | WatchClose


@dataclass(slots=True)
class ReceivedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    received_ns: int  # perf_counter_ns when the whole request had been read
    writes_ns: list[int] = field(default_factory=list)  # perf_counter_ns just before each Send's write
    closed_ns: int | None = None  # WatchClose: perf_counter_ns when the server read the client's end of file

    def json(self) -> Any:
        return orjson.loads(self.body)


Handler = Callable[[ReceivedRequest], Sequence[Action]]


class ScriptedServer:
    def __init__(self, handler: Handler, *, ssl_context: ssl.SSLContext | None = None) -> None:
        self.handler = handler
        self.ssl_context = ssl_context
        self.requests: list[ReceivedRequest] = []
        self.connections = 0
        self.wrote = asyncio.Event()  # set after every scripted write: tests wait on it, never poll
        self.client_closed = asyncio.Event()  # set when a WatchClose saw the client close its connection
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def url(self) -> str:
        return f"{'https' if self.ssl_context else 'http'}://127.0.0.1:{self.port}"

    async def __aenter__(self) -> ScriptedServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.ssl_context)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        try:
            while await self._one_request(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            # Only __aexit__ cancels these tasks: end normally, or asyncio's connection callback logs the
            # cancellation as an error for every connection still open at shutdown.
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _one_request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serve one request; False when the connection is done."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {
            k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)
        }
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        request = ReceivedRequest(method, path, headers, body, perf_counter_ns())
        self.requests.append(request)
        loop = asyncio.get_running_loop()
        start = loop.time()
        watching = False
        for action in self.handler(request):
            if isinstance(action, WatchClose):
                watching = True
                self._watch(reader, request)
                continue
            if isinstance(action, Hang):
                await asyncio.Event().wait()
                return False
            delay = start + action.at_s - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            if isinstance(action, Send):
                request.writes_ns.append(perf_counter_ns())
                writer.write(action.data)
                await writer.drain()
                self.wrote.set()
            elif isinstance(action, Close):
                await writer.drain()
                writer.close()
                return False
            elif isinstance(action, Reset):
                sock = writer.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                writer.transport.abort()
                return False
        return not watching

    def _watch(self, reader: asyncio.StreamReader, request: ReceivedRequest) -> None:
        async def watch() -> None:
            try:
                with contextlib.suppress(ConnectionError):  # a close with unread bytes is a reset: closed too
                    while await reader.read(65536):
                        pass
                request.closed_ns = perf_counter_ns()
                self.client_closed.set()
            except asyncio.CancelledError:
                pass
            finally:
                self._tasks.discard(task)

        task = asyncio.ensure_future(watch())
        self._tasks.add(task)


# --- bytes helpers -----------------------------------------------------------------------------


def head(
    status: int = 200,
    content_type: str = "text/event-stream",
    *,
    chunked: bool = True,
    length: int | None = None,
    extra: str = "",
) -> bytes:
    reason = {200: "OK", 400: "Bad Request", 429: "Too Many Requests", 500: "Internal Server Error"}
    lines = [f"HTTP/1.1 {status} {reason.get(status, 'Status')}", f"Content-Type: {content_type}"]
    if chunked:
        lines.append("Transfer-Encoding: chunked")
    elif length is not None:
        lines.append(f"Content-Length: {length}")
    if extra:
        lines.append(extra)
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def chunk(payload: bytes) -> bytes:
    """One HTTP chunked-transfer frame."""
    return b"%x\r\n%s\r\n" % (len(payload), payload)


END = b"0\r\n\r\n"  # the chunked terminator


def event(obj: Any) -> bytes:
    return b"data: " + orjson.dumps(obj) + b"\n\n"


DONE = b"data: [DONE]\n\n"


def chat_chunk(
    content: str | None = None,
    *,
    finish_reason: str | None = None,
    usage: dict[str, Any] | None = None,
    goodput: dict[str, Any] | None = None,
    role: str | None = None,
    **delta: Any,
) -> dict[str, Any]:
    """An OpenAI `chat.completion.chunk` object; `usage`/`goodput` added when given."""
    d: dict[str, Any] = dict(delta)
    if role is not None:
        d["role"] = role
    if content is not None:
        d["content"] = content
    obj: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": d, "finish_reason": finish_reason}],
    }
    if usage is not None:
        obj["usage"] = usage
    if goodput is not None:
        obj["goodput"] = goodput
    return obj


def usage(prompt: int, completion: int, cached: int | None = None) -> dict[str, Any]:
    u: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if cached is not None:
        u["prompt_tokens_details"] = {"cached_tokens": cached}
    return u


def free_port() -> int:
    """A port that was free a moment ago (bound then released), for a process that must be told its port
    before it starts (Prometheus, a Pushgateway). Another process may take it in between: where the test
    only needs a port that refuses connections, use `closed_port()`."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def closed_port() -> Iterator[int]:
    """A loopback port that refuses connections for as long as the block runs: a socket bound to it and
    not listening (the kernel answers a SYN with RST), so nothing else can take the port meanwhile."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield int(s.getsockname()[1])
