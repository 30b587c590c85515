"""capacity.json: the result of `goodput capacity`, written after every probe and at the end.

    {
      "kind": "capacity", "schema_version": 1, "complete": true, "interrupted": false,
      "capacity": {"rate": 6.3, "upper": 7.1, "attainment": 0.94, "interval": [0.91, 0.96],
                   "status": "bracketed", "reason": "...", "points": 7, "requests": 2940,
                   "target": 0.9, "confidence": 0.95, "interval_method": "wilson", "tolerance": 0.05,
                   "min_rate": null, "max_rate": null, "floor_rate": 2.22, "max_points": 12,
                   "rate_basis": "...", "client_rule": "..."},
      "slo": {"ttft_s": 0.5, "tpot_s": 0.05},
      "ceiling": {"concurrency": 256, "requests_per_s": 7.8, "label": "00-ceiling-c256"} | null,
      "rates": [{"rate": 6.3, "verdict": "pass", "good": 470, "measured": 500, "attainment": 0.94,
                 "interval": [0.91, 0.96], "runs": 1, "saturated_runs": 0}, ...],
      "points": [{... one row per run, see loadgen.sweep.rows, plus "rate" and "verdict" ...}],
      "notes": ["..."], "server": {...}, "spec": {... the run spec every probe starts from ...}
    }

While the search runs (and after a kill) it reads `complete: false` with status `interrupted`; a search
stopped by a runtime error has status `error`. `capacity.rate` is the highest rate shown to pass (null when none was), `capacity.upper` the lowest rate
not shown to pass (null when none was probed): the bracket. `floor_rate` is the lowest rate a point of
this length can reach a verdict at (never probed below); `rate_basis` says that every rate is the one
each probe realised (its schedule was drawn to offer it exactly); `client_rule` how a probe the client
could not keep up with was told apart. `goodput gate DIR --threshold
'capacity:rate >= 6'` reads `capacity`.
"""

from __future__ import annotations

from collections.abc import Sequence

from loadgen.spec import RunSpec
from loadgen.sweep.exact_rate import RATE_BASIS
from metrics.capacity_search import (
    LAG_SHARE_OF_GAP,
    MIN_LAG_LIMIT_S,
    RATE_SHORTFALL,
    RateEvidence,
    SearchResult,
    SearchSettings,
)
from metrics.results import CAPACITY_SCHEMA_VERSION as SCHEMA_VERSION
from metrics.results import CapacityFigure, CapacityView, Ceiling, PointRow, ProbedRate, ServerInfo
from metrics.results import is_capacity_dir as is_capacity_dir
from metrics.results import read_capacity as read_capacity


def client_rule(absolute_lag_s: float | None) -> str:
    if absolute_lag_s is not None:
        return f"absolute: dispatch lag p99 above --lag-threshold {absolute_lag_s * 1e3:g} ms"
    return (f"relative: dispatch lag p99 above {LAG_SHARE_OF_GAP:g} of the mean gap between arrivals "
            f"(1 / rate) and above {MIN_LAG_LIMIT_S * 1e3:g} ms, or a send rate below {1 - RATE_SHORTFALL:g} "
            "of the rate planned")


def _evidence(e: RateEvidence) -> ProbedRate:
    return ProbedRate(e.rate, e.verdict, e.good, e.measured, e.attainment, e.interval, e.runs, e.saturated_runs)


def capacity_document(*, spec: RunSpec, settings: SearchSettings, result: SearchResult, rows: Sequence[PointRow],
                      requests: int, ceiling: Ceiling | None, server: ServerInfo | None,
                      complete: bool, interrupted: bool, absolute_lag_s: float | None = None) -> CapacityView:
    """`complete`: the search ended by its own rule (not interrupted, killed or stopped by an error)."""
    at_capacity = result.at(result.capacity)
    return CapacityView(
        complete=complete, interrupted=interrupted,
        capacity=CapacityFigure(
            rate=result.capacity, upper=result.upper,
            attainment=at_capacity.attainment if at_capacity else None,
            interval=at_capacity.interval if at_capacity and at_capacity.interval else None,
            status=result.status, reason=result.reason, points=len(rows), requests=requests,
            target=settings.target, confidence=settings.confidence, interval_method=settings.method,
            tolerance=settings.tolerance, min_rate=settings.min_rate, max_rate=settings.max_rate,
            floor_rate=settings.floor_rate, max_points=settings.max_points,
            rate_basis=RATE_BASIS, client_rule=client_rule(absolute_lag_s),
        ),
        slo={k: v for k, v in spec.metrics.slo.to_dict().items() if v is not None},
        ceiling=ceiling,
        rates=tuple(_evidence(e) for e in result.evidence),
        points=tuple(rows),
        notes=tuple(result.notes),
        server=server,
        spec=spec.to_json(),
        schema_version=SCHEMA_VERSION,
    )
