"""predict.json's `measured`: each --measured directory held against the prediction, point by point (the
error of each percentile, of the attainment) and in its capacity. Typed, frozen views; `to_json` writes
them as predict.json has them, key for key."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from metrics.results.fields import flag, integer, num, obj, obj_or_none, objects, text, texts
from metrics.results.frozen_view import frozen
from metrics.results.predict_json import (
    BandJson,
    CapacityComparisonJson,
    ComparisonJson,
    FiguresJson,
    LatencyTable,
    MeasuredCapacityJson,
    MeasuredJson,
)
from metrics.results.shared_view import numbers

if TYPE_CHECKING:
    from metrics.results.summary_parse import Json


def latency_table(value: Json) -> LatencyTable:
    """{metric: {percentile: number or None}} as read (anything else left out)."""
    return {str(m): {str(p): num(v) for p, v in obj(row).items()} for m, row in obj(value).items()
            if isinstance(row, dict)}


@frozen
class PredictedBand:
    """The predicted capacity (req/s) and its band from the fit's standard errors; `probes`: the search's
    (rate, attainment) pairs."""

    rate: float
    low: float
    high: float
    probes: tuple[tuple[float, float], ...] = ()

    def to_json(self) -> BandJson:
        return {"rate": self.rate, "low": self.low, "high": self.high,
                "probes": [{"rate": r, "attainment": a} for r, a in self.probes]}

    @classmethod
    def from_json(cls, data: Mapping[str, Json]) -> PredictedBand:
        probes = tuple((num(p.get("rate")) or 0.0, num(p.get("attainment")) or 0.0) for p in objects(data.get("probes")))
        return cls(num(data.get("rate")) or 0.0, num(data.get("low")) or 0.0, num(data.get("high")) or 0.0, probes)


@frozen
class MeasuredFigures:
    """A measured point's figures, as its row has them."""

    latency_s: LatencyTable
    attainment: float | None
    good: int | None
    measured: int | None
    output_tokens_per_s: float | None
    client_saturated: bool

    def to_json(self) -> FiguresJson:
        return {"latency_s": self.latency_s, "attainment": self.attainment, "good": self.good,
                "measured": self.measured, "output_tokens_per_s": self.output_tokens_per_s,
                "client_saturated": self.client_saturated}

    @classmethod
    def from_json(cls, data: Mapping[str, Json]) -> MeasuredFigures:
        return cls(latency_table(data.get("latency_s")), num(data.get("attainment")), integer(data.get("good")),
                   integer(data.get("measured")), num(data.get("output_tokens_per_s")),
                   bool(flag(data.get("client_saturated"))))


@frozen
class PointComparison:
    """One measured point against the prediction at its offered rate; errors in % (attainment's in
    percentage points, None where the SLOs differ)."""

    label: str
    rate: float
    measured: MeasuredFigures
    predicted_latency_s: LatencyTable
    predicted_attainment: float | None
    predicted_output_tokens_per_s: float | None
    error_pct: LatencyTable
    attainment_error_pp: float | None

    def to_json(self) -> ComparisonJson:
        return {"label": self.label, "rate": self.rate, "measured": self.measured.to_json(),
                "predicted": {"latency_s": self.predicted_latency_s, "attainment": self.predicted_attainment,
                              "output_tokens_per_s": self.predicted_output_tokens_per_s},
                "error_pct": self.error_pct, "attainment_error_pp": self.attainment_error_pp}

    @classmethod
    def from_json(cls, data: Mapping[str, Json]) -> PointComparison:
        predicted = obj(data.get("predicted"))
        return cls(str(data.get("label")), num(data.get("rate")) or 0.0, MeasuredFigures.from_json(obj(data.get("measured"))),
                   latency_table(predicted.get("latency_s")), num(predicted.get("attainment")),
                   num(predicted.get("output_tokens_per_s")), latency_table(data.get("error_pct")),
                   num(data.get("attainment_error_pp")))


@frozen
class MeasuredCapacity:
    """The capacity a measured directory shows: a search's own, or read from a sweep's points."""

    rate: float | None
    upper: float | None
    target: float
    status: str
    basis: str

    def to_json(self) -> MeasuredCapacityJson:
        return {"rate": self.rate, "upper": self.upper, "target": self.target, "status": self.status,
                "basis": self.basis}

    @classmethod
    def from_json(cls, data: Mapping[str, Json]) -> MeasuredCapacity:
        return cls(num(data.get("rate")), num(data.get("upper")), num(data.get("target")) or 0.0,
                   str(data.get("status") or ""), str(data.get("basis") or ""))


@frozen
class CapacityComparison:
    """The measured capacity against the predicted band; `error_pct` None where they are not comparable."""

    measured: MeasuredCapacity
    predicted: PredictedBand
    error_pct: float | None
    comparable: bool

    def to_json(self) -> CapacityComparisonJson:
        return {"measured": self.measured.to_json(), "predicted": self.predicted.to_json(),
                "error_pct": self.error_pct, "comparable": self.comparable}

    @classmethod
    def from_json(cls, data: Mapping[str, Json]) -> CapacityComparison:
        return cls(MeasuredCapacity.from_json(obj(data.get("measured"))), PredictedBand.from_json(obj(data.get("predicted"))),
                   num(data.get("error_pct")), bool(flag(data.get("comparable"))))


@frozen
class MeasuredComparison:
    """`measured[i]`: one --measured directory (run, sweep or capacity) held against the prediction."""

    path: str
    label: str
    kind: str  # run | sweep | capacity
    workload_differences: tuple[str, ...]
    notes: tuple[str, ...]
    slo: dict[str, float]
    slo_compared: bool  # False: its attainment was judged by another SLO
    points: tuple[PointComparison, ...]
    capacity: CapacityComparison | None

    def to_json(self) -> MeasuredJson:
        return {"path": self.path, "label": self.label, "kind": self.kind,
                "workload_differences": list(self.workload_differences), "notes": list(self.notes),
                "slo": dict(self.slo), "slo_compared": self.slo_compared, "points": [p.to_json() for p in self.points],
                "capacity": self.capacity.to_json() if self.capacity is not None else None}

    @classmethod
    def from_json(cls, data: Mapping[str, Json]) -> MeasuredComparison:
        capacity = obj_or_none(data.get("capacity"))
        return cls(str(data.get("path") or ""), str(data.get("label") or ""), text(data.get("kind")) or "",
                   texts(data.get("workload_differences")), texts(data.get("notes")),
                   numbers(data.get("slo")),
                   bool(flag(data.get("slo_compared"))), tuple(PointComparison.from_json(p) for p in objects(data.get("points"))),
                   CapacityComparison.from_json(capacity) if capacity is not None else None)
