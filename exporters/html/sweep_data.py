"""The numbers of a sweep's page, read from sweep.json as `goodput sweep` wrote it.

Every plotted latency, throughput, attainment and goodput is a point's own row (the figures of its
summary.json); nothing is re-measured. What the page adds is arithmetic on those rows: the confidence
interval of each point's attainment, and the capacity the points show, both by `goodput capacity`'s own
rule (metrics.capacity_search) at its default target, since a sweep has no target of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from metrics.capacity_search import (
    Method,
    Observation,
    SearchResult,
    SearchSettings,
    Stop,
    conclude,
    proportion_interval,
)
from metrics.results import PointRow, SweepView, float_or_none

# goodput capacity's defaults (--attainment, --confidence, --interval): the rule the sweep's points are read with
SWEEP_TARGET = 0.9
SWEEP_CONFIDENCE = 0.95
SWEEP_METHOD: Method = "wilson"

# row key prefix, name on the page, SLO field drawn on its chart
LATENCY_METRICS: tuple[tuple[str, str, str | None], ...] = (
    ("ttft", "TTFT", "ttft_s"), ("itl", "ITL per chunk", None), ("tpot", "TPOT", "tpot_s"), ("e2e", "E2E", "e2e_s"),
)
LOAD_AXES = {"rate": "offered rate, as planned (req/s)", "concurrency": "concurrency (requests kept in flight)"}
CEILING = "ceiling"


def sweep_rows(doc: SweepView) -> list[PointRow]:
    """Every planned point's row in the order planned (each carries its plan's role: point or ceiling)."""
    return doc.rows()


def done(rows: Sequence[PointRow]) -> list[PointRow]:
    """The points that finished (the charts' points): in the order they ran."""
    return [r for r in rows if r.status == "done"]


def load_points(rows: Sequence[PointRow]) -> list[PointRow]:
    """The finished points of the sweep's load axis (not an auto sweep's ceiling), by ascending load."""
    return sorted((r for r in done(rows) if r.role != CEILING), key=lambda r: r.load)


def ceiling_row(rows: Sequence[PointRow]) -> PointRow | None:
    return next((r for r in done(rows) if r.role == CEILING), None)


def load_kind(rows: Sequence[PointRow]) -> str:
    """`rate` (open loop) or `concurrency` (closed loop): what the load axis is."""
    kinds = {r.kind for r in rows if r.role != CEILING}
    return "concurrency" if kinds == {"concurrency"} else "rate"


@dataclass(frozen=True, slots=True)
class Series:
    """One line of a chart: x, y and each point's label (None: no value, a gap)."""

    x: list[float | None]
    y: list[float | None]
    labels: list[str]


def latency_series(rows: Sequence[PointRow], metric: str, percentile: str) -> Series:
    """A latency percentile (seconds, the row's) against completed requests/s, one point per row given."""
    return Series([float_or_none(r.requests_per_s) for r in rows],
                  [float_or_none(r.percentile(metric, percentile)) for r in rows], [r.label for r in rows])


def column_series(rows: Sequence[PointRow], key: str) -> Series:
    """A row figure (`goodput_rps`, `requests_per_s`, ...) against the load."""
    return Series([float_or_none(r.value) for r in rows], [float_or_none(r.column(key)) for r in rows],
                  [r.label for r in rows])


@dataclass(frozen=True, slots=True)
class AttainmentPoint:
    label: str
    kind: str  # rate | concurrency
    load: float
    good: int
    measured: int
    attainment: float  # the row's (summary.json's goodput.attainment)
    interval: tuple[float, float]  # at `confidence` by `method`, as goodput capacity judges a run
    client_saturated: bool


def attainment_points(rows: Sequence[PointRow], *, confidence: float = SWEEP_CONFIDENCE,
                      method: Method = SWEEP_METHOD) -> list[AttainmentPoint]:
    """Each row's attainment and its interval (rows that measured nothing have neither: left out)."""
    out = []
    for r in rows:
        measured, good, attainment = r.measured, r.good, float_or_none(r.attainment)
        if measured is None or measured <= 0 or good is None or attainment is None:
            continue
        out.append(AttainmentPoint(r.label, r.kind, r.load, good, measured, attainment,
                                   proportion_interval(good, measured, confidence, method), bool(r.client_saturated)))
    return out


def sweep_capacity(rows: Sequence[PointRow], *, target: float = SWEEP_TARGET,
                   confidence: float = SWEEP_CONFIDENCE, method: Method = SWEEP_METHOD) -> SearchResult | None:
    """The capacity the open-loop points show, by the search's rule: the highest rate whose interval lies
    above `target`, below every rate that fell short or straddles it; each finished point one run, a point
    where the client fell behind no evidence. None: no open-loop point measured anything."""
    observations = [Observation(p.load, p.good, p.measured, p.client_saturated)
                    for p in attainment_points(done(rows), confidence=confidence, method=method) if p.kind == "rate"]
    if not observations:
        return None
    settings = SearchSettings(target=target, confidence=confidence, method=method, max_repeats=0,
                              max_rate=max(o.rate for o in observations))
    return conclude(settings, observations, Stop("bracketed", "read from the sweep's points"))

