"""What the search knows about each rate: its settings, the runs (observations), and the verdict of a rate
pooled over its runs (`pool`). See `metrics.capacity_search.search` for how the search uses them."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from metrics.capacity_search.proportion import METHODS, Method, proportion_interval

# `too_short`: runs at the rate that were evidence measured no request at all (the point held none in its
# window): nothing about the server, but a lower limit, since a lower rate would hold fewer still.
Verdict = Literal["pass", "fail", "undecided", "unresolved", "not_evidence", "too_short"]
@dataclass(frozen=True, slots=True)
class Observation:
    """One run at an open-loop rate (requests/s): its measured requests and how many of them were good."""

    rate: float
    good: int
    measured: int
    client_saturated: bool = False

    def __post_init__(self) -> None:
        if not (math.isfinite(self.rate) and self.rate > 0):
            raise ValueError(f"a probe's rate must be > 0, got {self.rate}")
        if not 0 <= self.good <= self.measured:
            raise ValueError(f"need 0 <= good <= measured, got {self.good} of {self.measured}")


@dataclass(frozen=True, slots=True)
class SearchSettings:
    target: float  # attainment to meet, in (0, 1)
    confidence: float = 0.95
    method: Method = "wilson"
    tolerance: float = 0.05  # stop when (upper − capacity) / capacity ≤ this
    max_points: int = 12  # runs at most, every run counted (repeats and a ceiling run too)
    max_repeats: int = 2  # extra runs at a rate whose interval straddles the target
    min_rate: float | None = None
    max_rate: float | None = None
    start_rate: float | None = None  # default: between min_rate and max_rate
    # The lowest rate at which one point of the planned length can measure enough requests for a verdict
    # (`requests_per_point`); never probed below. None: no such limit (count-bound points).
    floor_rate: float | None = None

    def __post_init__(self) -> None:
        if not 0.0 < self.target < 1.0:
            raise ValueError(f"--attainment must be in (0, 1), got {self.target:g}")
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(f"--confidence must be in (0, 1), got {self.confidence:g}")
        if self.method not in METHODS:
            raise ValueError(f"--interval must be {' or '.join(METHODS)}, got {self.method!r}")
        if not (math.isfinite(self.tolerance) and self.tolerance > 0):
            raise ValueError(f"--tolerance must be > 0, got {self.tolerance:g}")
        if self.max_points < 1:
            raise ValueError(f"--max-points must be >= 1, got {self.max_points}")
        if self.max_repeats < 0:
            raise ValueError(f"max_repeats must be >= 0, got {self.max_repeats}")
        for name, value in (("--min-rate", self.min_rate), ("--max-rate", self.max_rate),
                            ("start rate", self.start_rate), ("floor rate", self.floor_rate)):
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be > 0, got {value:g}")
        if self.min_rate is not None and self.max_rate is not None and self.min_rate >= self.max_rate:
            raise ValueError(f"--min-rate ({self.min_rate:g}) must be below --max-rate ({self.max_rate:g})")
        if self.floor_rate is not None and self.max_rate is not None and self.floor_rate > self.max_rate:
            raise ValueError(f"a point of this length measures enough requests for a verdict only from "
                             f"{self.floor_rate:.3g} req/s, above --max-rate {self.max_rate:g}: lengthen "
                             "--point-duration")
        if self.start_rate is None and self.min_rate is None and self.max_rate is None:
            raise ValueError("the search needs a start: --min-rate, --max-rate or a start rate")


@dataclass(frozen=True, slots=True)
class RateEvidence:
    """Everything measured at one rate, pooled over the runs that are evidence."""

    rate: float
    good: int
    measured: int
    runs: int  # every run at this rate
    saturated_runs: int  # runs left out: the client fell behind
    verdict: Verdict
    interval: tuple[float, float] | None  # None: no run at this rate is evidence

    @property
    def attainment(self) -> float | None:
        return self.good / self.measured if self.measured else None


def judge_rate(good: int, measured: int, settings: SearchSettings) -> tuple[Verdict, tuple[float, float]]:
    """pass / fail / undecided for `good` of `measured` against the target, and the interval it rests on."""
    lo, hi = proportion_interval(good, measured, settings.confidence, settings.method)
    if lo >= settings.target:
        return "pass", (lo, hi)
    if hi < settings.target:
        return "fail", (lo, hi)
    return "undecided", (lo, hi)


def pool(settings: SearchSettings, observations: Sequence[Observation]) -> list[RateEvidence]:
    """One entry per probed rate, ascending. Undecided rates that may not be repeated any more (every
    rate but the last probed one, or the last one once its repeats are spent) are `unresolved`."""
    last = observations[-1].rate if observations else None
    out = []
    for rate in sorted({o.rate for o in observations}):
        runs = [o for o in observations if o.rate == rate]
        evidence = [o for o in runs if not o.client_saturated]
        good, measured = sum(o.good for o in evidence), sum(o.measured for o in evidence)
        if not evidence:
            verdict: Verdict = "not_evidence"
            interval = None
        elif measured == 0:
            verdict, interval = "too_short", None
        else:
            verdict, interval = judge_rate(good, measured, settings)
            repeatable = rate == last and len(runs) <= settings.max_repeats
            if verdict == "undecided" and not repeatable:
                verdict = "unresolved"
        out.append(RateEvidence(rate, good, measured, len(runs), len(runs) - len(evidence), verdict, interval))
    return out


def requests_for_a_verdict(settings: SearchSettings) -> int:
    """The fewest measured requests, all of them good, whose interval clears the target: below that no
    rate can pass, however good the server."""
    lo, hi = 1, 1
    while judge_rate(hi, hi, settings)[0] != "pass":
        lo, hi = hi + 1, hi * 2
    while lo < hi:  # the lower end of the interval of n of n grows with n
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if judge_rate(mid, mid, settings)[0] == "pass" else (mid + 1, hi)
    return hi


def requests_per_point(settings: SearchSettings) -> int:
    """Requests one point must measure so that the runs allowed at one rate (one and `max_repeats` more,
    pooled) can reach a verdict: a point with fewer cannot show anything, so its rate is not probed."""
    return math.ceil(requests_for_a_verdict(settings) / (1 + settings.max_repeats))
