"""What serving costs: dollars per million output tokens and per million requests at a sustained rate, the
replicas a target rate needs, and energy per output token from power samples (docs/capacity.md).

One function per formula, plain floats in and out. A deployment is `replicas` copies of a server that
each hold `gpus_per_replica` GPUs billed at `gpu_hour_cost` dollars an hour; `rate_rps` is the rate the
whole deployment sustains (for one replica at its measured capacity, that capacity).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from metrics.results import int_or_none, number_or_none

if TYPE_CHECKING:
    from metrics.results import CostJson, CostTargetJson

SECONDS_PER_HOUR = 3600.0
MILLION = 1e6


@dataclass(frozen=True, slots=True)
class CostOptions:
    """What the user pays for (`--gpu-hour-cost`, `--gpus-per-replica`) and the rate to serve (`--target-rate`)."""

    gpu_hour_cost: float
    gpus_per_replica: int
    target_rate: float | None = None


def check_positive(value: float, flag: str) -> float:
    """`value` when it is a finite number > 0; ValueError naming `flag` otherwise."""
    if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise ValueError(f"{flag} must be a finite number > 0, got {value}")
    return float(value)


def deployment_cost_per_hour(*, gpu_hour_cost: float, gpus_per_replica: int, replicas: int = 1) -> float:
    """Dollars an hour for the whole deployment: gpu_hour_cost × gpus_per_replica × replicas."""
    return gpu_hour_cost * gpus_per_replica * replicas


def cost_per_million_requests(rate_rps: float, *, gpu_hour_cost: float, gpus_per_replica: int,
                              replicas: int = 1) -> float:
    """Dollars per million requests served at `rate_rps` (the deployment's total rate, > 0):
    cost per hour / (rate × 3600) × 10⁶."""
    check_positive(rate_rps, "rate")
    hourly = deployment_cost_per_hour(gpu_hour_cost=gpu_hour_cost, gpus_per_replica=gpus_per_replica,
                                      replicas=replicas)
    return hourly / (rate_rps * SECONDS_PER_HOUR) * MILLION


def cost_per_million_output_tokens(rate_rps: float, mean_output_tokens: float, *, gpu_hour_cost: float,
                                   gpus_per_replica: int, replicas: int = 1) -> float:
    """Dollars per million output tokens at `rate_rps` requests/s of `mean_output_tokens` each (> 0):
    cost per million requests / mean output tokens."""
    check_positive(mean_output_tokens, "mean output tokens")
    return cost_per_million_requests(rate_rps, gpu_hour_cost=gpu_hour_cost, gpus_per_replica=gpus_per_replica,
                                     replicas=replicas) / mean_output_tokens


def replicas_needed(target_rps: float, capacity_rps: float) -> int:
    """The fewest replicas of capacity `capacity_rps` each that sustain `target_rps`: ⌈target / capacity⌉.
    ValueError when the capacity is not > 0 (no number of replicas serves a rate then)."""
    check_positive(target_rps, "target rate")
    if not (math.isfinite(capacity_rps) and capacity_rps > 0):
        raise ValueError(f"a replica's capacity is {capacity_rps} req/s: no number of replicas reaches "
                         f"{target_rps:g} req/s")
    # A ratio that is a whole number up to float rounding (3.0000000000000004) needs that many, not one more.
    ratio = target_rps / capacity_rps
    return max(1, math.ceil(ratio - 1e-9 * ratio))


def energy_joules(times_s: Sequence[float], watts: Sequence[float], *, start_s: float | None = None,
                  end_s: float | None = None) -> float | None:
    """Energy of power samples (watts at increasing times, seconds): the trapezoid rule over the samples,
    the power taken as linear between them, cut to [start_s, end_s] when given (interpolated at the cuts;
    never extrapolated past the first or last sample). None with fewer than two samples in reach."""
    if len(times_s) != len(watts):
        raise ValueError("energy_joules: times and watts differ in length")
    lo = times_s[0] if start_s is None or not times_s else max(start_s, times_s[0])
    hi = times_s[-1] if end_s is None or not times_s else min(end_s, times_s[-1])
    if len(times_s) < 2 or hi <= lo:
        return None
    total = 0.0
    for (t0, w0), (t1, w1) in zip(zip(times_s, watts, strict=True), zip(times_s[1:], watts[1:], strict=True),
                                  strict=False):
        a, b = max(t0, lo), min(t1, hi)
        if b <= a or t1 <= t0:
            continue
        slope = (w1 - w0) / (t1 - t0)
        wa, wb = w0 + slope * (a - t0), w0 + slope * (b - t0)
        total += (wa + wb) / 2 * (b - a)
    return total


def joules_per_output_token(energy_j: float | None, output_tokens: float | None) -> float | None:
    """Energy / output tokens; None when either is unknown or no token was produced."""
    if energy_j is None or not output_tokens:
        return None
    return energy_j / output_tokens


def cost_block(capacity_rps: float | None, mean_output_tokens: float | None, *, gpu_hour_cost: float,
               gpus_per_replica: int, target_rps: float | None = None) -> CostJson:
    """The `cost` entry of capacity.json and of `goodput plan --json`: the figures at one replica's capacity
    and, with a target, the replicas it needs and the cost of serving exactly the target on them. A figure
    that cannot be known (no capacity, no output tokens) is None, with `reason` saying why."""
    block: CostJson = {
        "gpu_hour_cost": gpu_hour_cost, "gpus_per_replica": gpus_per_replica,
        "cost_per_hour_per_replica": deployment_cost_per_hour(gpu_hour_cost=gpu_hour_cost,
                                                              gpus_per_replica=gpus_per_replica),
        "rate": capacity_rps, "mean_output_tokens": mean_output_tokens,
        "per_million_requests": None, "per_million_output_tokens": None,
    }
    if capacity_rps is None or capacity_rps <= 0:
        block["reason"] = "no capacity: no rate was shown to meet the SLO"
    else:
        block["per_million_requests"] = cost_per_million_requests(
            capacity_rps, gpu_hour_cost=gpu_hour_cost, gpus_per_replica=gpus_per_replica)
        if mean_output_tokens:
            block["per_million_output_tokens"] = cost_per_million_output_tokens(
                capacity_rps, mean_output_tokens, gpu_hour_cost=gpu_hour_cost, gpus_per_replica=gpus_per_replica)
        else:
            block["reason"] = "no output tokens were measured at this rate"
    if target_rps is not None:
        target: CostTargetJson = {"rate": target_rps, "replicas": None, "cost_per_hour": None}
        if capacity_rps is not None and capacity_rps > 0:
            n = replicas_needed(target_rps, capacity_rps)
            target["replicas"] = n
            target["cost_per_hour"] = deployment_cost_per_hour(gpu_hour_cost=gpu_hour_cost,
                                                               gpus_per_replica=gpus_per_replica, replicas=n)
            target["gpus"] = n * gpus_per_replica  # after cost_per_hour, as written before
            target["per_million_requests"] = cost_per_million_requests(
                target_rps, gpu_hour_cost=gpu_hour_cost, gpus_per_replica=gpus_per_replica, replicas=n)
        block["target"] = target
    return block


def read_cost(raw: object) -> CostJson | None:
    """A `cost` entry read back from a document (capacity.json), checked once; None when it is not one."""
    if not isinstance(raw, dict):
        return None
    hour, hourly = number_or_none(raw.get("gpu_hour_cost")), number_or_none(raw.get("cost_per_hour_per_replica"))
    gpus = int_or_none(raw.get("gpus_per_replica"))
    if hour is None or hourly is None or gpus is None:
        return None
    block: CostJson = {
        "gpu_hour_cost": hour, "gpus_per_replica": gpus, "cost_per_hour_per_replica": hourly,
        "rate": number_or_none(raw.get("rate")),
        "mean_output_tokens": number_or_none(raw.get("mean_output_tokens")),
        "per_million_requests": number_or_none(raw.get("per_million_requests")),
        "per_million_output_tokens": number_or_none(raw.get("per_million_output_tokens"))}
    if isinstance(reason := raw.get("reason"), str):
        block["reason"] = reason
    target = raw.get("target")
    if isinstance(target, dict) and (rate := number_or_none(target.get("rate"))) is not None:
        replicas, gpus_n = target.get("replicas"), target.get("gpus")
        checked: CostTargetJson = {"rate": rate, "replicas": replicas if isinstance(replicas, int) else None,
                                   "cost_per_hour": number_or_none(target.get("cost_per_hour"))}
        if isinstance(gpus_n, int):
            checked["gpus"] = gpus_n
        if (per_million := number_or_none(target.get("per_million_requests"))) is not None:
            checked["per_million_requests"] = per_million
        block["target"] = checked
    return block


def cost_lines(block: CostJson, *, bound: bool = False, capacity_at_least: bool = False) -> list[str]:
    """The cost figures in words, for the console. `bound`: the rate is a roofline ceiling, so costs and
    replicas are at least these; `capacity_at_least`: the measured capacity is a lower bound (nothing above it
    failed), so they are at most these."""
    at_least = "at least " if bound else "at most " if capacity_at_least else ""
    hourly = float(block["cost_per_hour_per_replica"])
    head = (f"cost: ${block['gpu_hour_cost']:g}/GPU-hour x {block['gpus_per_replica']} GPU(s) per replica "
            f"= ${hourly:,.2f}/hour per replica")
    lines = [head]
    rate, per_million = block["rate"], block["per_million_requests"]
    if per_million is None or rate is None:
        lines.append(f"  cost per million requests: unknown ({block.get('reason', 'no capacity')})")
    else:
        where = "at the throughput bound" if bound else "at the SLO capacity"
        per_token = block["per_million_output_tokens"]
        lines.append(f"  {where} {float(rate):.3g} req/s: {at_least}"
                     f"${float(per_million):,.2f} per million requests"
                     + (f", {at_least}${float(per_token):,.2f} per million output tokens"
                        if per_token is not None else ""))
    target = block.get("target")
    if isinstance(target, dict):
        if target.get("replicas") is None:
            lines.append(f"  target {target['rate']:g} req/s: replicas unknown (no capacity)")
        else:
            fewest = at_least
            lines.append(f"  target {target['rate']:g} req/s: {fewest}{target['replicas']} replica(s) "
                         f"({target['gpus']} GPUs), ${target['cost_per_hour']:,.2f}/hour, "
                         f"{at_least}${target['per_million_requests']:,.2f} per million requests")
    return lines
