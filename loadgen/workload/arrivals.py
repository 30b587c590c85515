"""Arrival processes: when each request is meant to leave the client.

Open-loop schedules are computed up front from a seed, as offsets in seconds from one anchor, so a run
is reproducible and the runner can dispatch at absolute times (never by chaining sleeps, which lets
lateness accumulate and hides it). Closed loop (fixed concurrency) has no schedule: a request is meant
to leave when a slot frees, which makes it subject to coordinated omission: a slow server slows the
offered load, and latency under overload is understated. Prefer an open-loop process to measure latency.
A trace replay (`trace`) is open loop too: its offsets come from the trace file
(`loadgen.workload.schedule`), its `rate` (when not 0) the mean rate the trace is rescaled to.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from loadgen.workload.lengths import plain_number

ARRIVAL_KINDS = ("constant", "poisson", "gamma", "ramp", "concurrency", "trace")


@dataclass(frozen=True, slots=True)
class Arrival:
    """A parsed arrival process. `str()` gives a readable, re-parsable name (`poisson@4.00`)."""

    kind: str
    rate: float = 0.0  # requests/s (constant, poisson, gamma; the cap for concurrency, 0 = none; trace: the
    # mean rate the trace is rescaled to, 0 = its own timestamps)
    burstiness: float = 1.0  # gamma shape; 1 = Poisson, < 1 burstier, > 1 smoother
    rate_end: float = 0.0  # ramp: rate at the end of the run (rate is the start)
    concurrency: int = 0  # closed loop

    @property
    def open_loop(self) -> bool:
        return self.kind != "concurrency"

    def __str__(self) -> str:
        if self.kind == "gamma":
            return f"gamma@{self.rate:.2f}:b={self.burstiness:g}"
        if self.kind == "ramp":
            return f"ramp@{self.rate:.2f}-{self.rate_end:.2f}"
        if self.kind == "concurrency":
            cap = f":cap={self.rate:g}" if self.rate else ""
            return f"concurrency@{self.concurrency}{cap}"
        if self.kind == "trace":
            return f"trace@{self.rate:.2f}" if self.rate else "trace"
        return f"{self.kind}@{self.rate:.2f}"


def parse_arrival(kind: str, *, rate: float | None, burstiness: float, rate_end: float | None,
                  concurrency: int | None) -> Arrival:
    """Validate the CLI's view of an arrival process; ValueError says what is wrong in one line."""
    if kind not in ARRIVAL_KINDS:
        raise ValueError(f"unknown arrival process {kind!r}; choose one of {', '.join(ARRIVAL_KINDS)}")
    if kind == "concurrency":
        if concurrency is None or concurrency < 1:
            raise ValueError("--arrival concurrency needs --concurrency N with N >= 1")
        cap = rate or 0.0
        if cap < 0 or not math.isfinite(cap):
            raise ValueError(f"--rate (the cap of --arrival concurrency) must be a positive number of requests/s, "
                             f"got {plain_number(cap)}")
        return Arrival("concurrency", rate=cap, concurrency=concurrency)
    if kind == "trace":
        if rate is not None and rate != 0 and (not math.isfinite(rate) or rate < 0):
            raise ValueError(f"--rate must be a positive number of requests/s to rescale a trace, got {plain_number(rate)}")
        return Arrival("trace", rate=rate or 0.0)
    if rate is None or not math.isfinite(rate) or rate <= 0:
        given = f", got {plain_number(rate)}" if rate is not None else ""
        raise ValueError(f"--rate must be a positive number of requests/s for --arrival {kind}{given}")
    if kind == "gamma" and (not math.isfinite(burstiness) or burstiness <= 0):
        raise ValueError(f"--burstiness must be greater than 0, got {plain_number(burstiness)}")
    if kind == "ramp":
        if rate_end is None:
            raise ValueError("--arrival ramp needs --rate-end: the rate (requests/s) it reaches at the end of --duration")
        if not math.isfinite(rate_end) or rate_end <= 0:
            raise ValueError(f"--rate-end must be a positive number of requests/s, got {plain_number(rate_end)}")
        return Arrival("ramp", rate=rate, rate_end=rate_end)
    return Arrival(kind, rate=rate, burstiness=burstiness)


def constant_offsets(rate: float, count: int) -> np.ndarray:
    """Evenly spaced: the i-th request at i / rate."""
    return np.arange(count, dtype=np.float64) / rate


def gamma_gaps(rate: float, burstiness: float, count: int, rng: np.random.Generator) -> np.ndarray:
    """Gamma inter-arrival gaps with mean 1/rate and shape `burstiness` (vLLM's convention).

    Shape 1 is the exponential, i.e. a Poisson process.
    """
    return rng.gamma(shape=burstiness, scale=1.0 / (rate * burstiness), size=count)


def offsets_from_gaps(gaps: np.ndarray) -> np.ndarray:
    """The first request leaves at 0, each later one a gap after the one before."""
    return np.concatenate(([0.0], np.cumsum(gaps[:-1]))) if gaps.size else np.empty(0)


def ramp_offsets(rate_start: float, rate_end: float, duration_s: float, count: int | None) -> np.ndarray:
    """Rate rising (or falling) linearly from rate_start to rate_end over duration_s.

    The expected number of requests by time t is n(t) = r0·t + (r1 − r0)·t²/(2D); the i-th request
    leaves at the t where n(t) = i (the exact inverse, so the instantaneous rate follows the line).
    """
    slope = (rate_end - rate_start) / duration_s
    total = rate_start * duration_s + slope * duration_s**2 / 2
    n = math.floor(total) if count is None else min(count, math.floor(total))
    i = np.arange(n, dtype=np.float64)
    if abs(slope) < 1e-12:
        return i / rate_start
    # Solve slope/2·t² + r0·t − i = 0 for the positive root, in the cancellation-free form.
    return 2 * i / (rate_start + np.sqrt(rate_start**2 + 2 * slope * i))


def schedule(arrival: Arrival, *, duration_s: float | None, count: int | None, seed: int) -> np.ndarray:
    """Intended send offsets (seconds from the anchor) of an open-loop run, bounded by duration and/or count."""
    if not arrival.open_loop:
        raise ValueError("closed-loop runs have no schedule")
    if duration_s is None and count is None:
        raise ValueError("a run needs --duration and/or --requests")
    if arrival.kind == "trace":
        raise ValueError("a trace replay's schedule comes from its file (loadgen.workload.schedule)")
    if arrival.kind == "ramp":
        if duration_s is None:
            raise ValueError("--arrival ramp needs --duration (the ramp's length)")
        return ramp_offsets(arrival.rate, arrival.rate_end, duration_s, count)
    rng = np.random.default_rng(seed)
    if arrival.kind == "constant":
        n = count if count is not None else math.ceil(arrival.rate * (duration_s or 0.0)) + 1
        offsets = constant_offsets(arrival.rate, n)
    else:
        burst = 1.0 if arrival.kind == "poisson" else arrival.burstiness
        if count is not None:
            offsets = offsets_from_gaps(gamma_gaps(arrival.rate, burst, count, rng))
        else:
            # Draw blocks of gaps until they cover the duration (a bursty process can need many more).
            assert duration_s is not None
            block = max(64, math.ceil(arrival.rate * duration_s))
            gaps = [gamma_gaps(arrival.rate, burst, block, rng)]
            while sum(float(g.sum()) for g in gaps) < duration_s:
                gaps.append(gamma_gaps(arrival.rate, burst, block, rng))
            offsets = offsets_from_gaps(np.concatenate(gaps))
    if duration_s is not None:
        offsets = offsets[offsets < duration_s]
    return offsets
