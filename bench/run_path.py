"""The run path end to end: `goodput run` as users run it (a subprocess), against a fast paced SSE server.

    .venv/bin/python bench/run_path.py --cases 1@200,1@500,16@200,64@50,64@200,256@50 --duration 6 --repeat 3

Each case is TOKENS@RATE: open-loop Poisson at RATE requests/s for `--duration` seconds, every request
streaming TOKENS one-token chunks, one every `--gap-ms` (bench/sse_server.py, in its own process). Cases
run alternated (one pass over all of them per repeat, the order rotated), and the table shows medians.
With `--variant`, every case runs once per tree in each pass, the trees' order rotated from pass to pass
too, so that no tree always runs first.
With `--pin` (the default on a machine with 2+ CPUs) the server runs on one CPU and goodput on another.

Per run, from the goodput process itself and the files it wrote:

- CPU: the process's whole rusage (start-up, run, report), and the CPU of the steady window (from 1 s
  after the anchor to the end of the schedule; sampled from /proc/PID/task/*/schedstat every 20 ms);
- start-up: process start (just before the fork) to the run's anchor (run.json `start_unix_s`), and to
  the first request written (anchor + its `sent_ns`; the schedule puts it at its first Poisson offset),
  with each tree's bytecode written beforehand as an installed package has it;
- start-up CPU: the process's CPU from its start to the anchor (interpolated from the samples above), which
  other processes on the machine disturb far less than the wall-clock start-up;
- dispatch lag d − a, p50/p99/max over all requests (records.jsonl);
- timing error per gap: client gap − the gap the server wrote (`server_chunk_s`), p50/p99 and p99 of
  |error|;
- the server's CPU per chunk and how late its writes were (its `/stats`), so it is seen not to limit.

Then the cost model over all runs: whole process cpu = a + b·requests + c·chunks, and the steady window
cpu = e·seconds + b'·requests + c'·chunks (e: per-second cost of an idle run, e.g. the progress tick).

`--floor` alternates every goodput run with `bench/run_path_floor.py` on the same CPU: the same schedule
and server with a client that does nothing but stamp reads. Its figures are what this machine allows (on
a virtual machine each wake-up from idle alone costs tens of µs of CPU); goodput's are read against them.
Before the runs, the machine's own noise: how late an idle 1 ms sleep wakes on goodput's CPU.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.run_path_figures import (  # noqa: E402 - the repository root goes on the path first
    cpu_at,
    dispatch_lag_ms,
    fit_cost,
    percentile,
    read_run_records,
    steady_window,
)
from bench.run_path_tables import FLOOR_COLUMNS, floor_row, header, print_fits, row  # noqa: E402

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Case:
    tokens: int
    rate: float

    @property
    def label(self) -> str:
        return f"{self.tokens}@{self.rate:g}"


def parse_variants(given: list[str]) -> dict[str, str | None]:
    """'this' (the checkout, as installed) plus NAME=PYTHONPATH source trees to compare with."""
    variants: dict[str, str | None] = {"this": None}
    for text in given:
        name, _, path = text.partition("=")
        if not name or not Path(path, "loadgen").is_dir():
            raise SystemExit(f"--variant wants NAME=PATH of a source tree, got {text!r}")
        variants[name] = str(Path(path).resolve())
    return variants


def rotated(items: list[T], rep: int) -> list[T]:
    """Pass `rep`'s order: the list rotated by `rep`, so that each item leads in turn."""
    k = rep % len(items)
    return items[k:] + items[:k]


def run_order(cases: list[Case], names: list[str], repeat: int) -> list[tuple[int, Case, list[str]]]:
    """(pass, case, the trees in the order they run it): both orders rotated from pass to pass, so that
    neither a case nor a tree always runs first, or always right after the same other tree."""
    return [(rep, case, rotated(names, rep)) for rep in range(repeat) for case in rotated(cases, rep)]


def parse_cases(text: str) -> list[Case]:
    cases = []
    for part in text.split(","):
        tokens, _, rate = part.partition("@")
        cases.append(Case(int(tokens), float(rate)))
    return cases


