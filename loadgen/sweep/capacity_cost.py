"""The `cost` entry of capacity.json (`goodput capacity --gpu-hour-cost`): what serving costs at the measured
SLO capacity, one replica serving that rate; with --target-rate, the replicas that rate needs. The mean output
tokens per request are measured too: completed output tokens / completed requests over the runs at the
capacity's rate. Formulas: metrics.model.cost."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from metrics.model.cost import cost_block, cost_lines, read_cost

if TYPE_CHECKING:
    from metrics.model.cost import CostOptions

BASIS = ("measured: one replica at the SLO capacity (capacity.rate); output tokens per request from the runs "
         "at that rate")


def mean_output_tokens_at(rows: list[dict[str, Any]], rate: float | None) -> float | None:
    """Output tokens per completed request over the runs probed at `rate` (their tokens/s over their req/s)."""
    if rate is None:
        return None
    at = [r for r in rows if r.get("rate") == rate and r.get("requests_per_s") and r.get("output_tokens_per_s")
          is not None]
    requests = sum(float(r["requests_per_s"]) for r in at)
    return sum(float(r["output_tokens_per_s"]) for r in at) / requests if requests else None


def with_cost(doc: dict[str, Any], costs: CostOptions | None) -> dict[str, Any]:
    """`doc` with its `cost` entry (unchanged when no cost was asked for)."""
    if costs is None:
        return doc
    rate = doc["capacity"].get("rate")
    block = cost_block(rate, mean_output_tokens_at(doc.get("points") or [], rate),
                       gpu_hour_cost=costs.gpu_hour_cost, gpus_per_replica=costs.gpus_per_replica,
                       target_rps=costs.target_rate)
    return {**doc, "cost": {**block, "basis": BASIS}}


def cost_console_lines(doc: dict[str, Any]) -> list[str]:
    block = read_cost(doc.get("cost"))
    if block is None:
        return []
    cap = doc.get("capacity") or {}
    return cost_lines(block, capacity_at_least=cap.get("rate") is not None and cap.get("upper") is None)
