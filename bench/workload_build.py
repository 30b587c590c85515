"""Time to build a run's workload: a 100,000-request trace and 10,000 conversations of 8 turns.

    .venv/bin/python bench/workload_build.py                       # both, 3 repeats each
    .venv/bin/python bench/workload_build.py --requests 100000 --sessions 10000 --turns 8 --repeat 3

Build = everything `goodput run` does before its first request (loadgen.run.setup.plan_run): read and
check the trace, draw the schedule, make the workload. Prompt text is made lazily, one request (or one
session) at a time just before it is sent, so the figures beside the build are the cost per request of
that: the mean over the first `--sample` requests, which the runner pays ahead of each send time (never
as dispatch lag) and which bounds the rate one process can sustain.

The trace is written first (not timed), Mooncake-shaped: Poisson arrivals, input lengths around 7,500
tokens (about 15 blocks of 512, the first few shared among a pool of documents), outputs around 300.
Target: build ≤ 5 s for each.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np


def write_trace(path: Path, requests: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.exponential(36.0, requests))  # ms: ~28 requests/s
    own = 10_000_000
    with path.open("w") as f:
        for i in range(requests):
            blocks = int(np.clip(rng.normal(15, 5), 1, 60))
            doc, shared = int(rng.integers(2000)), int(rng.integers(0, min(blocks, 8) + 1))
            ids = [doc * 100 + j for j in range(shared)] + list(range(own, own + blocks - shared))
            own += blocks - shared
            length = blocks * 512 - int(rng.integers(0, 512))
            f.write(json.dumps({"timestamp": int(t[i]), "input_length": length,
                                "output_length": int(rng.integers(50, 600)), "hash_ids": ids}) + "\n")


def timed_build(options: dict[str, object], sample: int, session: bool) -> tuple[float, float]:
    """(seconds to plan the run, seconds per request or session made) for `goodput run` with these options."""
    from loadgen.cli.run import run_defaults
    from loadgen.run import plan_run
    from loadgen.spec.build import build_spec
    from loadgen.workload.traces import _load_cached

    _load_cached.cache_clear()  # time the read, not the cache
    spec, secrets = build_spec({**run_defaults(), **options})
    start = time.perf_counter()
    setup = plan_run(spec, secrets)
    build = time.perf_counter() - start
    w = setup.workload
    start = time.perf_counter()
    for i in range(sample):
        w.session(i) if session else w.item(i)  # type: ignore[union-attr]
    per = (time.perf_counter() - start) / sample
    return build, per


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--requests", type=int, default=100_000)
    p.add_argument("--sessions", type=int, default=10_000)
    p.add_argument("--turns", type=int, default=8)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--sample", type=int, default=2000)
    a = p.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace.jsonl"
        write_trace(trace, a.requests)
        size = trace.stat().st_size / 1e6
        runs = [timed_build({"trace": str(trace)}, a.sample, False) for _ in range(a.repeat)]
        build = statistics.median(r[0] for r in runs)
        per = statistics.median(r[1] for r in runs)
        print(f"trace of {a.requests} requests ({size:.1f} MB Mooncake JSONL): build {build:.2f} s (median of "
              f"{a.repeat}); prompt per request {per * 1e3:.2f} ms (bytes counter, ~7.5k tokens)")
        for counter in ("words",):
            runs = [timed_build({"trace": str(trace), "tokenizer": counter}, a.sample, False)
                    for _ in range(a.repeat)]
            print(f"  with --tokenizer {counter}: build {statistics.median(r[0] for r in runs):.2f} s; prompt per "
                  f"request {statistics.median(r[1] for r in runs) * 1e3:.2f} ms")
    options = {"turns": str(a.turns), "requests": a.sessions, "prompt_tokens": "256", "output_tokens": "128"}
    runs = [timed_build(options, min(a.sample, a.sessions), True) for _ in range(a.repeat)]
    build = statistics.median(r[0] for r in runs)
    per = statistics.median(r[1] for r in runs)
    print(f"{a.sessions} conversations of {a.turns} turns: build {build:.3f} s; plan per session (all "
          f"{a.turns} turns' messages) {per * 1e3:.2f} ms, {per * a.sessions:.1f} s for every session")


if __name__ == "__main__":
    main()
