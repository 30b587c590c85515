"""How many content chunks one client process ingests, at what CPU cost, and how truthfully it times them.

A paced SSE server runs in its own process: raw asyncio (uvloop when installed), pre-encoded events,
each chunk stamped with the server's own send time (`goodput.t`, read from `perf_counter_ns` just
before the write, the same monotonic clock as the client's). The client under test is
`loadgen.http.send.client.StreamingClient` in this process, closed loop at a fixed concurrency. Reported:

- chunks/s ingested and client CPU µs per chunk (`time.process_time` of this process only);
- timing error per gap = client-measured gap − server gap (ms): p50, p99, and p99 of its absolute value.

Usage:  .venv/bin/python bench/client_throughput.py --rates 10000,20000 --concurrency 16,64,256 --seconds 5 \\
            --runs 3 --transport raw,fast,httpx
`raw` is the floor (a bare protocol stamping reads, no parsing), `httpx` is httpx's default transport.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from time import perf_counter_ns

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root, for bench.wire
from bench.wire import RawStream, take_request

try:
    import uvloop
except ImportError:  # pragma: no cover - optional
    uvloop = None  # type: ignore[assignment]

_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
_CHUNK = (
    b'data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench",'
    b'"choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}],'
    b'"usage":{"prompt_tokens":128,"total_tokens":%d,"completion_tokens":%d},"goodput":{"t":%.9f,"n":1}}\n\n'
)
_LAST = (
    b'data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench",'
    b'"choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"length"}],'
    b'"usage":{"prompt_tokens":128,"total_tokens":%d,"completion_tokens":%d}}\n\ndata: [DONE]\n\n'
)


def _framed(payload: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(payload), payload)


class _BenchServer(asyncio.Protocol):
    """One connection: parse a request (headers + Content-Length body), stream paced chunks, repeat."""

    def __init__(self) -> None:
        self.buf = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is not an asyncio.Transport subclass

    def data_received(self, data: bytes) -> None:
        self.buf += data
        taken = take_request(self.buf)
        if taken is None:
            return
        _, body, self.buf = taken
        # The client's extra_body carries the pacing: max_tokens chunks, one every interval_us.
        tokens = int(body.split(b'"max_tokens":', 1)[1].split(b",", 1)[0].split(b"}", 1)[0])
        interval_ns = int(body.split(b'"interval_us":', 1)[1].split(b",", 1)[0].split(b"}", 1)[0]) * 1000
        self._stream(tokens, interval_ns)

    def _stream(self, tokens: int, interval_ns: int) -> None:
        loop = asyncio.get_running_loop()
        transport = self.transport
        assert transport is not None
        arrival = perf_counter_ns()
        transport.write(_HEAD)
        start_loop = loop.time()

        def send(j: int) -> None:
            if transport.is_closing():
                return
            now = perf_counter_ns()
            transport.write(_framed(_CHUNK % (128 + j + 1, j + 1, (now - arrival) / 1e9)))
            if j + 1 < tokens:
                loop.call_at(start_loop + (j + 1) * interval_ns / 1e9, send, j + 1)
            else:
                transport.write(_framed(_LAST % (128 + tokens, tokens)) + b"0\r\n\r\n")

        loop.call_at(start_loop + interval_ns / 1e9, send, 0)


def serve(port_file: str) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(4096)
    Path(port_file).write_text(str(sock.getsockname()[1]))

    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(_BenchServer, sock=sock)
        await server.serve_forever()

    (uvloop.run if uvloop else asyncio.run)(main())


Streams = list[tuple[list[int], list[float]]]  # per ok request: client chunk times (ns), server times (s)


async def _level(
    port: int, concurrency: int, rate: float, seconds: float, tokens: int, transport_name: str = "fast"
) -> dict[str, float]:
    interval_us = max(1, round(concurrency / rate * 1e6))
    run = _raw_client if transport_name == "raw" else _streaming_client
    streams, failed, cpu, wall = await run(port, concurrency, interval_us, seconds, tokens, transport_name)
    chunks = sum(len(c) for c, _ in streams)
    errs = [
        np.diff(np.asarray(c, dtype=np.float64)) - np.diff(np.asarray(s, dtype=np.float64)) * 1e9
        for c, s in streams
        if len(c) > 1 and len(c) == len(s)
    ]
    err_ms = np.concatenate(errs) / 1e6 if errs else np.zeros(1)
    return {
        "concurrency": concurrency,
        "offered_chunks_s": concurrency * 1e6 / interval_us,
        "chunks_s": chunks / wall,
        "cpu_us_per_chunk": cpu / chunks * 1e6 if chunks else float("nan"),
        "err_p50_ms": float(np.percentile(err_ms, 50)),
        "err_p99_ms": float(np.percentile(err_ms, 99)),
        "abs_err_p99_ms": float(np.percentile(np.abs(err_ms), 99)),
        "failed": failed,
    }


async def _streaming_client(
    port: int, concurrency: int, interval_us: int, seconds: float, tokens: int, transport_name: str
) -> tuple[Streams, int, float, float]:
    import httpx

    from loadgen.http.send.client import StreamingClient
    from loadgen.types import ClientConfig, WorkItem

    config = ClientConfig(
        base_url=f"http://127.0.0.1:{port}", model="bench", extra_body={"interval_us": interval_us}
    )
    item = WorkItem(prompt="hello", max_tokens=tokens)
    records = []
    transport = None
    if transport_name == "httpx":  # httpx's default transport (httpcore + h11 + anyio), for comparison
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        transport = httpx.AsyncHTTPTransport(limits=limits, trust_env=False)
    async with StreamingClient(config, transport=transport) as client:
        anchor = perf_counter_ns()
        stop_at = anchor + int(seconds * 1e9)

        async def worker(w: int) -> None:
            i = 0
            while perf_counter_ns() < stop_at:
                records.append(
                    await client.send(item, request_id=w * 1_000_000 + i, intended_ns=0, anchor_ns=anchor)
                )
                i += 1

        cpu0, wall0 = time.process_time(), perf_counter_ns()
        await asyncio.gather(*(worker(w) for w in range(concurrency)))
        cpu, wall = time.process_time() - cpu0, (perf_counter_ns() - wall0) / 1e9
    streams = [(r.chunk_ns, r.server_chunk_s or []) for r in records if r.status == "ok"]
    return streams, sum(r.status != "ok" for r in records), cpu, wall


async def _raw_client(
    port: int, concurrency: int, interval_us: int, seconds: float, tokens: int, _: str
) -> tuple[Streams, int, float, float]:
    import orjson

    loop = asyncio.get_running_loop()
    body = orjson.dumps({"max_tokens": tokens, "interval_us": interval_us})
    request = b"POST /v1/chat/completions HTTP/1.1\r\nHost: b\r\nContent-Length: %d\r\n\r\n%s" % (
        len(body),
        body,
    )
    streams: Streams = []
    stop_at = perf_counter_ns() + int(seconds * 1e9)

    async def worker() -> None:
        transport, proto = await loop.create_connection(RawStream, "127.0.0.1", port)
        while perf_counter_ns() < stop_at:
            proto.buf, proto.marks, proto.done = bytearray(), [], loop.create_future()
            transport.write(request)
            await proto.done
            streams.append(proto.stamps())
        transport.close()

    cpu0, wall0 = time.process_time(), perf_counter_ns()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return streams, 0, time.process_time() - cpu0, (perf_counter_ns() - wall0) / 1e9


async def _wake_lateness(seconds: float) -> tuple[float, float]:
    """The machine's own noise: how late a 1 ms sleep wakes this idle process (p50, p99 in ms)."""
    late: list[float] = []
    stop_at = perf_counter_ns() + int(seconds * 1e9)
    while perf_counter_ns() < stop_at:
        before = perf_counter_ns()
        await asyncio.sleep(0.001)
        late.append((perf_counter_ns() - before) / 1e6 - 1.0)
    return float(np.percentile(late, 50)), float(np.percentile(late, 99))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--serve", metavar="PORT_FILE", help=argparse.SUPPRESS)
    parser.add_argument("--rates", default="10000,20000", help="offered content chunks/s, comma-separated")
    parser.add_argument("--concurrency", default="16,64,256", help="concurrent streams, comma-separated")
    parser.add_argument("--seconds", type=float, default=5.0, help="duration of each level")
    parser.add_argument("--tokens", type=int, default=200, help="content chunks per request")
    parser.add_argument("--runs", type=int, default=1, help="repeat each level; the median is reported")
    parser.add_argument(
        "--transport",
        default="fast",
        help="comma-separated, run interleaved per level: 'fast' (loadgen's FastTransport), "
        "'httpx' (httpx's own transport), 'raw' (a bare protocol that only stamps reads: "
        "the floor this machine allows)",
    )
    args = parser.parse_args()
    transports = args.transport.split(",")
    if not set(transports) <= {"fast", "httpx", "raw"}:
        parser.error(f"unknown transport in {args.transport!r}")
    if args.serve:
        serve(args.serve)
        return
    import tempfile

    port_file = Path(tempfile.mkdtemp()) / "port"
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port_file)])
    try:
        deadline = time.monotonic() + 20
        while not (port_file.exists() and port_file.read_text()):
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("bench server did not start")
            time.sleep(0.05)
        port = int(port_file.read_text())
        run = uvloop.run if uvloop else asyncio.run
        print(
            f"event loop: {'uvloop' if uvloop else 'asyncio'}; {args.runs} run(s) per level and "
            f"transport, medians; {args.tokens} chunks per request, {args.seconds} s per run"
        )
        p50, p99 = run(_wake_lateness(2.0))
        print(
            f"machine noise: an idle 1 ms sleep wakes late by p50 {p50:.3f} ms, p99 {p99:.3f} ms; "
            f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"
        )
        print(
            f"{'transport':>9} {'conc':>5} {'offered/s':>10} {'chunks/s':>9} {'cpu µs/chunk':>12} "
            f"{'err p50 ms':>10} {'err p99 ms':>10} {'|err| p99':>9} {'failed':>6} {'load1':>5}"
        )
        for rate in (float(r) for r in args.rates.split(",")):
            for conc in (int(c) for c in args.concurrency.split(",")):
                # Interleaved, so every transport sees the same (shared, noisy) machine.
                runs: dict[str, list[dict[str, float]]] = {t: [] for t in transports}
                for _ in range(args.runs):
                    for t in transports:
                        runs[t].append(run(_level(port, conc, rate, args.seconds, args.tokens, t)))
                for t in transports:
                    med = {k: statistics.median(r[k] for r in runs[t]) for k in runs[t][0]}
                    print(
                        f"{t:>9} {conc:>5} {med['offered_chunks_s']:>10.0f} {med['chunks_s']:>9.0f} "
                        f"{med['cpu_us_per_chunk']:>12.1f} {med['err_p50_ms']:>10.3f} {med['err_p99_ms']:>10.3f} "
                        f"{med['abs_err_p99_ms']:>9.3f} {med['failed']:>6.0f} {os.getloadavg()[0]:>5.2f}",
                        flush=True,
                    )
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
