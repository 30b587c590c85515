"""How far another host's monotonic clock is from the driver's, from a few round trips.

Each sample is (t0, r, t1): the driver's `perf_counter_ns` before it asks, the other host's reading, and
the driver's clock when the answer is back. The reading was taken somewhere inside [t0, t1], so the
offset (remote − driver) lies within [r − t1, r − t0]: its middle is the estimate and half the round trip
its uncertainty, a bound, not a statistical spread. The sample with the shortest round trip gives the
tightest bound (queueing only ever adds delay), so that one is kept.

On the driver's own host every process reads the same clock (CLOCK_MONOTONIC on Linux): the offset is
exactly 0 there and the measurement only shows what the method would claim. A run's anchor on a node is
the driver's anchor plus the node's offset, so a record's times on that node are off from the driver's
timeline by at most the uncertainty (plus whatever the clocks drifted apart during the run, measured
again at the end).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

Sample = tuple[int, int, int]  # (driver before, remote reading, driver after), nanoseconds


class ClockJson(TypedDict):
    """A clock offset as run.json's `workers.nodes[]` gives it."""

    clock_offset_ns: int
    clock_uncertainty_ns: int
    rtt_min_ns: int
    samples: int


@dataclass(frozen=True, slots=True)
class ClockOffset:
    offset_ns: int  # remote clock − driver clock
    uncertainty_ns: int  # the true offset is within offset_ns ± uncertainty_ns
    rtt_ns: int  # the shortest round trip, the one the estimate comes from
    samples: int

    def to_json(self) -> ClockJson:
        return {"clock_offset_ns": self.offset_ns, "clock_uncertainty_ns": self.uncertainty_ns,
                "rtt_min_ns": self.rtt_ns, "samples": self.samples}


def estimate_offset(samples: Sequence[Sample]) -> ClockOffset:
    """The minimum-round-trip estimate; ValueError without a sample or with one that runs backwards."""
    if not samples:
        raise ValueError("no clock sample")
    if any(t1 < t0 for t0, _, t1 in samples):
        raise ValueError("a clock sample ends before it starts")
    t0, reading, t1 = min(samples, key=lambda s: s[2] - s[0])
    return ClockOffset(offset_ns=reading - (t0 + t1) // 2, uncertainty_ns=(t1 - t0 + 1) // 2, rtt_ns=t1 - t0,
                       samples=len(samples))
