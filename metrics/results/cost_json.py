"""The `cost` entry of capacity.json and predict.json, key for key, as metrics.model.cost's cost_block draws
it. A document read back keeps the entry as it found it, as checked JSON: a reader takes
the typed figures from it with metrics.model.read_cost."""

from __future__ import annotations

from typing import NotRequired, TypedDict


class CostTargetJson(TypedDict):
    """`cost.target`: the replicas a target rate needs and their cost (unknown without a capacity)."""

    rate: float
    replicas: int | None
    cost_per_hour: float | None
    gpus: NotRequired[int]
    per_million_requests: NotRequired[float]


class CostJson(TypedDict):
    """predict.json's `cost`: the figures at one replica's capacity; `reason` says why a figure is None."""

    gpu_hour_cost: float
    gpus_per_replica: int
    cost_per_hour_per_replica: float
    rate: float | None
    mean_output_tokens: float | None
    per_million_requests: float | None
    per_million_output_tokens: float | None
    reason: NotRequired[str]
    target: NotRequired[CostTargetJson]


class CapacityCostJson(CostJson):
    """capacity.json's `cost`: the same figures and the `basis` they were measured on."""

    basis: str
