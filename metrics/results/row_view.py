"""One point's row, as sweep.json, capacity.json and sweep.csv hold it: a typed, frozen view.

A row is written from the point's summary.json (loadgen.sweep.rows); every figure is the run's own. A
capacity search's rows add the rate probed, its verdict once the run was pooled, and the ceiling run's
completed requests/s. `to_json` gives the row's keys in COLUMNS' order, then those three when present:
the JSON goodput has always written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, NotRequired, TypedDict

from metrics.results.fields import flag, integer, num, text
from metrics.results.frozen_view import frozen

if TYPE_CHECKING:
    from metrics.results.summary_parse import Json

LATENCY_COLUMNS = (("ttft", "ttft_s"), ("itl", "itl_s"), ("tpot", "tpot_s"), ("e2e", "e2e_s"))
PERCENTILES = ("p50", "p90", "p99")

# The CSV's columns, in order (the rows of sweep.json and capacity.json have the same keys, in this order).
COLUMNS: tuple[str, ...] = (
    "label", "kind", "value", "status", "exit_code", "complete", "measured", "good", "failed",
    "offered_rps", "achieved_rps", "requests_per_s", "output_tokens_per_s",
    *(f"{name}_{p}_s" for name, _ in LATENCY_COLUMNS for p in PERCENTILES),
    "attainment", "goodput_rps", "error_rate", "client_saturated", "dispatch_lag_p99_s", "sent",
)


class RowJson(TypedDict):
    """A row as sweep.json and capacity.json hold it: COLUMNS, in order, then a search's own keys."""

    label: str
    kind: str
    value: float | None
    status: str
    exit_code: int | None
    complete: bool | None
    measured: int | None
    good: int | None
    failed: int | None
    offered_rps: float | None
    achieved_rps: float | None
    requests_per_s: float | None
    output_tokens_per_s: float | None
    ttft_p50_s: float | None
    ttft_p90_s: float | None
    ttft_p99_s: float | None
    itl_p50_s: float | None
    itl_p90_s: float | None
    itl_p99_s: float | None
    tpot_p50_s: float | None
    tpot_p90_s: float | None
    tpot_p99_s: float | None
    e2e_p50_s: float | None
    e2e_p90_s: float | None
    e2e_p99_s: float | None
    attainment: float | None
    goodput_rps: float | None
    error_rate: float | None
    client_saturated: bool | None
    dispatch_lag_p99_s: float | None
    sent: int | None
    rate: NotRequired[float | None]  # a capacity search's rows only
    verdict: NotRequired[str]
    ceiling_rps: NotRequired[float]


