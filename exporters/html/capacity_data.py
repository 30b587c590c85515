"""The numbers of a capacity search's page, read from capacity.json as `goodput capacity` wrote it.

The pooled attainment and interval of each probed rate, the bracket and the capacity are capacity.json's
own (`rates`, `capacity`); a run's own interval (a rate probed more than once is pooled over its runs)
is computed with the search's settings by the function the search judges with.
"""

from __future__ import annotations

from dataclasses import dataclass

from metrics.capacity_search import METHODS, Method, proportion_interval
from metrics.results import CapacityView, PointRow, ProbedRate


def rate_points(doc: CapacityView) -> list[ProbedRate]:
    """capacity.json's `rates`, by ascending rate."""
    return sorted(doc.rates, key=lambda p: p.rate)


@dataclass(frozen=True, slots=True)
class ProbeRun:
    """One run of the search, in the order run (the ceiling first when there was one)."""

    order: int  # 1, 2, ... as run
    label: str
    rate: float | None  # None: the ceiling (closed loop)
    verdict: str  # the rate's verdict once this run was pooled ("ceiling" for the ceiling run)
    status: str
    good: int | None
    measured: int | None
    attainment: float | None
    interval: tuple[float, float] | None  # this run alone
    sent: int
    spent: int  # requests sent by this run and every run before it
    client_saturated: bool
    row: PointRow


def search_settings(doc: CapacityView) -> tuple[float, float, Method]:
    """(target, confidence, interval method) the search judged with."""
    cap = doc.capacity
    method = cap.interval_method
    return cap.target, cap.confidence, method if method in METHODS else "wilson"


def probe_runs(doc: CapacityView) -> list[ProbeRun]:
    _, confidence, method = search_settings(doc)
    out, spent = [], 0
    for i, row in enumerate(doc.points):
        sent = row.sent or 0
        spent += sent
        good, measured = row.good, row.measured
        interval = (proportion_interval(good, measured, confidence, method)
                    if good is not None and measured and 0 <= good <= measured else None)
        out.append(ProbeRun(i + 1, row.label, _float(row.rate), row.verdict or "", row.status, good, measured,
                            _float(row.attainment), interval, sent, spent, bool(row.client_saturated), row))
    return out


def _float(value: float | None) -> float | None:
    return float(value) if value is not None else None


@dataclass(frozen=True, slots=True)
class Verdict:
    """capacity.json's `capacity`: the claim, its bracket and what the search spent."""

    rate: float | None  # the highest rate shown to pass
    upper: float | None  # the lowest rate not shown to pass
    attainment: float | None
    interval: tuple[float, float] | None
    status: str
    reason: str
    target: float
    confidence: float
    method: str
    points: int
    requests: int


def capacity_verdict(doc: CapacityView) -> Verdict:
    cap = doc.capacity
    target, confidence, method = search_settings(doc)
    return Verdict(_float(cap.rate), _float(cap.upper), _float(cap.attainment), cap.interval, cap.status, cap.reason,
                   target, confidence, method, cap.points, cap.requests)
