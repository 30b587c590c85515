"""Time and peak memory of `goodput report` on a large synthetic run (default 100,000 requests × 200 chunks).

    .venv/bin/python bench/report_scale.py --requests 100000 --chunks 200 --repeat 3

Writes a records.jsonl with realistic shapes (Poisson arrivals, per-chunk running-usage token counts,
some multi-token chunks, 1% failures), then runs `goodput report DIR --quiet` in a child process:
`--repeat` times each, interleaved, on a finished run (metrics.prom present, so it stands) and as
after a SIGKILL (`--textfile`: metrics.prom rebuilt too), after one uncounted pass. Prints wall times and each child's peak resident memory.
`--breakdown` adds one child that times each stage of the report (parse, frame, summary, parquet on
its own thread, metrics.prom).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import orjson


def make_records(path: Path, n: int, chunks: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    intended = np.cumsum(rng.exponential(1e9 / 200, size=n)).astype(np.int64)
    with path.open("wb") as f:
        for i in range(n):
            sent = int(intended[i] + rng.integers(10_000, 200_000))
            ttft = int(rng.integers(20_000_000, 400_000_000))
            gaps = rng.integers(5_000_000, 40_000_000, size=chunks - 1)
            times = (sent + ttft + np.concatenate(([0], np.cumsum(gaps)))).tolist()
            tokens = np.where(rng.random(chunks) < 0.05, 2, 1).tolist()
            failed = rng.random() < 0.01
            rec = {
                "id": i, "intended_ns": int(intended[i]), "sent_ns": sent,
                "status": "error" if failed else "ok", "error_kind": "http_status" if failed else None,
                "http_status": 500 if failed else 200,
                "chunk_ns": [] if failed else times, "chunk_tokens": None if failed else tokens,
                "token_source": "usage_delta", "output_tokens": None if failed else int(sum(tokens)),
                "output_tokens_estimated": False, "prompt_tokens": int(rng.integers(64, 4096)),
                "prompt_tokens_estimated": False, "prompt_tokens_target": 512,
                "cached_tokens": int(rng.integers(0, 64)), "finish_reason": None if failed else "length",
                "first_byte_ns": sent + 1_000_000, "closed_ns": (times[-1] if not failed else sent) + 100_000,
                "output_tokens_target": chunks, "tags": {"scenario": f"s{i % 3}"}, "server_chunk_s": None,
                "server": None, "worker": 0,
            }
            f.write(orjson.dumps(rec, option=orjson.OPT_APPEND_NEWLINE))
    (path.parent / "run.json").write_text(json.dumps({
        "target": "synthetic", "model": "synthetic", "load": "poisson@200.00", "complete": True,
        "settings": {"slo": ["ttft=300ms", "tpot=30ms"]},
    }))


BREAKDOWN = """
import sys, time, json, resource
from pathlib import Path
t0 = time.perf_counter()
from loadgen.run import outputs
from loadgen.run import prometheus as prom_run
run_dir = Path(sys.argv[1])
def timed(module, name):
    inner = getattr(module, name)
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            print(f"  {name:24s} {time.perf_counter() - start:6.2f} s", flush=True)
    setattr(module, name, wrapper)
for name in ("read_records_checked", "frame_from_table", "summarize_frame", "write_records_parquet"):
    timed(outputs, name)
print(f"  {'imports':24s} {time.perf_counter() - t0:6.2f} s")
run = json.loads((run_dir / "run.json").read_text())
built = outputs.build_outputs(run_dir, run)
start = time.perf_counter()
prom_run.rebuild_textfile(run_dir, built.frame, run, built.gap_samples)
print(f"  {'metrics.prom':24s} {time.perf_counter() - start:6.2f} s")
print(f"  {'total':24s} {time.perf_counter() - t0:6.2f} s, peak RSS "
      f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB")
"""


def machine_reference() -> str:
    """Two fixed CPU tasks, so figures from different hours can be told apart by the machine's state."""
    values = np.random.default_rng(0).integers(0, 1 << 40, 20_000_000)
    sort = min(_timed(lambda: np.sort(values)) for _ in range(3))
    def loop() -> None:
        total = 0
        for i in range(3_000_000):
            total += i
    return f"machine reference: numpy sort of 20 M int64 {sort * 1e3:.0f} ms, Python loop of 3 M adds {_timed(loop) * 1e3:.0f} ms"


def _timed(task: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    task()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=100_000)
    ap.add_argument("--chunks", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--breakdown", action="store_true", help="also time each stage in one child")
    args = ap.parse_args()
    print(machine_reference())
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp)
        t0 = time.perf_counter()
        make_records(run_dir / "records.jsonl", args.requests, args.chunks)
        size = (run_dir / "records.jsonl").stat().st_size
        print(f"wrote {args.requests} records × {args.chunks} chunks ({size / 2**20:.0f} MiB) in {time.perf_counter() - t0:.1f} s")
        def report(*extra: str) -> tuple[float, float]:
            probe = ("import resource, sys; from loadgen.cli import run_cli; code = run_cli(sys.argv[1:]); "
                     "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr); sys.exit(code)")
            t0 = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", probe, "report", str(run_dir), "--quiet", *extra],
                                  check=True, stderr=subprocess.PIPE, text=True)
            return time.perf_counter() - t0, int(done.stderr.strip().splitlines()[-1]) / 2**20  # KiB → GiB

        if args.breakdown:
            subprocess.run([sys.executable, "-c", BREAKDOWN, str(run_dir)], check=True)
        report()  # a first pass, not counted: it writes the outputs and settles the file in the page cache
        finished, killed = [], []
        for _ in range(args.repeat):  # interleaved, so both cases see the same machine
            finished.append(report())
            killed.append(report("--textfile"))  # as after a SIGKILL: metrics.prom rebuilt too
        for name, runs in (("finished run", finished), ("killed run, metrics.prom rebuilt", killed)):
            walls = [w for w, _ in runs]
            print(f"goodput report ({name}): wall median {statistics.median(walls):.2f} s "
                  f"(runs: {', '.join(f'{w:.2f}' for w in walls)}), peak RSS {max(p for _, p in runs):.2f} GiB")


if __name__ == "__main__":
    main()
