"""predict.json's shape, key for key: the TypedDicts its views (predict_view, predict_compare_view) write."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, NotRequired, TypedDict

from metrics.results.cost_json import CostJson

if TYPE_CHECKING:
    from metrics.results.summary_parse import Json

LatencyTable = dict[str, dict[str, float | None]]  # ttft | tpot | e2e → p50 | p90 | p99 → seconds (or %)


class ProbeJson(TypedDict):
    rate: float
    attainment: float


class BandJson(TypedDict):
    rate: float
    low: float
    high: float
    probes: list[ProbeJson]


class CapacityPredictedJson(TypedDict):
    attainment: float
    rate: float
    low: float
    high: float
    probes: list[ProbeJson]
    note: NotRequired[str]


class PointPredictedJson(TypedDict):
    rate: float
    requests: int
    latency_s: LatencyTable
    attainment: float | None
    output_tokens_per_s: float | None
    preemptions: int


class ParamJson(TypedDict):
    value: float
    std_err: float | None


class ServerModelJson(TypedDict):
    path: str
    form: str
    params: dict[str, ParamJson]
    limits: dict[str, int | bool | None]


class FiguresJson(TypedDict):
    latency_s: LatencyTable
    attainment: float | None
    good: int | None
    measured: int | None
    output_tokens_per_s: float | None
    client_saturated: bool


class PredictedFiguresJson(TypedDict):
    latency_s: LatencyTable
    attainment: float | None
    output_tokens_per_s: float | None


class ComparisonJson(TypedDict):
    label: str
    rate: float
    measured: FiguresJson
    predicted: PredictedFiguresJson
    error_pct: LatencyTable
    attainment_error_pp: float | None


class MeasuredCapacityJson(TypedDict):
    rate: float | None
    upper: float | None
    target: float
    status: str
    basis: str


class CapacityComparisonJson(TypedDict):
    measured: MeasuredCapacityJson
    predicted: BandJson
    error_pct: float | None
    comparable: bool


class MeasuredJson(TypedDict):
    path: str
    label: str
    kind: str
    workload_differences: list[str]
    notes: list[str]
    slo: dict[str, float]
    slo_compared: bool
    points: list[ComparisonJson]
    capacity: CapacityComparisonJson | None


class PredictJson(TypedDict):
    """predict.json: `capacity`, `cost` and `measured` only when --capacity, --gpu-hour-cost, --measured."""

    server_model: str
    slo: dict[str, float | None] | None
    replicas: int
    routing: str
    points: list[PointPredictedJson]
    spec: Mapping[str, Json]  # the workload and load sections of the run spec (its own JSON)
    workload: str
    model: ServerModelJson
    capacity: NotRequired[CapacityPredictedJson]
    cost: NotRequired[CostJson | Mapping[str, Json]]  # metrics.model.cost's block (read back: as found)
    measured: NotRequired[list[MeasuredJson]]