@frozen
class PointRow:
    """One point. `status`: done | interrupted | failed | pending; figures None where the point has none."""

    label: str
    kind: str  # rate | concurrency
    value: float | None  # the planned rate (req/s) or concurrency (None: the document gives none)
    status: str
    exit_code: int | None = None
    complete: bool | None = None
    measured: int | None = None
    good: int | None = None
    failed: int | None = None
    offered_rps: float | None = None
    achieved_rps: float | None = None
    requests_per_s: float | None = None
    output_tokens_per_s: float | None = None
    ttft_p50_s: float | None = None
    ttft_p90_s: float | None = None
    ttft_p99_s: float | None = None
    itl_p50_s: float | None = None
    itl_p90_s: float | None = None
    itl_p99_s: float | None = None
    tpot_p50_s: float | None = None
    tpot_p90_s: float | None = None
    tpot_p99_s: float | None = None
    e2e_p50_s: float | None = None
    e2e_p90_s: float | None = None
    e2e_p99_s: float | None = None
    attainment: float | None = None
    goodput_rps: float | None = None
    error_rate: float | None = None
    client_saturated: bool | None = None
    dispatch_lag_p99_s: float | None = None
    sent: int | None = None
    # A capacity search's own: the rate probed (None: the ceiling run), the verdict, the ceiling's req/s.
    has_rate: bool = False  # the row carries `rate` (every row of a capacity search does, even when None)
    rate: float | None = None
    verdict: str | None = None
    ceiling_rps: float | None = None
    role: str = "point"  # the plan's (point, ceiling, probe): sweep.json keeps it in the plan, not in the row

    @property
    def load(self) -> float:
        """The planned rate or concurrency as a number (0 when the document gives none)."""
        return float(self.value) if self.value is not None else 0.0

    def percentile(self, metric: str, p: str) -> float | None:
        """`percentile("ttft", "p99")`: the row's ttft_p99_s."""
        value = getattr(self, f"{metric}_{p}_s")
        return value if isinstance(value, int | float) else None

    def column(self, name: str) -> str | float | bool | None:
        """The value of one of COLUMNS (sweep.csv writes them in order)."""
        value = getattr(self, name)
        assert value is None or isinstance(value, str | int | float)
        return value

    def to_json(self) -> RowJson:
        out: RowJson = {
            "label": self.label, "kind": self.kind, "value": self.value, "status": self.status,
            "exit_code": self.exit_code, "complete": self.complete, "measured": self.measured, "good": self.good,
            "failed": self.failed, "offered_rps": self.offered_rps, "achieved_rps": self.achieved_rps,
            "requests_per_s": self.requests_per_s, "output_tokens_per_s": self.output_tokens_per_s,
            "ttft_p50_s": self.ttft_p50_s, "ttft_p90_s": self.ttft_p90_s, "ttft_p99_s": self.ttft_p99_s,
            "itl_p50_s": self.itl_p50_s, "itl_p90_s": self.itl_p90_s, "itl_p99_s": self.itl_p99_s,
            "tpot_p50_s": self.tpot_p50_s, "tpot_p90_s": self.tpot_p90_s, "tpot_p99_s": self.tpot_p99_s,
            "e2e_p50_s": self.e2e_p50_s, "e2e_p90_s": self.e2e_p90_s, "e2e_p99_s": self.e2e_p99_s,
            "attainment": self.attainment, "goodput_rps": self.goodput_rps, "error_rate": self.error_rate,
            "client_saturated": self.client_saturated, "dispatch_lag_p99_s": self.dispatch_lag_p99_s,
            "sent": self.sent,
        }
        if self.has_rate:
            out["rate"] = self.rate
        if self.verdict is not None:
            out["verdict"] = self.verdict
        if self.ceiling_rps is not None:
            out["ceiling_rps"] = self.ceiling_rps
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Json]) -> PointRow:
        """A row as a reader finds it: a figure of another type reads as missing (None)."""
        def n(key: str) -> float | None:
            return num(data.get(key))

        label, value = data.get("label"), n("value")
        return cls(
            label="" if label is None else str(label), kind=str(data.get("kind") or ""),
            value=value, status=str(data.get("status") or ""),
            exit_code=integer(data.get("exit_code")), complete=flag(data.get("complete")),
            measured=integer(data.get("measured")), good=integer(data.get("good")),
            failed=integer(data.get("failed")), offered_rps=n("offered_rps"), achieved_rps=n("achieved_rps"),
            requests_per_s=n("requests_per_s"), output_tokens_per_s=n("output_tokens_per_s"),
            ttft_p50_s=n("ttft_p50_s"), ttft_p90_s=n("ttft_p90_s"), ttft_p99_s=n("ttft_p99_s"),
            itl_p50_s=n("itl_p50_s"), itl_p90_s=n("itl_p90_s"), itl_p99_s=n("itl_p99_s"),
            tpot_p50_s=n("tpot_p50_s"), tpot_p90_s=n("tpot_p90_s"), tpot_p99_s=n("tpot_p99_s"),
            e2e_p50_s=n("e2e_p50_s"), e2e_p90_s=n("e2e_p90_s"), e2e_p99_s=n("e2e_p99_s"),
            attainment=n("attainment"), goodput_rps=n("goodput_rps"), error_rate=n("error_rate"),
            client_saturated=flag(data.get("client_saturated")), dispatch_lag_p99_s=n("dispatch_lag_p99_s"),
            sent=integer(data.get("sent")), has_rate="rate" in data, rate=n("rate"),
            verdict=text(data.get("verdict")), ceiling_rps=n("ceiling_rps"),
        )
