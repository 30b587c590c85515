"""predict.json as a typed, frozen view: what `goodput predict` predicted (per rate, the capacity with its
band) and how it compares with each --measured directory. `PredictView.to_json` writes predict.json key for
key; `from_json` reads one back (a value of another type reads as missing). The comparisons are in
predict_compare_view."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from metrics.results.cost_json import CostJson
from metrics.results.fields import integer, num, obj, obj_or_none, objects, text
from metrics.results.frozen_view import frozen
from metrics.results.predict_compare_view import MeasuredComparison, PredictedBand, latency_table
from metrics.results.predict_json import (
    CapacityPredictedJson,
    PointPredictedJson,
    PredictJson,
    ServerModelJson,
)

if TYPE_CHECKING:
    from metrics.results.summary_parse import Json

Limits = dict[str, int | bool | None]  # the scheduler limits the server model holds (max_num_seqs, ...)


@frozen
class PredictedPoint:
    """`points[i]`: one predicted rate, a virtual run of the workload."""

    rate: float
    requests: int
    latency_s: dict[str, dict[str, float | None]]  # ttft | tpot | e2e → p50 | p90 | p99, seconds
    attainment: float | None  # None without an SLO
    output_tokens_per_s: float | None
    preemptions: int

    def to_json(self) -> PointPredictedJson:
        return {"rate": self.rate, "requests": self.requests, "latency_s": self.latency_s,
                "attainment": self.attainment, "output_tokens_per_s": self.output_tokens_per_s,
                "preemptions": self.preemptions}

    @classmethod
    def from_json(cls, data: Mapping[str, Json]) -> PredictedPoint:
        return cls(num(data.get("rate")) or 0.0, integer(data.get("requests")) or 0, latency_table(data.get("latency_s")),
                   num(data.get("attainment")), num(data.get("output_tokens_per_s")),
                   integer(data.get("preemptions")) or 0)


@frozen
class ParamFit:
    value: float
    std_err: float | None


@frozen
class ServerModelInfo:
    """`model`: the server model predicted with: its file, step-time form, fitted parameters and limits."""

    path: str
    form: str  # overlapped | additive
    params: dict[str, ParamFit]
    limits: Limits

    def to_json(self) -> ServerModelJson:
        return {"path": self.path, "form": self.form,
                "params": {n: {"value": p.value, "std_err": p.std_err} for n, p in self.params.items()},
                "limits": dict(self.limits)}

    @classmethod
    def from_json(cls, data: Mapping[str, Json]) -> ServerModelInfo:
        params = {str(n): ParamFit(num(p.get("value")) or 0.0, num(p.get("std_err")))
                  for n, p in obj(data.get("params")).items() if isinstance(p, dict)}
        limits: Limits = {str(k): v for k, v in obj(data.get("limits")).items()
                          if v is None or isinstance(v, int | bool)}
        return cls(str(data.get("path") or ""), str(data.get("form") or ""), params, limits)


@frozen
class PredictedCapacity:
    """`capacity`: the highest rate predicted to meet `attainment` of the SLO, its band, and a note when the
    predicted attainment is not monotone in the rate."""

    attainment: float  # the target
    band: PredictedBand
    note: str | None = None

    def to_json(self) -> CapacityPredictedJson:
        band = self.band.to_json()
        out: CapacityPredictedJson = {"attainment": self.attainment, "rate": band["rate"], "low": band["low"],
                                      "high": band["high"], "probes": band["probes"]}
        if self.note is not None:
            out["note"] = self.note
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Json]) -> PredictedCapacity:
        return cls(num(data.get("attainment")) or 0.0, PredictedBand.from_json(data), text(data.get("note")))


@frozen
class PredictView:
    """predict.json. `spec`: the workload and load sections of the run spec predicted (its own JSON)."""

    server_model: str
    slo: dict[str, float | None] | None  # every SLO field, None where not set; None: no SLO given
    replicas: int
    routing: str
    points: tuple[PredictedPoint, ...]
    spec: Mapping[str, Json]
    workload: str
    model: ServerModelInfo
    capacity: PredictedCapacity | None = None
    cost: CostJson | Mapping[str, Json] | None = None  # --gpu-hour-cost: cost_json (read back: as found)
    measured: tuple[MeasuredComparison, ...] | None = None  # None: no --measured given

    def to_json(self) -> PredictJson:
        out: PredictJson = {"server_model": self.server_model, "slo": self.slo, "replicas": self.replicas,
                            "routing": self.routing, "points": [p.to_json() for p in self.points],
                            "spec": self.spec, "workload": self.workload, "model": self.model.to_json()}
        if self.capacity is not None:
            out["capacity"] = self.capacity.to_json()
        if self.cost is not None:
            out["cost"] = self.cost
        if self.measured is not None:
            out["measured"] = [m.to_json() for m in self.measured]
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Json]) -> PredictView:
        slo = obj_or_none(data.get("slo"))
        capacity = obj_or_none(data.get("capacity"))
        measured = data.get("measured")
        return cls(
            server_model=str(data.get("server_model")),
            slo={str(k): num(v) for k, v in slo.items()} if slo is not None else None,
            replicas=integer(data.get("replicas")) or 1, routing=text(data.get("routing")) or "round-robin",
            points=tuple(PredictedPoint.from_json(p) for p in objects(data.get("points"))),
            spec=obj(data.get("spec")), workload=str(data.get("workload") or ""),
            model=ServerModelInfo.from_json(obj(data.get("model"))),
            capacity=PredictedCapacity.from_json(capacity) if capacity is not None else None,
            cost=obj_or_none(data.get("cost")),
            measured=tuple(MeasuredComparison.from_json(m) for m in objects(measured))
            if isinstance(measured, list) else None,
        )
