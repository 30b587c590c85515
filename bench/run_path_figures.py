"""The figures of `bench/run_path.py`, computed from what one `goodput run` left behind (pure functions).

- dispatch lag d − a per request, from records.jsonl;
- timing error per gap: the gap the client measured between two content chunks minus the gap the server
  wrote them with (`server_chunk_s`, the bench server's `goodput.t` stamps);
- the steady-state window: CPU, requests sent and chunks received between two instants of the run;
- the cost model fitted over several runs: cpu = a + b·requests + c·chunks (least squares).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson


@dataclass(slots=True)
class RunRecords:
    """The columns of one run's records.jsonl the bench needs (ns since the run's anchor)."""

    intended_ns: np.ndarray
    sent_ns: np.ndarray  # -1 where never sent
    chunk_ns: np.ndarray  # every content chunk of every request, flattened
    gap_error_ns: np.ndarray  # client gap − server gap, every gap of every ok request
    ok: int
    failed: int


def read_run_records(path: Path) -> RunRecords:
    intended, sent, chunks, errors = [], [], [], []
    ok = failed = 0
    with path.open("rb") as f:
        for line in f:
            r = orjson.loads(line)
            intended.append(r["intended_ns"])
            sent.append(-1 if r["sent_ns"] is None else r["sent_ns"])
            if r["status"] != "ok":
                failed += 1
                continue
            ok += 1
            c = r["chunk_ns"]
            chunks.extend(c)
            errors.append(gap_errors_ns(c, r.get("server_chunk_s")))
    return RunRecords(intended_ns=np.asarray(intended, dtype=np.int64), sent_ns=np.asarray(sent, dtype=np.int64),
                      chunk_ns=np.asarray(chunks, dtype=np.int64),
                      gap_error_ns=np.concatenate(errors) if errors else np.zeros(0), ok=ok, failed=failed)


def gap_errors_ns(client_ns: Sequence[int], server_s: Sequence[float] | None) -> np.ndarray:
    """Per gap between consecutive content chunks: client-measured gap − the server's written gap (ns)."""
    if server_s is None or len(server_s) != len(client_ns) or len(client_ns) < 2:
        return np.zeros(0)
    client = np.diff(np.asarray(client_ns, dtype=np.float64))
    server = np.diff(np.asarray(server_s, dtype=np.float64)) * 1e9
    errors: np.ndarray = client - server
    return errors


def dispatch_lag_ms(records: RunRecords) -> np.ndarray:
    sent = records.sent_ns >= 0
    lag: np.ndarray = (records.sent_ns[sent] - records.intended_ns[sent]) / 1e6
    return lag


def percentile(values: np.ndarray, q: float) -> float:
    return float(np.percentile(values, q)) if values.size else float("nan")


def cpu_at(samples: Sequence[tuple[int, int]], t_ns: int) -> float:
    """A process's CPU seconds at instant `t_ns`, interpolated between (instant, CPU ns) samples."""
    times = np.asarray([s[0] for s in samples], dtype=np.float64)
    cpu = np.asarray([s[1] for s in samples], dtype=np.float64)
    return float(np.interp(t_ns, times, cpu)) / 1e9


@dataclass(slots=True)
class Window:
    seconds: float
    cpu_s: float
    requests: int  # requests sent inside the window
    chunks: int  # content chunks received inside the window


def steady_window(records: RunRecords, samples: Sequence[tuple[int, int]], anchor_ns: int, start_s: float,
                  end_s: float) -> Window:
    """CPU and work between `start_s` and `end_s` after the anchor; `samples` on the same clock as the anchor."""
    lo, hi = round(start_s * 1e9), round(end_s * 1e9)
    sent = records.sent_ns
    requests = int(((sent >= lo) & (sent < hi)).sum())
    chunks = int(((records.chunk_ns >= lo) & (records.chunk_ns < hi)).sum())
    cpu = cpu_at(samples, anchor_ns + hi) - cpu_at(samples, anchor_ns + lo)
    return Window(seconds=end_s - start_s, cpu_s=cpu, requests=requests, chunks=chunks)


def fit_cost(cpu_s: Sequence[float], requests: Sequence[float], chunks: Sequence[float], *,
             intercept: Sequence[float] | None = None) -> tuple[float, float, float]:
    """Least-squares (a, b, c) of cpu = a·intercept + b·requests + c·chunks (intercept 1 per run when None;
    the window's seconds for a steady-state fit). Needs runs that vary requests and chunks independently."""
    ones = np.ones(len(cpu_s)) if intercept is None else np.asarray(intercept, dtype=np.float64)
    design = np.column_stack([ones, np.asarray(requests, dtype=np.float64), np.asarray(chunks, dtype=np.float64)])
    (a, b, c), *_ = np.linalg.lstsq(design, np.asarray(cpu_s, dtype=np.float64), rcond=None)
    return float(a), float(b), float(c)
