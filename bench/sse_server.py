"""A paced SSE server cheap enough to measure a client against: one-token chunks at a fixed gap, each
stamped with the time it was written.

    .venv/bin/python bench/sse_server.py --port-file /tmp/port [--cpu 1]

Raw asyncio protocol (uvloop when installed), no framework. A POST answers as a vLLM-shaped chat stream
(`choices[0].delta.content`, running `usage`, ~300 bytes per event, one HTTP chunk per event): the
body's `max_tokens` content chunks, the first `bench_first_us` after the request arrived and then one
every `bench_gap_us` (both from the request body, so `goodput run --extra-body` sets them), then a
finish event and `[DONE]`. Every content chunk carries `goodput.t`: the server's `perf_counter_ns`
just before the write, in seconds since the request arrived, so a client's gap error (its measured gap
minus the gap the server wrote) can be computed per gap. Each chunk's write is scheduled at its
absolute time (never chained), on the loop's timers.

`GET /v1/models` lists the one model, `bench`. `GET /stats` answers JSON: this process's CPU seconds, requests and chunks so far, and how late the
chunk writes were against their schedule since the previous `/stats` (p50, p99, max in ms) — the
evidence that the server kept pace and was not the bottleneck.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
import time
from array import array
from pathlib import Path
from time import perf_counter_ns

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root, for bench.wire
from bench.wire import take_request

try:
    import uvloop
except ImportError:  # pragma: no cover - optional
    uvloop = None  # type: ignore[assignment]

_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
_CHUNK = (
    b'data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench",'
    b'"choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}],'
    b'"usage":{"prompt_tokens":16,"total_tokens":%d,"completion_tokens":%d},"goodput":{"t":%.9f,"n":1}}\n\n'
)
_LAST = (
    b'data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench",'
    b'"choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"length"}],'
    b'"usage":{"prompt_tokens":16,"total_tokens":%d,"completion_tokens":%d}}\n\ndata: [DONE]\n\n'
)
_END = b"0\r\n\r\n"
_MODELS = b'{"object":"list","data":[{"id":"bench","object":"model","owned_by":"bench"}]}'


def framed(payload: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(payload), payload)


class Stats:
    def __init__(self) -> None:
        self.requests = 0
        self.chunks = 0
        self.late_ms = array("d")

    def snapshot(self) -> bytes:
        late = sorted(self.late_ms)
        self.late_ms = array("d")

        def q(p: float) -> float | None:
            return late[min(len(late) - 1, int(p * len(late)))] if late else None

        return orjson.dumps({"cpu_s": time.process_time(), "requests": self.requests, "chunks": self.chunks,
                             "late_p50_ms": q(0.5), "late_p99_ms": q(0.99), "late_max_ms": late[-1] if late else None})


STATS = Stats()


class StreamConnection(asyncio.Protocol):
    """One keep-alive connection: read a request (head + Content-Length body), answer it, repeat."""

    def __init__(self) -> None:
        self.buf = b""
        self.transport: asyncio.Transport | None = None
        self.loop = asyncio.get_running_loop()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is not an asyncio.Transport subclass

    def data_received(self, data: bytes) -> None:
        arrival = perf_counter_ns()
        self.buf += data
        while (taken := take_request(self.buf)) is not None:
            head, body, self.buf = taken
            if head.startswith(b"get "):
                self._answer_get(head)
                continue
            request = orjson.loads(body)
            self._stream(arrival, int(request.get("max_tokens") or 1), int(request.get("bench_first_us", 0)) * 1000,
                         int(request.get("bench_gap_us", 1000)) * 1000)

    def _answer_get(self, head: bytes) -> None:
        if head.startswith(b"get /stats"):
            payload, status = STATS.snapshot(), b"200 OK"
        elif head.startswith(b"get /v1/models"):
            payload, status = _MODELS, b"200 OK"
        else:
            payload, status = b'{"error":"not found"}', b"404 Not Found"
        self._write(b"HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                    % (status, len(payload), payload))

    def _write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def _stream(self, arrival: int, tokens: int, first_ns: int, gap_ns: int) -> None:
        STATS.requests += 1
        loop, transport = self.loop, self.transport
        assert transport is not None
        transport.write(_HEAD)

        def send(j: int) -> None:
            if transport.is_closing():
                return
            now = perf_counter_ns()
            due = arrival + first_ns + j * gap_ns
            STATS.late_ms.append((now - due) / 1e6)
            STATS.chunks += 1
            data = framed(_CHUNK % (16 + j + 1, j + 1, (now - arrival) / 1e9))
            if j + 1 < tokens:
                transport.write(data)
                # The next write's absolute time, converted to the loop's clock now (never chained).
                next_due = arrival + first_ns + (j + 1) * gap_ns
                loop.call_at(loop.time() + (next_due - perf_counter_ns()) / 1e9, send, j + 1)
            else:
                transport.write(data + framed(_LAST % (16 + tokens, tokens)) + _END)

        loop.call_at(loop.time() + (arrival + first_ns - perf_counter_ns()) / 1e9, send, 0)


def serve(port_file: Path, cpu: int | None) -> None:
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(4096)
    port_file.write_text(str(sock.getsockname()[1]))

    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(StreamConnection, sock=sock)
        await server.serve_forever()

    (uvloop.run if uvloop else asyncio.run)(main())


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port-file", type=Path, required=True, help="the chosen port is written here")
    parser.add_argument("--cpu", type=int, help="pin this process to one CPU")
    args = parser.parse_args()
    serve(args.port_file, args.cpu)
