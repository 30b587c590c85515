"""Run directories for the HTML report's tests, written the way `goodput run` writes them and summarised by
the real pipeline (loadgen.run.outputs), so a test can hold the report's numbers to summary.json's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from exporters.html.run_data import RunData
from exporters.html.write import load_run_data
from loadgen.run.outputs import run_summary_config, write_outputs
from metrics.records.record import RequestRecord
from metrics.results import RunDocument
from tests.exporters._records import MS, random_records

RUN: dict[str, Any] = {
    "target": "http://127.0.0.1:1", "model": "tiny", "load": "poisson@20.00", "open_loop": True, "requests": 0,
    "complete": True, "start_unix_s": 1_700_000_000.0,
    "settings": {"slo": ["ttft=150ms", "tpot=20ms"], "warmup_s": 0.5, "stall_threshold_s": 1.0},
}


def with_server_timing(records: list[RequestRecord], seed: int = 1) -> list[RequestRecord]:
    """The same records, stamped by a server clock that runs 1–5 ms behind the client's, with phases."""
    rng = np.random.default_rng(seed)
    for r in records:
        if r.status != "ok" or not r.chunk_ns or r.sent_ns is None:
            continue
        lag = float(rng.uniform(0.001, 0.005))
        r.server_chunk_s = [(c - r.sent_ns) / 1e9 - lag for c in r.chunk_ns]
        r.server = {"queue_s": float(rng.uniform(0, 0.01)), "prefill_s": float(rng.uniform(0.01, 0.05)),
                    "decode_s": (r.chunk_ns[-1] - r.chunk_ns[0]) / 1e9}
    return records


def write_run(path: Path, records: list[RequestRecord], run: dict[str, Any] | None = None,
              server_series: list[dict[str, Any]] | None = None) -> Path:
    """A run directory with records.jsonl, run.json and the summary the pipeline builds from them."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "records.jsonl").write_bytes(b"".join(r.to_json() for r in records))
    info = json.loads(json.dumps(run or RUN))
    info["requests"] = len(records)
    (path / "run.json").write_text(json.dumps(info))
    if server_series is not None:
        (path / "server_metrics.jsonl").write_text("".join(json.dumps(row) + "\n" for row in server_series))
    write_outputs(path, info)
    return path


def sample_run(path: Path, n: int = 400, *, error_every: int = 7, seed: int = 0) -> tuple[RunData, dict[str, Any]]:
    """A run of `n` random requests (every `error_every`-th failing), and its summary.json."""
    run_dir = write_run(path, with_server_timing(random_records(n, seed=seed, error_every=error_every)))
    summary = json.loads((run_dir / "summary.json").read_text())
    return load_run_data(run_dir, run_summary_config(RunDocument.from_json(summary["run"]))), summary


__all__ = ["MS", "RUN", "sample_run", "with_server_timing", "write_run"]
