"""What an idle wait costs the code that runs after it: the same work, back to back and after a sleep.

    .venv/bin/python bench/cold_wake.py --idle-ms 5 --calls 300

A load generator at a modest rate spends most of its time idle between reads and sends, so nearly every
piece of its work runs right after a wake-up. On a virtual machine an idle CPU may be handed to another
guest, which evicts this process's caches; the first work after the wake-up then runs at a fraction of its
speed. This script times three pieces of goodput's per-request work (building one synthetic request,
drawing its generator, encoding a record) called back to back (warm) and each after an idle sleep of
`--idle-ms` on the event loop (cold), and a batch of 8 requests built after one sleep (per request).
The ratio cold/warm is what this machine charges for waking up; on a quiet physical machine it is near 1.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import uvloop

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root, for its packages

from loadgen.dispatch import encode_record
from loadgen.seeds import item_rng
from loadgen.workload.lengths import parse_length
from loadgen.workload.sources import SyntheticWorkload
from loadgen.workload.text import WordCounter
from metrics.records.record import RequestRecord


def pieces() -> dict[str, Callable[[int], object]]:
    workload = SyntheticWorkload(parse_length("16"), parse_length("64"), 0, "words", WordCounter())
    record = RequestRecord(id=1, intended_ns=1_000, sent_ns=2_000, chunk_ns=list(range(64)),
                           chunk_tokens=[1] * 64, output_tokens=64, prompt_tokens=16)
    return {
        "build one request (16 words)": workload.item,
        "its generator alone": lambda i: item_rng(0, i),
        "encode one record (64 chunks)": lambda i: encode_record(record),
    }


async def timed(fn: Callable[[int], object], calls: int, idle_s: float, batch: int = 1) -> float:
    """Median µs per call: `batch` calls after each idle sleep (idle_s 0: back to back)."""
    times = []
    for n in range(calls):
        if idle_s:
            await asyncio.sleep(idle_s)
        t = time.perf_counter_ns()
        for b in range(batch):
            fn(n * batch + b)
        times.append((time.perf_counter_ns() - t) / batch / 1000)
    return statistics.median(times)


async def main(args: argparse.Namespace) -> None:
    idle_s = args.idle_ms / 1000
    print(f"{'work':32} {'warm µs':>9} {'cold µs':>9} {'cold/warm':>9}")
    for name, fn in pieces().items():
        await timed(fn, 50, 0)  # imports and first-call costs out of the way
        warm = await timed(fn, args.calls, 0)
        cold = await timed(fn, args.calls, idle_s)
        print(f"{name:32} {warm:9.1f} {cold:9.1f} {cold / warm:9.1f}")
    build = pieces()["build one request (16 words)"]
    warm = await timed(build, args.calls, 0)
    batched = await timed(build, args.calls // 4, idle_s, batch=8)
    print(f"{'build 8 requests after one wait':32} {warm:9.1f} {batched:9.1f} {batched / warm:9.1f}  (per request)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--idle-ms", type=float, default=5.0, help="idle sleep before each cold call")
    ap.add_argument("--calls", type=int, default=300)
    uvloop.run(main(ap.parse_args()))
