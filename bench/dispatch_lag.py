"""Dispatch lag (d − a: actual minus intended send time) of `goodput run` at a given request rate.

    .venv/bin/python bench/dispatch_lag.py --rate 200 --duration 20 --repeat 3

Runs the real CLI (`goodput run`, open loop) against the paced SSE server of `client_throughput.py`
in its own process: each request streams `--output-tokens` chunks, one every `--interval-ms`, so at
200 req/s × 50 chunks × 5 ms about 50 requests are in flight and 10,000 chunks/s arrive while the
runner keeps dispatching. Prints the dispatch-lag distribution from each run's summary.json and the
median over runs, for Poisson and constant arrivals.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def start_server(tmp: Path) -> tuple[subprocess.Popen[bytes], int]:
    port_file = tmp / "port"
    proc = subprocess.Popen([sys.executable, str(HERE / "client_throughput.py"), "--serve", str(port_file)])
    deadline = time.monotonic() + 30
    while not port_file.exists() or not port_file.read_text():
        if time.monotonic() > deadline or proc.poll() is not None:
            raise RuntimeError("bench server did not start")
        time.sleep(0.05)
    return proc, int(port_file.read_text())


def one_run(port: int, arrival: str, args: argparse.Namespace, out: Path) -> dict[str, float]:
    goodput = str(Path(sys.executable).with_name("goodput"))
    cmd = [goodput, "run", "--url", f"http://127.0.0.1:{port}", "--model", "bench", "--arrival", arrival,
           "--rate", str(args.rate), "--duration", f"{args.duration}s", "--output-tokens", str(args.output_tokens),
           "--prompt-tokens", "64", "--extra-body", json.dumps({"interval_us": int(args.interval_ms * 1000)}),
           "--server-metrics", "none", "--quiet", "--output", str(out)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    summary = json.loads((out / "summary.json").read_text())
    lag = summary["latency"]["dispatch_lag_s"]
    return {"sent": summary["requests"]["sent"], "failed": summary["requests"]["failed"],
            "p50_ms": lag["p50"] * 1e3, "p99_ms": lag["p99"] * 1e3, "max_ms": lag["max"] * 1e3,
            "achieved_rps": summary["throughput"]["achieved_rps"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rate", type=float, default=200.0)
    ap.add_argument("--duration", type=float, default=20.0)
    ap.add_argument("--output-tokens", type=int, default=50)
    ap.add_argument("--interval-ms", type=float, default=5.0)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        server, port = start_server(tmp)
        try:
            for arrival in ("poisson", "constant"):
                runs = [one_run(port, arrival, args, tmp / f"{arrival}{i}") for i in range(args.repeat)]
                for r in runs:
                    print(f"{arrival}@{args.rate:g}: sent {r['sent']:.0f} failed {r['failed']:.0f} "
                          f"dispatched {r['achieved_rps']:.1f} req/s  lag p50 {r['p50_ms']:.3f} ms  "
                          f"p99 {r['p99_ms']:.3f} ms  max {r['max_ms']:.3f} ms")
                print(f"{arrival}@{args.rate:g} median of {args.repeat}: lag p50 "
                      f"{statistics.median(r['p50_ms'] for r in runs):.3f} ms, p99 "
                      f"{statistics.median(r['p99_ms'] for r in runs):.3f} ms")
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
