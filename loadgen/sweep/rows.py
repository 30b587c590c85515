"""One row per point, from the point's summary.json: what sweep.json, sweep.csv and the console table show.

Every figure is the run's own (same window, same definitions as `goodput report` on the point's
directory); nothing is recomputed here.
"""

from __future__ import annotations

from collections.abc import Mapping

from loadgen.sweep.json_read import part, section, whole
from metrics.results import COLUMNS as COLUMNS
from metrics.results import Json, PointPlan, PointRow, float_or_none, int_or_none, replace


def point_row(point: PointPlan, *, status: str, code: int | None, summary: Mapping[str, Json] | None) -> PointRow:
    """The row of one point. `status`: done | interrupted | failed | pending."""
    row = PointRow(label=point.label, kind=point.kind, value=point.value, status=status, exit_code=code, role=point.role)
    if summary is None:
        return row
    run, requests = section(summary, "run"), section(summary, "requests")
    throughput, goodput, latency = section(summary, "throughput"), section(summary, "goodput"), section(summary, "latency")
    measured = whole(requests.get("in_window"))
    failed = whole(requests.get("in_window_failed"))

    def percentile(metric: str, p: str) -> float | None:
        block = part(latency, metric)
        return float_or_none(block.get(p)) if block.get("count") else None

    return replace(
        row,
        complete=bool(run.get("complete", False)),
        measured=measured,
        good=int_or_none(goodput.get("good")),
        failed=failed,
        sent=int_or_none(requests.get("sent")),
        offered_rps=float_or_none(throughput.get("offered_rps")),
        achieved_rps=float_or_none(throughput.get("achieved_rps")),
        requests_per_s=float_or_none(throughput.get("requests_per_s")),
        output_tokens_per_s=float_or_none(throughput.get("output_tokens_per_s")),
        attainment=float_or_none(goodput.get("attainment")),
        goodput_rps=float_or_none(goodput.get("requests_per_s")),
        error_rate=failed / measured if measured else None,
        client_saturated=bool(run.get("client_saturated", False)),
        dispatch_lag_p99_s=float_or_none(part(run, "client_saturation").get("lag_p99_s")),
        ttft_p50_s=percentile("ttft_s", "p50"), ttft_p90_s=percentile("ttft_s", "p90"),
        ttft_p99_s=percentile("ttft_s", "p99"), itl_p50_s=percentile("itl_s", "p50"),
        itl_p90_s=percentile("itl_s", "p90"), itl_p99_s=percentile("itl_s", "p99"),
        tpot_p50_s=percentile("tpot_s", "p50"), tpot_p90_s=percentile("tpot_s", "p90"),
        tpot_p99_s=percentile("tpot_s", "p99"), e2e_p50_s=percentile("e2e_s", "p50"),
        e2e_p90_s=percentile("e2e_s", "p90"), e2e_p99_s=percentile("e2e_s", "p99"),
    )
