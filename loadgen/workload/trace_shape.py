"""A trace's shape, as `goodput trace inspect` prints it: how many requests over how long, the mean and
peak rate per minute, the prompt (ISL) and output (OSL) length percentiles, and its blocks."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from loadgen.workload.traces import Trace


def _lengths(values: npt.NDArray[np.int64]) -> dict[str, float]:
    p50, p90, p99 = np.percentile(values, [50, 90, 99])
    return {"mean": float(values.mean()), "p50": float(p50), "p90": float(p90), "p99": float(p99),
            "min": float(values.min()), "max": float(values.max())}


def peak_per_minute(arrival_s: npt.NDArray[np.float64]) -> int:
    """The most requests in any 60-second span starting at a request (a sliding window)."""
    if arrival_s.size == 0:
        return 0
    ends = np.searchsorted(arrival_s, arrival_s + 60.0, side="left")
    return int((ends - np.arange(arrival_s.size)).max())


def trace_shape(trace: Trace) -> dict[str, Any]:
    duration = float(trace.arrival_s[-1] - trace.arrival_s[0]) if trace.n else 0.0
    out: dict[str, Any] = {
        "path": trace.path,
        "format": trace.format,
        "requests": trace.n,
        "duration_s": duration,
        "mean_rate_per_min": (trace.n - 1) / duration * 60 if duration > 0 else None,
        "peak_rate_per_min": peak_per_minute(trace.arrival_s),
        "input_tokens": _lengths(trace.input_tokens),
        "output_tokens": _lengths(trace.output_tokens),
    }
    if trace.hash_ids is not None:
        out["blocks"] = {"block_tokens": trace.block_tokens, "total": int(trace.hash_ids.size),
                         "unique": int(np.unique(trace.hash_ids).size)}
    return out
