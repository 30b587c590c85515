"""Time and peak memory of summarising a large run, by both read paths (not a test; run by hand).

    .venv/bin/python bench/summary_read_paths.py /tmp/big.jsonl --requests 100000 --chunks 200 --path frame
    .venv/bin/python bench/summary_read_paths.py /tmp/big.jsonl --path records

`frame` reads records.jsonl straight into columns (metrics.records.frame.frame_from_jsonl); `records` builds
RequestRecord objects first (metrics.records.record.read_records), as a caller holding records would. Run each
path in its own process so that peak RSS is that path's alone. The file is generated once if missing.
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

from metrics.records.frame import frame_from_jsonl
from metrics.records.record import read_records
from metrics.records.synthetic import write_synthetic
from metrics.slo import parse_slo
from metrics.summary.build import SummaryConfig, summarize


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("file")
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--chunks", type=int, default=200)
    parser.add_argument("--path", choices=("frame", "records"), default="frame")
    args = parser.parse_args()
    if not Path(args.file).exists():
        write_synthetic(args.file, requests=args.requests, chunks=args.chunks)
    config = SummaryConfig(slo=parse_slo(["ttft=500ms", "tpot=30ms", "fluidity=0.9"]), warmup_s=1, cooldown_s=1)
    wall, cpu = time.perf_counter(), time.process_time()
    data = frame_from_jsonl(args.file) if args.path == "frame" else read_records(args.file)
    read_wall, read_cpu = time.perf_counter() - wall, time.process_time() - cpu
    wall, cpu = time.perf_counter(), time.process_time()
    summary = summarize(data, config, {})
    sum_wall, sum_cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"path={args.path} requests={summary['requests']['sent']} itl_samples={summary['latency']['itl_s']['count']} "
        f"read: {read_wall:.2f} s wall / {read_cpu:.2f} s cpu; summarize: {sum_wall:.2f} s wall / {sum_cpu:.2f} s cpu; "
        f"peak RSS {peak_mb:.0f} MB"
    )


if __name__ == "__main__":
    main()
