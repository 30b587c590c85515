"""The one place a run's open-loop schedule is made: intended send offsets (seconds from the anchor) and,
for a trace replay, which trace request each offset sends.

- An arrival process (`--arrival constant|poisson|gamma|ramp`): drawn from the seed
  (`loadgen.workload.arrivals.schedule`). With `--turns` the offsets are those of the sessions' first turns.
- A trace (`--trace`): the trace's own timestamps, as absolute offsets from its first request in the
  window `[--trace-start, --trace-start + --trace-duration)` (trace time), divided by `--time-scale`, or
  rescaled so that the mean rate is `--rate` (the gaps keep their proportions, so bursts keep their
  shape); then cut by `--requests` and `--duration` (run time).
- Closed loop (`--arrival concurrency`): no schedule.

Everything downstream (the runner, the measurement window's end, a future worker's share of the load)
reads the offsets made here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from loadgen.workload.arrivals import Arrival, schedule
from loadgen.workload.bounds import MAX_HORIZON_S
from loadgen.workload.traces import Trace

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class LoadShape(Protocol):
    """What the schedule reads of the run spec's load section (loadgen.spec.sections.LoadSpec, which is
    built on this folder's types: the spec imports the workload, never the other way)."""

    @property
    def arrival(self) -> Arrival: ...
    @property
    def duration_s(self) -> float | None: ...
    @property
    def requests(self) -> int | None: ...
    @property
    def seed(self) -> int: ...
    @property
    def time_scale(self) -> float: ...
    @property
    def trace_start_s(self) -> float: ...
    @property
    def trace_duration_s(self) -> float | None: ...


@dataclass(frozen=True, slots=True)
class Schedule:
    offsets: FloatArray  # intended send times, seconds from the anchor, non-decreasing
    rows: IntArray | None = None  # trace replay: the trace request each offset sends

    @property
    def end_s(self) -> float | None:
        return float(self.offsets[-1]) if self.offsets.size else None


def trace_window(trace: Trace, *, start_s: float, duration_s: float | None) -> IntArray:
    """Trace rows whose arrival lies in [first + start_s, first + start_s + duration_s) (trace time)."""
    first = float(trace.arrival_s[0]) + start_s
    lo = int(np.searchsorted(trace.arrival_s, first, side="left"))
    hi = trace.n if duration_s is None else int(np.searchsorted(trace.arrival_s, first + duration_s, side="left"))
    return np.arange(lo, hi, dtype=np.int64)


def trace_offsets(arrival_s: FloatArray, *, time_scale: float = 1.0, rate: float | None = None) -> FloatArray:
    """Offsets from the first arrival: divided by `time_scale`, or rescaled to a mean rate of `rate`
    (requests − 1 intervals over the span, as `offered_rps` measures it)."""
    offsets = (arrival_s - arrival_s[0]) if arrival_s.size else arrival_s.astype(np.float64)
    if rate is None:
        return offsets / time_scale
    span = float(offsets[-1]) if offsets.size else 0.0
    if offsets.size < 2 or span <= 0:
        raise ValueError("--rate cannot rescale a trace window whose requests all arrive at one instant")
    mean_rate = (offsets.size - 1) / span
    return offsets * (mean_rate / rate)


def trace_schedule(trace: Trace, load: LoadShape) -> Schedule:
    rows = trace_window(trace, start_s=load.trace_start_s, duration_s=load.trace_duration_s)
    if rows.size == 0:
        raise ValueError(f"{trace.path}: no request in the window of --trace-start/--trace-duration "
                         f"(the trace spans {float(trace.arrival_s[-1] - trace.arrival_s[0]):.1f} s)")
    rate = load.arrival.rate or None
    offsets = trace_offsets(trace.arrival_s[rows], time_scale=load.time_scale, rate=rate)
    if load.requests is not None:
        offsets, rows = offsets[: load.requests], rows[: load.requests]
    if load.duration_s is not None:
        keep = offsets < load.duration_s
        offsets, rows = offsets[keep], rows[keep]
    return Schedule(offsets, rows)


def run_schedule(load: LoadShape, trace: Trace | None = None, *, offsets: FloatArray | None = None) -> Schedule | None:
    """The run's schedule (None for a closed loop); ValueError when it cannot be drawn. `offsets`: an
    arrival process's offsets the caller drew to realise its rate exactly (a sweep point's,
    loadgen.sweep.exact_rate), taken instead of a draw from the seed and checked the same way (a trace
    replay keeps the trace's own times)."""
    if load.arrival.kind == "trace":
        if trace is None:
            raise ValueError("--arrival trace needs --trace FILE")
        return _within_horizon(trace_schedule(trace, load), "the replay (--time-scale or --rate)")
    if not load.arrival.open_loop:
        return None
    if offsets is None:
        offsets = schedule(load.arrival, duration_s=load.duration_s, count=load.requests, seed=load.seed)
    drawn = Schedule(offsets)
    return _within_horizon(drawn, f"--rate {load.arrival.rate:g}")


def _within_horizon(drawn: Schedule, what: str) -> Schedule:
    """ValueError when the last send lies past MAX_HORIZON_S (a rate of 1e-300, a time scale of 1e-300)."""
    end = drawn.end_s
    if end is not None and not end <= MAX_HORIZON_S:
        raise ValueError(f"{what}: the last request would leave after {end:.3g} s, more than "
                         f"{MAX_HORIZON_S / 86_400:.0f} days")
    return drawn
