"""sweep.json and capacity.json documents for the sweep and capacity pages' tests, made by the code that
writes them (loadgen.sweep: point rows from summaries, the sweep state, the capacity document from the
search's own result), from summaries of made-up points."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from loadgen.spec.run_spec import RunSpec
from loadgen.sweep.capacity_doc import capacity_document
from loadgen.sweep.document import SweepState
from loadgen.sweep.points import PointLength, PointPlan, plan_point
from loadgen.sweep.rows import point_row
from metrics.capacity_search.search import Observation, SearchSettings, Stop, conclude, pool
from metrics.results import CapacityView, Ceiling, ServerInfo, SweepMode, SweepView, replace

LENGTH = PointLength(10.0, None)


def summary(good: int, measured: int, *, rps: float, failed: int = 0, saturated: bool = False,
            lag_s: float = 0.002, ttft_s: float = 0.05) -> dict[str, Any]:
    """A point's summary.json, as much of it as a row reads; latency grows with the load (`rps`)."""
    latency = {}
    for key, base in (("ttft_s", ttft_s), ("itl_s", 0.01), ("tpot_s", 0.011), ("e2e_s", 0.5)):
        scale = 1 + rps / 10
        latency[key] = {"count": measured - failed, "p50": base * scale, "p90": base * scale * 1.5,
                        "p99": base * scale * 2.0 + rps * 1e-4}
    return {
        "run": {"complete": True, "client_saturated": saturated, "client_saturation": {"lag_p99_s": lag_s}},
        "requests": {"in_window": measured, "in_window_failed": failed, "sent": measured + 3},
        "throughput": {"offered_rps": rps * 1.01, "achieved_rps": rps, "requests_per_s": rps * 0.98,
                       "output_tokens_per_s": rps * 100},
        "goodput": {"good": good, "attainment": good / measured if measured else None,
                    "requests_per_s": rps * good / measured if measured else None},
        "latency": latency,
    }


def sweep_doc(points: Sequence[tuple[PointPlan, dict[str, Any] | None]], *, mode: dict[str, Any] | None = None,
              ceiling: dict[str, Any] | None = None, interrupted: bool = False) -> SweepView:
    """sweep.json of these points (summary None: not run yet), as SweepState writes it and a reader reads it."""
    spec = RunSpec()
    state = SweepState(spec=spec, mode=SweepMode.from_json(mode or {"rates": [p.value for p, _ in points]}),
                       length=LENGTH, points=[p for p, _ in points],
                       server=ServerInfo("http://127.0.0.1:1", embedded=True), ceiling=Ceiling.from_json(ceiling),
                       interrupted=interrupted)
    for plan, s in points:
        if s is not None:
            state.rows[plan.label] = point_row(plan, status="done", code=0, summary=s)
    doc = state.view().to_json()
    doc["spec"]["metrics"]["slo"] = {"ttft_s": 0.2}
    return SweepView.from_json(json.loads(json.dumps(doc)))


def with_spec(doc: SweepView, **metrics: object) -> SweepView:
    """`doc` with these keys set in its spec's metrics section."""
    data = doc.to_json()
    data["spec"]["metrics"].update(metrics)
    return SweepView.from_json(data)


def rate_point(i: int, rate: float) -> PointPlan:
    return plan_point(i, "rate", rate, LENGTH, seed=0)


def capacity_doc(runs: list[tuple[float, int, int]], *, settings: SearchSettings | None = None,
                 stop: Stop | None = None, ceiling_rps: float | None = None) -> CapacityView:
    """capacity.json of a search that made these runs (rate, good, measured), in this order."""
    settings = settings or SearchSettings(target=0.9, max_rate=20.0)
    observations, rows = [], []
    if ceiling_rps is not None:
        plan = plan_point(0, "concurrency", 8, LENGTH, seed=0, role="ceiling")
        row = point_row(plan, status="done", code=0, summary=summary(40, 40, rps=ceiling_rps))
        rows.append(replace(row, has_rate=True, rate=None, verdict="ceiling"))
    for i, (rate, good, measured) in enumerate(runs, start=1):
        observations.append(Observation(rate, good, measured))
        plan = plan_point(i, "rate", rate, LENGTH, seed=0, role="probe")
        row = point_row(plan, status="done", code=0, summary=summary(good, measured, rps=rate))
        rows.append(replace(row, has_rate=True, rate=rate,
                            verdict=next(e.verdict for e in pool(settings, observations) if e.rate == rate)))
    result = conclude(settings, observations, stop or Stop("bracketed", "the bracket is within tolerance"))
    ceiling = Ceiling(8, ceiling_rps * 0.98, "00-ceiling-c8") if ceiling_rps is not None else None
    doc = capacity_document(spec=RunSpec(), settings=settings, result=result, rows=rows,
                            requests=sum(int(r.sent or 0) for r in rows), ceiling=ceiling,
                            server=ServerInfo("http://127.0.0.1:1", embedded=False), complete=True,
                            interrupted=False)
    return CapacityView.from_json(json.loads(json.dumps(doc.to_json())))  # as a reader reads it back
