"""The numbers of a capacity search's page, read from capacity.json as `goodput capacity` wrote it.

The pooled attainment and interval of each probed rate, the bracket and the capacity are capacity.json's
own (`rates`, `capacity`); a run's own interval (a rate probed more than once is pooled over its runs)
is computed with the search's settings by the function the search judges with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from metrics.capacity_search import METHODS, Method, proportion_interval


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _interval(value: Any) -> tuple[float, float] | None:
    if isinstance(value, list | tuple) and len(value) == 2:
        lo, hi = _number(value[0]), _number(value[1])
        if lo is not None and hi is not None:
            return lo, hi
    return None


@dataclass(frozen=True, slots=True)
class RatePoint:
    """One probed rate, pooled over its runs that are evidence (capacity.json `rates`)."""

    rate: float
    verdict: str
    good: int
    measured: int
    attainment: float | None
    interval: tuple[float, float] | None  # None: no run at this rate is evidence
    runs: int
    saturated_runs: int


def rate_points(doc: dict[str, Any]) -> list[RatePoint]:
    out = []
    for e in doc.get("rates") or []:
        rate = _number(e.get("rate")) if isinstance(e, dict) else None
        if rate is None:
            continue
        out.append(RatePoint(rate, str(e.get("verdict")), _int(e.get("good")) or 0, _int(e.get("measured")) or 0,
                             _number(e.get("attainment")), _interval(e.get("interval")), _int(e.get("runs")) or 0,
                             _int(e.get("saturated_runs")) or 0))
    return sorted(out, key=lambda p: p.rate)


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
    row: dict[str, Any]


def search_settings(doc: dict[str, Any]) -> tuple[float, float, Method]:
    """(target, confidence, interval method) the search judged with."""
    cap = doc.get("capacity") or {}
    method = cap.get("interval_method")
    return (_number(cap.get("target")) or 0.9, _number(cap.get("confidence")) or 0.95,
            method if method in METHODS else "wilson")


def probe_runs(doc: dict[str, Any]) -> list[ProbeRun]:
    _, confidence, method = search_settings(doc)
    out, spent = [], 0
    for i, row in enumerate(r for r in doc.get("points") or [] if isinstance(r, dict)):
        sent = _int(row.get("sent")) or 0
        spent += sent
        good, measured = _int(row.get("good")), _int(row.get("measured"))
        interval = (proportion_interval(good, measured, confidence, method)
                    if good is not None and measured and 0 <= good <= measured else None)
        out.append(ProbeRun(i + 1, str(row.get("label")), _number(row.get("rate")), str(row.get("verdict") or ""),
                            str(row.get("status") or ""), good, measured, _number(row.get("attainment")), interval,
                            sent, spent, bool(row.get("client_saturated")), row))
    return out


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


def capacity_verdict(doc: dict[str, Any]) -> Verdict:
    cap = doc.get("capacity") or {}
    target, confidence, method = search_settings(doc)
    return Verdict(_number(cap.get("rate")), _number(cap.get("upper")), _number(cap.get("attainment")),
                   _interval(cap.get("interval")), str(cap.get("status") or ""), str(cap.get("reason") or ""),
                   target, confidence, method, _int(cap.get("points")) or 0, _int(cap.get("requests")) or 0)
