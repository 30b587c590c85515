"""capacity.json as a typed, frozen view: what `goodput capacity` found (loadgen.sweep.capacity_doc draws
the whole document). `CapacityView.from_json` parses it once, reading a value of another type as missing,
the way the readers always have; `to_json` writes it back key for key, in goodput's order."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING, NotRequired, TypedDict

from metrics.results.cost_json import CapacityCostJson
from metrics.results.fields import (
    flag,
    integer,
    interval,
    num,
    obj,
    obj_or_none,
    objects,
    pair_json,
    text,
    texts,
)
from metrics.results.frozen_view import frozen
from metrics.results.row_view import PointRow, RowJson
from metrics.results.shared_view import (
    Ceiling,
    CeilingJson,
    EmptyJson,
    ServerInfo,
    ServerJson,
    numbers,
    spec_json,
)
from metrics.results.versions import CAPACITY_SCHEMA_VERSION

if TYPE_CHECKING:
    from metrics.results.summary_parse import Json


class CapacityFigureJson(TypedDict):
    rate: float | None
    upper: float | None
    attainment: float | None
    interval: list[float] | None
    status: str
    reason: str
    points: int
    requests: int
    target: float
    confidence: float
    interval_method: str
    tolerance: float | None
    min_rate: float | None
    max_rate: float | None
    floor_rate: float | None
    max_points: int | None
    rate_basis: str | None
    client_rule: str | None


class ProbedRateJson(TypedDict):
    rate: float
    verdict: str
    good: int
    measured: int
    attainment: float | None
    interval: list[float] | None
    runs: int
    saturated_runs: int


class CapacityJson(TypedDict):
    """capacity.json, key for key."""

    kind: str
    schema_version: int
    complete: bool | None
    interrupted: bool
    capacity: CapacityFigureJson
    slo: dict[str, float]
    ceiling: CeilingJson | None
    rates: list[ProbedRateJson]
    points: list[RowJson]
    notes: list[str]
    server: ServerJson | EmptyJson
    spec: Mapping[str, Json]  # the run spec's own JSON (loadgen.spec)
    cost: NotRequired[CapacityCostJson | Mapping[str, Json]]  # as goodput drew it, or as read back


@frozen
class CapacityFigure:
    """`capacity`: the claim (the highest rate shown to pass), its bracket, and how the search judged."""

    rate: float | None
    upper: float | None  # the lowest rate not shown to pass
    attainment: float | None
    interval: tuple[float, float] | None
    status: str
    reason: str
    points: int
    requests: int
    target: float
    confidence: float
    interval_method: str
    tolerance: float | None
    min_rate: float | None
    max_rate: float | None
    floor_rate: float | None
    max_points: int | None
    rate_basis: str | None
    client_rule: str | None

    def to_json(self) -> CapacityFigureJson:
        return {"rate": self.rate, "upper": self.upper, "attainment": self.attainment,
                "interval": pair_json(self.interval), "status": self.status, "reason": self.reason,
                "points": self.points, "requests": self.requests, "target": self.target,
                "confidence": self.confidence, "interval_method": self.interval_method, "tolerance": self.tolerance,
                "min_rate": self.min_rate, "max_rate": self.max_rate, "floor_rate": self.floor_rate,
                "max_points": self.max_points, "rate_basis": self.rate_basis, "client_rule": self.client_rule}

    @classmethod
    def from_json(cls, data: Mapping[str, Json]) -> CapacityFigure:
        """target 0.9, confidence 0.95 and the Wilson interval when the document does not say."""
        return cls(num(data.get("rate")), num(data.get("upper")), num(data.get("attainment")),
                   interval(data.get("interval")), str(data.get("status") or ""), str(data.get("reason") or ""),
                   integer(data.get("points")) or 0, integer(data.get("requests")) or 0,
                   num(data.get("target")) or 0.9, num(data.get("confidence")) or 0.95,
                   text(data.get("interval_method")) or "wilson", num(data.get("tolerance")),
                   num(data.get("min_rate")), num(data.get("max_rate")), num(data.get("floor_rate")),
                   integer(data.get("max_points")), text(data.get("rate_basis")), text(data.get("client_rule")))


@frozen
class ProbedRate:
    """`rates`: one probed rate, pooled over its runs that are evidence."""

    rate: float
    verdict: str
    good: int
    measured: int
    attainment: float | None
    interval: tuple[float, float] | None  # None: no run at this rate is evidence
    runs: int
    saturated_runs: int

    def to_json(self) -> ProbedRateJson:
        return {"rate": self.rate, "verdict": self.verdict, "good": self.good, "measured": self.measured,
                "attainment": self.attainment, "interval": pair_json(self.interval), "runs": self.runs,
                "saturated_runs": self.saturated_runs}

    @classmethod
    def from_json(cls, data: Mapping[str, Json]) -> ProbedRate | None:
        """None for an entry without a rate (left out)."""
        rate = num(data.get("rate"))
        if rate is None:
            return None
        return cls(rate, str(data.get("verdict")), integer(data.get("good")) or 0, integer(data.get("measured")) or 0,
                   num(data.get("attainment")), interval(data.get("interval")), integer(data.get("runs")) or 0,
                   integer(data.get("saturated_runs")) or 0)


@frozen
class CapacityView:
    """capacity.json. `complete`: the search ended by its own rule; `points`: one row per run, as run."""

    capacity: CapacityFigure
    complete: bool | None = True  # None: the document does not say
    interrupted: bool = False
    slo: dict[str, float] = field(default_factory=dict)  # the SLO's set fields
    ceiling: Ceiling | None = None
    rates: tuple[ProbedRate, ...] = ()
    points: tuple[PointRow, ...] = ()
    notes: tuple[str, ...] = ()
    server: ServerInfo | None = None
    spec: Mapping[str, Json] = field(default_factory=dict)  # the run spec every probe starts from (loadgen.spec)
    cost: CapacityCostJson | Mapping[str, Json] | None = None  # `--gpu-hour-cost`: cost_json; a read one as found
    schema_version: int = CAPACITY_SCHEMA_VERSION

    def to_json(self) -> CapacityJson:
        out: CapacityJson = {
            "kind": "capacity", "schema_version": self.schema_version, "complete": self.complete,
            "interrupted": self.interrupted, "capacity": self.capacity.to_json(), "slo": dict(self.slo),
            "ceiling": self.ceiling.to_json() if self.ceiling is not None else None,
            "rates": [r.to_json() for r in self.rates], "points": [p.to_json() for p in self.points],
            "notes": list(self.notes), "server": self.server.to_json() if self.server is not None else {},
            "spec": self.spec,
        }
        if self.cost is not None:
            out["cost"] = self.cost
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Json]) -> CapacityView:
        """capacity.json as read (metrics.results.documents checks that it is one first)."""
        slo = numbers(data.get("slo"))
        rates = (ProbedRate.from_json(e) for e in objects(data.get("rates")))
        return cls(
            capacity=CapacityFigure.from_json(obj(data.get("capacity"))),
            complete=flag(data.get("complete")), interrupted=bool(flag(data.get("interrupted"))),
            slo=slo, ceiling=Ceiling.from_json(data.get("ceiling")), rates=tuple(r for r in rates if r is not None),
            points=tuple(PointRow.from_json(r) for r in objects(data.get("points"))), notes=texts(data.get("notes")),
            server=ServerInfo.from_json(data.get("server")), spec=spec_json(data.get("spec")),
            cost=obj_or_none(data.get("cost")), schema_version=integer(data.get("schema_version")) or 0,
        )
