"""The `cost` entry of capacity.json (`goodput capacity --gpu-hour-cost`): what serving costs at the measured
SLO capacity, one replica serving that rate; with --target-rate, the replicas that rate needs. The mean output
tokens per request are measured too: completed output tokens / completed requests over the runs at the
capacity's rate. Formulas: metrics.model.cost."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from metrics.model import cost_block, cost_lines, read_cost
from metrics.results import CapacityView, PointRow, replace

if TYPE_CHECKING:
    from metrics.model import CostOptions

BASIS = ("measured: one replica at the SLO capacity (capacity.rate); output tokens per request from the runs "
         "at that rate")


def mean_output_tokens_at(rows: Sequence[PointRow], rate: float | None) -> float | None:
    """Output tokens per completed request over the runs probed at `rate` (their tokens/s over their req/s)."""
    if rate is None:
        return None
    at = [r for r in rows if r.rate == rate and r.requests_per_s and r.output_tokens_per_s is not None]
    requests = sum(float(r.requests_per_s or 0.0) for r in at)
    return sum(float(r.output_tokens_per_s or 0.0) for r in at) / requests if requests else None


def with_cost(doc: CapacityView, costs: CostOptions | None) -> CapacityView:
    """`doc` with its `cost` entry (unchanged when no cost was asked for)."""
    if costs is None:
        return doc
    rate = doc.capacity.rate
    block = cost_block(rate, mean_output_tokens_at(doc.points, rate),
                       gpu_hour_cost=costs.gpu_hour_cost, gpus_per_replica=costs.gpus_per_replica,
                       target_rps=costs.target_rate)
    return replace(doc, cost={**block, "basis": BASIS})


def cost_console_lines(doc: CapacityView) -> list[str]:
    block = read_cost(doc.cost)
    if block is None:
        return []
    cap = doc.capacity
    return cost_lines(block, capacity_at_least=cap.rate is not None and cap.upper is None)
