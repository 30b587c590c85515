"""One row per point, from the point's summary.json: what sweep.json, sweep.csv and the console table show.

Every figure is the run's own (same window, same definitions as `goodput report` on the point's
directory); nothing is recomputed here.
"""

from __future__ import annotations

from typing import Any

from loadgen.sweep.points import PointPlan

LATENCY_COLUMNS = (("ttft", "ttft_s"), ("itl", "itl_s"), ("tpot", "tpot_s"), ("e2e", "e2e_s"))
PERCENTILES = ("p50", "p90", "p99")

# The CSV's columns, in order (sweep.json's rows have the same keys).
COLUMNS: tuple[str, ...] = (
    "label", "kind", "value", "status", "exit_code", "complete", "measured", "good", "failed",
    "offered_rps", "achieved_rps", "requests_per_s", "output_tokens_per_s",
    *(f"{name}_{p}_s" for name, _ in LATENCY_COLUMNS for p in PERCENTILES),
    "attainment", "goodput_rps", "error_rate", "client_saturated", "dispatch_lag_p99_s", "sent",
)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def point_row(point: PointPlan, *, status: str, code: int | None, summary: dict[str, Any] | None) -> dict[str, Any]:
    """The row of one point. `status`: done | interrupted | failed | pending."""
    row: dict[str, Any] = {k: None for k in COLUMNS}
    row.update(label=point.label, kind=point.kind, value=point.value, status=status, exit_code=code)
    if summary is None:
        return row
    run, requests = summary.get("run", {}), summary.get("requests", {})
    throughput, goodput, latency = summary.get("throughput", {}), summary.get("goodput", {}), summary.get("latency", {})
    measured = int(requests.get("in_window") or 0)
    failed = int(requests.get("in_window_failed") or 0)
    row.update(
        complete=bool(run.get("complete", False)),
        measured=measured,
        good=goodput.get("good"),
        failed=failed,
        sent=requests.get("sent"),
        offered_rps=_number(throughput.get("offered_rps")),
        achieved_rps=_number(throughput.get("achieved_rps")),
        requests_per_s=_number(throughput.get("requests_per_s")),
        output_tokens_per_s=_number(throughput.get("output_tokens_per_s")),
        attainment=_number(goodput.get("attainment")),
        goodput_rps=_number(goodput.get("requests_per_s")),
        error_rate=failed / measured if measured else None,
        client_saturated=bool(run.get("client_saturated", False)),
        dispatch_lag_p99_s=_number((run.get("client_saturation") or {}).get("lag_p99_s")),
    )
    for name, key in LATENCY_COLUMNS:
        block = latency.get(key) or {}
        for p in PERCENTILES:
            row[f"{name}_{p}_s"] = _number(block.get(p)) if block.get("count") else None
    return row
