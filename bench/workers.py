"""`goodput run --workers N` as users run it: chunks/s, CPU per chunk and timing error against the number of
workers, at a few open-loop rates, against a paced SSE server in its own process (bench/sse_server.py).

Per run (a `goodput run` subprocess, parent and workers together):
- chunks/s: content chunks received over the measurement window (summary.json), and the offered rate;
- CPU µs per chunk: the CPU time of the `goodput run` process tree (its children's rusage, read once it
  exited) divided by the chunks it received, start-up and report included; with two `--durations`, also
  the marginal cost (the difference in CPU over the difference in chunks between the long and the short
  run), which leaves the start-up of the processes and the report out;
- dispatch lag p50/p99 (summary.json) and timing error per gap: the gap the client measured between two
  content chunks minus the gap the server wrote them with (its `goodput.t` stamps), p50 and p99 of |error|.

Usage:  .venv/bin/python bench/workers.py --workers 1,2 --rates 100,200 --tokens 64 --gap-us 2000 --durations 4,12
Prints the machine and one line per (workers, rate); `--json FILE` keeps the rows.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import orjson

HERE = Path(__file__).resolve().parent
GOODPUT = str(Path(sys.executable).with_name("goodput"))


def machine() -> str:
    model = "?"
    with open("/proc/cpuinfo") as f:  # Linux; elsewhere the platform string only
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return (f"{platform.system()} {platform.release()}, {os.cpu_count()} cores ({model}), "
            f"Python {platform.python_version()}")


def start_server(tmp: Path) -> tuple[subprocess.Popen[bytes], int]:
    port_file = tmp / "port"
    proc = subprocess.Popen([sys.executable, str(HERE / "sse_server.py"), "--port-file", str(port_file)])
    deadline = time.monotonic() + 30
    while not port_file.exists() or not port_file.read_text():
        if time.monotonic() > deadline or proc.poll() is not None:
            raise RuntimeError("bench server did not start")
        time.sleep(0.05)
    return proc, int(port_file.read_text())


def gap_errors_ms(records: Path) -> np.ndarray:
    errors = []
    with records.open("rb") as f:
        for line in f:
            r = orjson.loads(line)
            server = r.get("server_chunk_s")
            if r["status"] != "ok" or not server or len(server) != len(r["chunk_ns"]):
                continue
            client = np.diff(np.asarray(r["chunk_ns"], dtype=np.float64))
            errors.append(client - np.diff(np.asarray(server, dtype=np.float64)) * 1e9)
    return np.abs(np.concatenate(errors)) / 1e6 if errors else np.zeros(1)


def one_run(port: int, workers: int, rate: float, duration: float, args: argparse.Namespace,
            out: Path) -> dict[str, float]:
    cmd = [GOODPUT, "run", "--url", f"http://127.0.0.1:{port}", "--model", "bench", "--tokenizer", "words",
           "--server-metrics", "none", "--quiet", "--no-html", "--rate", str(rate), "--duration", f"{duration}s",
           "--output-tokens", str(args.tokens), "--prompt-tokens", "16", "--workers", str(workers),
           "--extra-body", json.dumps({"bench_first_us": args.gap_us, "bench_gap_us": args.gap_us}),
           "--output", str(out)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    summary = json.loads((out / "summary.json").read_text())
    chunks = sum(len(orjson.loads(line)["chunk_ns"]) for line in (out / "records.jsonl").open("rb"))
    window_s = summary["run"]["window"]["duration_s"] or duration
    lag = summary["latency"]["dispatch_lag_s"]
    err = gap_errors_ms(out / "records.jsonl")
    return {"workers": workers, "rate": rate, "duration_s": duration, "chunks": chunks, "chunks_per_s": chunks / window_s, "cpu_us_per_chunk": cpu_s / chunks * 1e6,
            "cpu_s": cpu_s, "failed": summary["requests"]["failed"], "lag_p50_ms": lag["p50"] * 1e3,
            "lag_p99_ms": lag["p99"] * 1e3, "gap_err_p50_ms": float(np.percentile(err, 50)),
            "gap_err_p99_ms": float(np.percentile(err, 99))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--rates", default="100,200")
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--gap-us", type=int, default=2000)
    ap.add_argument("--durations", default="4,12", help="one duration, or a short and a long one (marginal cost)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    print(machine())
    durations = [float(d) for d in args.durations.split(",")]
    print(f"open-loop Poisson, {args.tokens} one-token chunks per request every {args.gap_us} µs, "
          f"runs of {' and '.join(f'{d:g}' for d in durations)} s")
    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        server, port = start_server(tmp)
        try:
            for rate in (float(r) for r in args.rates.split(",")):
                for workers in (int(w) for w in args.workers.split(",")):
                    runs = [one_run(port, workers, rate, d, args, tmp / f"w{workers}-r{rate:g}-d{d:g}")
                            for d in durations]
                    row = runs[-1]
                    if len(runs) == 2:
                        short, long = runs
                        row["marginal_cpu_us_per_chunk"] = ((long["cpu_s"] - short["cpu_s"])
                                                            / (long["chunks"] - short["chunks"]) * 1e6)
                    rows.append(row)
                    marginal = row.get("marginal_cpu_us_per_chunk")
                    print(f"workers {workers}  rate {rate:6.0f}/s  {row['chunks_per_s']:8.0f} chunks/s  "
                          f"CPU {row['cpu_us_per_chunk']:5.1f} µs/chunk"
                          + (f" (marginal {marginal:5.1f})" if marginal is not None else "")
                          + f"  dispatch lag p50/p99 {row['lag_p50_ms']:.2f}/{row['lag_p99_ms']:.2f} ms  gap error "
                          f"|p50|/|p99| {row['gap_err_p50_ms']:.3f}/{row['gap_err_p99_ms']:.3f} ms  "
                          f"failed {row['failed']}", flush=True)
        finally:
            server.terminate()
            server.wait()
    if args.json is not None:
        args.json.write_text(json.dumps({"machine": machine(), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
