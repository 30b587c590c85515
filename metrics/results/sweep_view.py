"""sweep.json as a typed, frozen view: what `goodput sweep` planned and measured (loadgen.sweep.document
keeps the state a sweep runs and resumes from). `SweepView.from_json` parses it once, reading a value of
another type as missing, the way the readers always have; `to_json` writes it back key for key."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Literal, TypedDict

from metrics.results.fields import flag, integer, num, obj, objects, text, texts
from metrics.results.frozen_view import frozen, replace
from metrics.results.row_view import PointRow, RowJson
from metrics.results.shared_view import (
    Ceiling,
    CeilingJson,
    EmptyJson,
    ServerInfo,
    ServerJson,
    spec_json,
    spec_lag_threshold_s,
    spec_slo,
)
from metrics.results.versions import SWEEP_SCHEMA_VERSION

if TYPE_CHECKING:
    from metrics.results.summary_parse import Json

PointKind = Literal["rate", "concurrency"]


class PlanJson(TypedDict):
    label: str
    kind: PointKind
    value: float
    duration_s: float | None
    requests: int | None
    warmup_s: float
    seed: int
    role: str


class AutoJson(TypedDict):
    points: int | None
    concurrency: int | None


class ModeJson(TypedDict, total=False):
    """Exactly one of the three."""

    rates: list[float]
    concurrencies: list[int]
    auto: AutoJson


class LengthJson(TypedDict):
    duration_s: float | None
    requests: int | None
    warmup_s: float | None


class SweepPointJson(TypedDict):
    plan: PlanJson | None
    row: RowJson


class SweepHeadJson(TypedDict):
    kind: str
    schema_version: int
    complete: bool | None
    interrupted: bool
    mode: ModeJson


class RateBasisJson(TypedDict, total=False):
    rate_basis: str


class SweepJson(SweepHeadJson, RateBasisJson):
    """sweep.json, key for key (`rate_basis` after `mode` when the sweep says it)."""

    length: LengthJson
    server: ServerJson | EmptyJson
    ceiling: CeilingJson | None
    spec: Mapping[str, Json]  # the run spec's own JSON (loadgen.spec)
    points: list[SweepPointJson]
    missing: list[str]


@frozen
class PointPlan:
    """One planned point: enough to run it again identically (`goodput sweep --resume`)."""

    label: str
    kind: PointKind
    value: float  # requests/s, or requests kept in flight
    duration_s: float | None
    requests: int | None
    warmup_s: float
    seed: int
    role: str = "point"  # "point" (a sweep point), "ceiling" (the throughput ceiling), "probe" (the search)

    @property
    def open_loop(self) -> bool:
        return self.kind == "rate"

    def to_json(self) -> PlanJson:
        return {"label": self.label, "kind": self.kind, "value": self.value, "duration_s": self.duration_s,
                "requests": self.requests, "warmup_s": self.warmup_s, "seed": self.seed, "role": self.role}

    @classmethod
    def from_json(cls, data: object) -> PointPlan:
        """ValueError (one line) when `data` is not a whole plan."""
        if not isinstance(data, dict):
            raise ValueError("a planned point must be an object")
        try:
            return cls(label=str(data["label"]), kind=data["kind"], value=float(data["value"]),
                       duration_s=None if data["duration_s"] is None else float(data["duration_s"]),
                       requests=None if data["requests"] is None else int(data["requests"]),
                       warmup_s=float(data["warmup_s"]), seed=int(data["seed"]), role=str(data.get("role", "point")))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"a planned point is malformed ({exc})") from None


@frozen
class SweepMode:
    """`mode`: exactly one of the rates, the concurrencies, or an auto sweep (points, ceiling concurrency)."""

    rates: tuple[float, ...] | None = None
    concurrencies: tuple[int, ...] | None = None
    auto_points: int | None = None
    auto_concurrency: int | None = None

    @property
    def auto(self) -> bool:
        return self.rates is None and self.concurrencies is None

    def to_json(self) -> ModeJson:
        if self.rates is not None:
            return {"rates": list(self.rates)}
        if self.concurrencies is not None:
            return {"concurrencies": list(self.concurrencies)}
        return {"auto": {"points": self.auto_points, "concurrency": self.auto_concurrency}}

    @classmethod
    def from_json(cls, data: Mapping[str, Json]) -> SweepMode:
        """ValueError when it is none of the three."""
        rates, concurrencies, auto = data.get("rates"), data.get("concurrencies"), data.get("auto")
        if isinstance(rates, list):
            return cls(rates=tuple(v for v in map(num, rates) if v is not None))
        if isinstance(concurrencies, list):
            return cls(concurrencies=tuple(v for v in map(integer, concurrencies) if v is not None))
        if isinstance(auto, dict):
            return cls(auto_points=integer(auto.get("points")), auto_concurrency=integer(auto.get("concurrency")))
        raise ValueError("its mode is none of rates, concurrencies and auto")


@frozen
class SweepLength:
    """`length`: how long every point runs (None: not bounded that way; warmup_s None: the default share)."""

    duration_s: float | None
    requests: int | None
    warmup_s: float | None

    def to_json(self) -> LengthJson:
        return {"duration_s": self.duration_s, "requests": self.requests, "warmup_s": self.warmup_s}


@frozen
class SweepPoint:
    """`points[i]`: the plan (None when it is not a whole one) and the row (pending until the point ran)."""

    plan: PointPlan | None
    row: PointRow


@frozen
class SweepView:
    """sweep.json. `missing`: the labels (and an auto sweep's note) not finished yet."""

    mode: SweepMode
    length: SweepLength
    points: tuple[SweepPoint, ...] = ()
    complete: bool | None = True  # None: the document does not say
    interrupted: bool = False
    rate_basis: str | None = None
    server: ServerInfo | None = None
    ceiling: Ceiling | None = None
    spec: Mapping[str, Json] = field(default_factory=dict)  # the run spec every point starts from (loadgen.spec)
    missing: tuple[str, ...] = ()
    schema_version: int = SWEEP_SCHEMA_VERSION

    def to_json(self) -> SweepJson:
        head: SweepHeadJson = {"kind": "sweep", "schema_version": self.schema_version, "complete": self.complete,
                               "interrupted": self.interrupted, "mode": self.mode.to_json()}
        basis: RateBasisJson = {"rate_basis": self.rate_basis} if self.rate_basis is not None else {}
        return {
            **head, **basis, "length": self.length.to_json(),
            "server": self.server.to_json() if self.server is not None else {},
            "ceiling": self.ceiling.to_json() if self.ceiling is not None else None, "spec": self.spec,
            "points": [{"plan": p.plan.to_json() if p.plan is not None else None, "row": p.row.to_json()}
                       for p in self.points],
            "missing": list(self.missing),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Json]) -> SweepView:
        """sweep.json as read (metrics.results.documents checks that it is one first); a point without a
        row is left out."""
        length = obj(data.get("length"))
        try:
            mode = SweepMode.from_json(obj(data.get("mode")))
        except ValueError:
            mode = SweepMode()
        return cls(
            mode=mode, length=SweepLength(num(length.get("duration_s")), integer(length.get("requests")),
                                          num(length.get("warmup_s"))),
            points=tuple(p for p in map(_point, objects(data.get("points"))) if p is not None),
            complete=flag(data.get("complete")), interrupted=bool(flag(data.get("interrupted"))),
            rate_basis=text(data.get("rate_basis")), server=ServerInfo.from_json(data.get("server")),
            ceiling=Ceiling.from_json(data.get("ceiling")), spec=spec_json(data.get("spec")),
            missing=texts(data.get("missing")), schema_version=integer(data.get("schema_version")) or 0,
        )

    def rows(self) -> list[PointRow]:
        """Every planned point's row, in the order planned."""
        return [p.row for p in self.points]

    @property
    def slo(self) -> dict[str, float]:
        """The SLO every point was judged with (the run spec's)."""
        return spec_slo(self.spec)

    @property
    def lag_threshold_s(self) -> float | None:
        return spec_lag_threshold_s(self.spec)


def _point(data: Mapping[str, Json]) -> SweepPoint | None:
    """A point whose row carries its plan's role ("point" when the plan is not a whole one); None for a point
    without its row."""
    row = data.get("row")
    if not isinstance(row, dict):
        return None
    plan_json = obj(data.get("plan"))
    try:
        plan: PointPlan | None = PointPlan.from_json(plan_json)
    except ValueError:
        plan = None
    return SweepPoint(plan, replace(PointRow.from_json(row), role=str(plan_json.get("role", "point"))))
