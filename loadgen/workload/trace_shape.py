"""A trace's shape, as `goodput trace inspect` prints it: how many requests over how long, the mean and
peak rate per minute, the prompt (ISL) and output (OSL) length percentiles, and its blocks.

The mean rate is taken over the trace's span (first to last request); the peak over the busiest window of
at most 60 s (`peak_window_s`), so that the peak is never below the mean, even for a trace shorter than
a minute."""

from __future__ import annotations

import math
from typing import NotRequired, TypedDict

import numpy as np
import numpy.typing as npt

from loadgen.workload.traces import Trace


class Lengths(TypedDict):
    mean: float
    p50: float
    p90: float
    p99: float
    min: float
    max: float


class Blocks(TypedDict):
    block_tokens: int
    total: int
    unique: int


class TraceShape(TypedDict):
    path: str
    format: str
    requests: int
    duration_s: float
    mean_rate_per_min: float | None
    peak_rate_per_min: float | None
    peak_window_s: float | None
    input_tokens: Lengths
    output_tokens: Lengths
    blocks: NotRequired[Blocks]


def _lengths(values: npt.NDArray[np.int64]) -> Lengths:
    p50, p90, p99 = np.percentile(values, [50, 90, 99])
    return {"mean": float(values.mean()), "p50": float(p50), "p90": float(p90), "p99": float(p99),
            "min": float(values.min()), "max": float(values.max())}


def peak_window_s(duration_s: float) -> float:
    """The window the peak rate is measured over: the trace's span cut into equal windows of at most 60 s
    (the whole span when it is shorter than a minute; 45 s windows for a 90 s trace)."""
    return duration_s / math.ceil(duration_s / 60.0)


def peak_per_minute(arrival_s: npt.NDArray[np.float64]) -> float | None:
    """The highest rate, per minute, over any window of `peak_window_s` starting at a request; None when
    every request arrives at one instant.

    Never below the mean rate over the span ((n − 1) / span): the span is covered by windows of that length,
    one of which holds at least n / (their number) requests, a rate of at least n / span.
    """
    if arrival_s.size < 2:
        return None
    duration = float(arrival_s[-1] - arrival_s[0])
    if duration <= 0:
        return None
    window = peak_window_s(duration)
    # A window is closed at its end; the margin keeps a request at the very end in despite rounding.
    ends = np.searchsorted(arrival_s, arrival_s + window * (1 + 1e-12), side="right")
    most = int((ends - np.arange(arrival_s.size)).max())
    return most / window * 60.0


def trace_shape(trace: Trace) -> TraceShape:
    duration = float(trace.arrival_s[-1] - trace.arrival_s[0]) if trace.n else 0.0
    out: TraceShape = {
        "path": trace.path,
        "format": trace.format,
        "requests": trace.n,
        "duration_s": duration,
        "mean_rate_per_min": (trace.n - 1) / duration * 60 if duration > 0 else None,
        "peak_rate_per_min": peak_per_minute(trace.arrival_s),
        "peak_window_s": peak_window_s(duration) if duration > 0 else None,
        "input_tokens": _lengths(trace.input_tokens),
        "output_tokens": _lengths(trace.output_tokens),
    }
    if trace.hash_ids is not None:
        out["blocks"] = {"block_tokens": trace.block_tokens, "total": int(trace.hash_ids.size),
                         "unique": int(np.unique(trace.hash_ids).size)}
    return out
