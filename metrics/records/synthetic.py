"""A synthetic records.jsonl of any size: test data for the record readers and input for benchmarks.

    .venv/bin/python -m metrics.records.synthetic OUT.jsonl --requests 100000 --chunks 200

Seeded, so every run measures the same file. Most requests succeed; a few fail mid-stream or are
cancelled; chunk gaps are gamma-distributed around 20 ms with rare stalls; prompt sizes, cache hits and
tags spread over every bucket dimension.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import orjson

from metrics.records.record import Status
from metrics.records.record_check import RecordLine


def write_synthetic(path: str | Path, *, requests: int, chunks: int, seed: int = 0, server: bool = True) -> None:
    """Write `requests` records of `chunks` one-token chunks each to `path` (replacing it)."""
    rng = np.random.default_rng(seed)
    scenarios = ("chat", "rag", "code")
    with Path(path).open("wb") as f:
        for i in range(requests):
            a = i * 10_000_000  # 100 req/s intended
            d = a + int(rng.integers(50_000, 2_000_000))
            ttft = int(rng.gamma(2.0, 0.05) * 1e9)
            gaps = (rng.gamma(4.0, 0.005, chunks - 1) * 1e9).astype(np.int64)
            if rng.random() < 0.01:
                gaps[rng.integers(0, chunks - 1)] += 1_500_000_000
            times = d + ttft + np.concatenate(([0], np.cumsum(gaps)))
            status: Status = "ok"
            kind = None
            roll = rng.random()
            if roll < 0.02:
                status, kind = "error", "timeout_between_chunks"
            elif roll < 0.025:
                status, kind = "cancelled", "client_cancelled"
            prompt = int(rng.choice([64, 300, 1000, 4000, 12000, 40000]))
            cached = None if rng.random() < 0.3 else int(rng.choice([0, prompt // 2, prompt]))
            rec: RecordLine = {
                "id": i,
                "intended_ns": a,
                "sent_ns": d,
                "status": status,
                "error_kind": kind,
                "chunk_ns": times.tolist(),
                "chunk_tokens": [1] * chunks,
                "token_source": "server",
                "output_tokens": chunks,
                "output_tokens_estimated": False,
                "prompt_tokens": prompt,
                "prompt_tokens_estimated": False,
                "prompt_tokens_target": prompt - int(rng.integers(0, 5)),
                "cached_tokens": cached,
                "closed_ns": int(times[-1]) + 100_000,
                "tags": {"scenario": scenarios[i % 3]},
                "server_chunk_s": ((times - d - 1_000_000) / 1e9).round(6).tolist() if server else None,
                "server": {"queue_s": 0.001, "prefill_s": 0.02, "decode_s": 1.0} if server else None,
            }
            f.write(orjson.dumps(rec, option=orjson.OPT_APPEND_NEWLINE))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out")
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--chunks", type=int, default=200)
    parser.add_argument("--no-server", action="store_true")
    args = parser.parse_args()
    write_synthetic(args.out, requests=args.requests, chunks=args.chunks, server=not args.no_server)


if __name__ == "__main__":
    main()
