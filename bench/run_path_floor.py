"""The floor for `bench/run_path.py`: the least any asyncio client does on this machine for the same load.

    .venv/bin/python bench/run_path_floor.py --port P --rate 200 --tokens 64 --duration 6 --out floor.json

The same Poisson schedule (same seed), the same server, the same request shape, the same dispatch clock
as goodput (`loadgen.dispatch.alarm`, each request's own task waiting for its instant), but nothing else: each read is only stamped (`perf_counter_ns` in
`data_received`), the request is one pre-built byte string, and the stamps are matched to the server's
`goodput.t` values after the run. What it costs per chunk and per request, and the dispatch lag and timing
error it sees, are what this machine allows; goodput's figures are read against them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from time import perf_counter_ns

import numpy as np
import orjson

try:
    import uvloop
except ImportError:  # pragma: no cover - optional
    uvloop = None  # type: ignore[assignment]

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root, for bench.wire
from bench.wire import RawStream
from loadgen.dispatch import make_alarm
from loadgen.workload.arrivals import parse_arrival, schedule


async def run(args: argparse.Namespace) -> dict[str, float]:
    loop = asyncio.get_running_loop()
    alarm = make_alarm(loop)
    body = orjson.dumps({"model": "bench", "messages": [{"role": "user", "content": "x " * 16}], "stream": True,
                         "max_tokens": args.tokens, "bench_gap_us": args.gap_us, "bench_first_us": args.first_us})
    request = b"POST /v1/chat/completions HTTP/1.1\r\nHost: b\r\nContent-Type: application/json\r\n" \
              b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    arrival = parse_arrival("poisson", rate=args.rate, burstiness=1.0, rate_end=None, concurrency=None)
    offsets = schedule(arrival, duration_s=args.duration, count=None, seed=0).tolist()
    idle: list[tuple[asyncio.Transport, RawStream]] = []
    lags: list[int] = []
    errors: list[np.ndarray] = []
    chunks = 0

    async def one(intended_ns: int, released: asyncio.Future[None]) -> None:
        nonlocal chunks
        await alarm.sleep_until(intended_ns)  # as goodput does: the wake-up releases the request's own task
        released.set_result(None)
        if idle:
            transport, stream = idle.pop()
        else:
            transport, stream = await loop.create_connection(RawStream, "127.0.0.1", args.port)
        stream.buf, stream.marks, stream.done = bytearray(), [], loop.create_future()
        lags.append(perf_counter_ns() - intended_ns)
        transport.write(request)
        await stream.done
        client, server = stream.stamps()
        chunks += len(client)
        if len(client) > 1:
            errors.append(np.diff(np.asarray(client, dtype=np.float64)) - np.diff(np.asarray(server)) * 1e9)
        idle.append((transport, stream))

    tasks = []
    cpu0 = time.process_time()
    anchor = perf_counter_ns()
    for offset in offsets:
        released = loop.create_future()
        tasks.append(asyncio.ensure_future(one(anchor + round(offset * 1e9), released)))
        await released
    await asyncio.gather(*tasks)
    cpu = time.process_time() - cpu0
    alarm.close()
    lag = np.asarray(lags) / 1e6
    err = np.concatenate(errors) / 1e6 if errors else np.zeros(1)
    return {"cpu_s": cpu, "seconds": (perf_counter_ns() - anchor) / 1e9, "requests": len(offsets), "chunks": chunks,
            "lag_p50_ms": float(np.percentile(lag, 50)), "lag_p99_ms": float(np.percentile(lag, 99)),
            "err_p50_ms": float(np.percentile(err, 50)), "err_p99_ms": float(np.percentile(err, 99)),
            "abs_err_p99_ms": float(np.percentile(np.abs(err), 99))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--rate", type=float, required=True)
    ap.add_argument("--tokens", type=int, required=True)
    ap.add_argument("--duration", type=float, required=True)
    ap.add_argument("--gap-us", type=int, default=5000)
    ap.add_argument("--first-us", type=int, default=5000)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    result = (uvloop.run if uvloop else asyncio.run)(run(args))
    args.out.write_text(json.dumps(result))


if __name__ == "__main__":
    main()