def describe_machine() -> list[str]:
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.processor())
    versions = ", ".join(f"{p} {metadata.version(p)}" for p in ("uvloop", "httpx", "orjson", "numpy",
                                                                 "prometheus_client", "typer"))
    commit = subprocess.run(["git", "-C", str(HERE.parent), "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip()
    return [f"machine: {cpu}, {os.cpu_count()} CPUs, Linux {platform.release()}, load average "
            f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}",
            f"python {platform.python_version()}; {versions}; goodput at {commit or '?'}"]


def start_server(tmp: Path, cpu: int | None) -> tuple[subprocess.Popen[bytes], int]:
    port_file = tmp / "port"
    cmd = [sys.executable, str(HERE / "sse_server.py"), "--port-file", str(port_file)]
    proc = subprocess.Popen([*cmd, "--cpu", str(cpu)] if cpu is not None else cmd)
    deadline = time.monotonic() + 30
    while not (port_file.exists() and port_file.read_text()):
        if time.monotonic() > deadline or proc.poll() is not None:
            raise SystemExit("the bench server did not start")
        time.sleep(0.05)
    return proc, int(port_file.read_text())


def server_stats(port: int) -> dict[str, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/stats")
    data: dict[str, Any] = json.loads(conn.getresponse().read())
    conn.close()
    return data


def task_cpu_ns(pid: int) -> int | None:
    """CPU time of every live thread of `pid` (ns), or None once it is gone."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
    except (FileNotFoundError, ProcessLookupError):
        return None
    return total


def wake_lateness_ms(seconds: float = 2.0) -> tuple[float, float]:
    """How late an idle 1 ms sleep wakes (p50, p99 in ms): the machine's own scheduling noise."""
    late = []
    stop = time.perf_counter() + seconds
    while time.perf_counter() < stop:
        before = time.perf_counter()
        time.sleep(0.001)
        late.append((time.perf_counter() - before) * 1e3 - 1.0)
    late.sort()
    return late[len(late) // 2], late[int(len(late) * 0.99)]


def floor_run(case: Case, args: argparse.Namespace, port: int, out: Path, cpu: int | None) -> dict[str, float]:
    cmd = [sys.executable, str(HERE / "run_path_floor.py"), "--port", str(port), "--rate", f"{case.rate:g}",
           "--tokens", str(case.tokens), "--duration", f"{args.duration:g}", "--gap-us",
           str(round(args.gap_ms * 1000)), "--first-us", str(round(args.first_ms * 1000)), "--out", str(out)]
    pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    subprocess.run(cmd, check=True, preexec_fn=pin)
    result: dict[str, float] = json.loads(out.read_text())
    result["us_per_chunk"] = result["cpu_s"] / result["chunks"] * 1e6
    result["us_per_request"] = result["cpu_s"] / result["requests"] * 1e6
    return result


def compile_sources(tree: Path) -> None:
    """Write the bytecode of a source tree's packages, as an installed package has it: without it (an
    environment with PYTHONDONTWRITEBYTECODE set, say) every run would compile them anew at start-up."""
    packages = [str(tree / name) for name in ("loadgen", "metrics", "exporters") if (tree / name).is_dir()]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", *packages], check=True, env=env,
                   stdout=subprocess.DEVNULL)


def goodput_command(case: Case, args: argparse.Namespace, port: int, out: Path) -> list[str]:
    body = {"bench_gap_us": round(args.gap_ms * 1000), "bench_first_us": round(args.first_ms * 1000)}
    return [str(Path(sys.executable).with_name("goodput")), "run", "--url", f"http://127.0.0.1:{port}",
            "--model", "bench", "--arrival", "poisson", "--rate", f"{case.rate:g}", "--duration",
            f"{args.duration:g}s", "--output-tokens", str(case.tokens), "--prompt-tokens", "16",
            "--tokenizer", "words", "--prompt-sizing", "counter", "--extra-body", json.dumps(body),
            "--server-metrics", "none", "--no-html", "--output", str(out)]


def one_run(case: Case, args: argparse.Namespace, port: int, out: Path, cpu: int | None,
            python_path: str | None = None) -> dict[str, float]:
    before = server_stats(port)
    load1 = os.getloadavg()[0]
    cmd = goodput_command(case, args, port, out)
    pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    wall0, perf0 = time.time(), time.perf_counter_ns()
    stderr = (out.parent / f"{out.name}.stderr").open("wb")
    env = dict(os.environ, PYTHONPATH=python_path) if python_path else None
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=stderr, preexec_fn=pin, env=env)
    samples: list[tuple[int, int]] = []
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        now, cpu_ns = time.perf_counter_ns(), task_cpu_ns(proc.pid)
        if cpu_ns is not None:
            samples.append((now, cpu_ns))
        time.sleep(0.02)
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr.close()
    wall = (time.perf_counter_ns() - perf0) / 1e9
    if proc.returncode != 0:
        tail = (out.parent / f"{out.name}.stderr").read_text()[-2000:]
        raise SystemExit(f"goodput run exited {proc.returncode}: {' '.join(cmd)}\n{tail}")
    after = server_stats(port)
    run = orjson.loads((out / "run.json").read_bytes())
    records = read_run_records(out / "records.jsonl")
    anchor_ns = perf0 + round((run["start_unix_s"] - wall0) * 1e9)  # the anchor on this process's clock
    window = steady_window(records, samples, anchor_ns, args.skip, args.duration)
    first = int(records.sent_ns[records.sent_ns >= 0].min())
    lag = dispatch_lag_ms(records)
    err = records.gap_error_ns / 1e6
    server_chunks = after["chunks"] - before["chunks"]
    return {
        "requests": float(records.intended_ns.size), "chunks": float(records.chunk_ns.size),
        "failed": float(records.failed), "cpu_s": usage.ru_utime + usage.ru_stime, "wall_s": wall,
        "startup_s": run["start_unix_s"] - wall0, "first_sent_s": run["start_unix_s"] - wall0 + first / 1e9,
        "startup_cpu_s": cpu_at(samples, anchor_ns),
        "win_s": window.seconds, "win_cpu_s": window.cpu_s, "win_requests": float(window.requests),
        "win_chunks": float(window.chunks),
        "win_us_per_chunk": window.cpu_s / window.chunks * 1e6 if window.chunks else float("nan"),
        "win_us_per_request": window.cpu_s / window.requests * 1e6 if window.requests else float("nan"),
        "lag_p50_ms": percentile(lag, 50), "lag_p99_ms": percentile(lag, 99), "lag_max_ms": float(lag.max()),
        "err_p50_ms": percentile(err, 50), "err_p99_ms": percentile(err, 99),
        "abs_err_p99_ms": percentile(abs(err), 99),
        "server_us_per_chunk": (after["cpu_s"] - before["cpu_s"]) / server_chunks * 1e6 if server_chunks else 0.0,
        "server_late_p99_ms": after["late_p99_ms"] or 0.0, "load1": load1,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="1@200,1@500,16@200,64@50,64@200,256@50", help="TOKENS@RATE, comma-separated")
    ap.add_argument("--duration", type=float, default=6.0, help="seconds of dispatch per run")
    ap.add_argument("--skip", type=float, default=1.0, help="seconds after the anchor left out of the steady window")
    ap.add_argument("--gap-ms", type=float, default=5.0, help="the server's gap between chunks")
    ap.add_argument("--first-ms", type=float, default=5.0, help="the server's time to the first chunk")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pin", action=argparse.BooleanOptionalAction, default=(os.cpu_count() or 1) >= 2,
                    help="server on CPU 1 (with this script), goodput on CPU 0")
    ap.add_argument("--floor", action="store_true", help="alternate each run with the floor client (see above)")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=PYTHONPATH",
                    help="also run goodput from another source tree (e.g. before=/tmp/before), alternated run by "
                         "run with this checkout ('this')")
    args = ap.parse_args()
    cases = parse_cases(args.cases)
    for line in describe_machine():
        print(line)
    server_cpu, goodput_cpu = (1, 0) if args.pin else (None, None)
    if server_cpu is not None:
        os.sched_setaffinity(0, {server_cpu})
    print(f"{args.repeat} alternated pass(es) over {len(cases)} cases, {args.duration:g} s each, gap "
          f"{args.gap_ms:g} ms; steady window from {args.skip:g} s; pinned: {args.pin}")
    if goodput_cpu is not None:
        os.sched_setaffinity(0, {goodput_cpu})
    p50, p99 = wake_lateness_ms()
    if server_cpu is not None:
        os.sched_setaffinity(0, {server_cpu})
    print(f"machine noise: an idle 1 ms sleep on goodput's CPU wakes late by p50 {p50:.3f} ms, p99 {p99:.3f} ms")
    variants = parse_variants(args.variant)
    for python_path in variants.values():
        compile_sources(Path(python_path) if python_path is not None else HERE.parent)
    results: dict[tuple[str, Case], list[dict[str, float]]] = {(v, c): [] for v in variants for c in cases}
    floors: dict[Case, list[dict[str, float]]] = {c: [] for c in cases}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        server, port = start_server(tmp, server_cpu)
        try:
            print(header())
            for rep, case, names in run_order(cases, list(variants), args.repeat):
                for name in names:
                    r = one_run(case, args, port, tmp / f"{name}-{case.label}-{rep}", goodput_cpu, variants[name])
                    results[name, case].append(r)
                    print(row(f"{name} {case.label}" if len(variants) > 1 else case.label, r), flush=True)
                if args.floor:
                    floors[case].append(floor_run(case, args, port, tmp / f"floor-{case.label}-{rep}.json",
                                                  goodput_cpu))
        finally:
            server.terminate()
            server.wait(timeout=10)
    for name in variants:
        print(f"{name}: medians of {args.repeat}" if len(variants) > 1 else f"medians of {args.repeat}:")
        print(header())
        for case in cases:
            runs = results[name, case]
            print(row(case.label, {k: statistics.median(r[k] for r in runs) for k in runs[0]}))
        print_fits([r for case in cases for r in results[name, case]])
    if args.floor:
        print(f"floor (bench/run_path_floor.py, the same load; whole run), medians of {args.repeat}:")
        print(f"{'case':>9} " + " ".join(f"{h:>{max(len(h), 7)}}" for _, h, _ in FLOOR_COLUMNS))
        for case, runs in floors.items():
            print(floor_row(case.label, {k: statistics.median(r[k] for r in runs) for k in runs[0]}))
        every = [r for runs in floors.values() for r in runs]
        e, b, c = fit_cost([r["cpu_s"] for r in every], [r["requests"] for r in every], [r["chunks"] for r in every],
                           intercept=[r["seconds"] for r in every])
        print(f"floor: cpu = {e * 1e3:.1f} ms/s + {b * 1e6:.0f} µs/request + {c * 1e6:.1f} µs/chunk")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
