"""The cost table of the capacity page (capacity.json 'cost', `goodput capacity --gpu-hour-cost`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from exporters.html import fmt
from exporters.html.page import Cell, Table
from metrics.results import CAPACITY_FILE

if TYPE_CHECKING:
    from metrics.results import CostJson, Json


def _usd(value: Json) -> str:
    if value is None:
        return fmt.NONE
    if not isinstance(value, int | float | str):
        raise TypeError(f"a cost is a number, not {value!r}")
    return f"${float(value):,.2f}"


def cost_table(cost: CostJson | Mapping[str, Json] | None, *, capacity_upper: float | None = None, source: str = CAPACITY_FILE) -> Table | None:
    """The document's 'cost' entry (metrics.model.cost's block); None when it has none (no cost was asked
    for). `source`: the file whose 'cost' it shows (a search's capacity can be known only from below, when
    `capacity_upper` is None; a predicted one, predict.json's, cannot)."""
    if cost is None:
        return None
    rate = cost.get("rate")
    from_below = source == CAPACITY_FILE and rate is not None and capacity_upper is None
    rows: list[list[str | Cell]] = [
        ["GPU-hour cost x GPUs per replica", f"${cost.get('gpu_hour_cost', 0):g} x {cost.get('gpus_per_replica')} = "
                                             f"{_usd(cost.get('cost_per_hour_per_replica'))} an hour per replica"],
        ["rate (one replica at the SLO capacity)", fmt.NONE if rate is None else f"{rate:g} req/s"],
        ["output tokens per request at that rate", fmt.NONE if cost.get("mean_output_tokens") is None
         else f"{cost['mean_output_tokens']:,.1f}"],
        ["per million requests", _usd(cost.get("per_million_requests"))],
        ["per million output tokens", _usd(cost.get("per_million_output_tokens"))],
    ]
    target = cost.get("target")
    if isinstance(target, dict):
        replicas = target.get("replicas")
        rows.append([f"replicas for {target.get('rate'):g} req/s",
                     fmt.NONE if replicas is None else f"{replicas} ({target.get('gpus')} GPUs, "
                                                       f"{_usd(target.get('cost_per_hour'))} an hour, "
                                                       f"{_usd(target.get('per_million_requests'))} per million requests)"])
    note = str(cost.get("reason") or cost.get("basis") or "")
    if from_below:
        note += ("; the capacity is known only from below (nothing above it failed): costs and replicas are at "
                 "most these")
    return Table(f"Cost at the capacity ({source} 'cost')", ["figure", "value"], rows, note)
