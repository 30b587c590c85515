"""`--gpu-hour-cost`, `--gpus-per-replica` and `--target-rate` of `goodput capacity` and `goodput plan`: checked
here, turned into figures by metrics.model.cost."""

from __future__ import annotations

import math

from metrics.model import CostOptions

COST = "Cost"
GPU_HOUR_COST_HELP = "Dollars per GPU-hour: adds the cost per million output tokens and per million requests."
GPUS_PER_REPLICA_HELP = "GPUs each replica of the server holds (with --gpu-hour-cost)."
TARGET_RATE_HELP = "A rate to serve, req/s: adds the replicas it needs and their cost (with --gpu-hour-cost)."


def _finite_positive(value: float, flag: str) -> None:
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{flag} must be a finite number > 0, got {value:g}")


def parse_cost_options(gpu_hour_cost: float | None, gpus_per_replica: int | None, target_rate: float | None, *,
                       default_gpus: int = 1) -> CostOptions | None:
    """None when no cost was asked for; ValueError (one line) on a bad value or a flag without --gpu-hour-cost."""
    if gpu_hour_cost is None:
        extra = [f for f, v in (("--gpus-per-replica", gpus_per_replica), ("--target-rate", target_rate))
                 if v is not None]
        if extra:
            raise ValueError(f"{' and '.join(extra)} {'need' if len(extra) > 1 else 'needs'} --gpu-hour-cost USD")
        return None
    _finite_positive(gpu_hour_cost, "--gpu-hour-cost")
    if gpus_per_replica is not None and gpus_per_replica < 1:
        raise ValueError(f"--gpus-per-replica must be >= 1, got {gpus_per_replica}")
    if target_rate is not None:
        _finite_positive(target_rate, "--target-rate")
    return CostOptions(gpu_hour_cost=gpu_hour_cost, gpus_per_replica=gpus_per_replica or default_gpus,
                       target_rate=target_rate)
