"""Measured latency next to the roofline floors of the deployment (docs/capacity.md, latency floors), in the run summary.

The spec comes from `--model-config`/`--gpu` on `goodput run`, or from the target itself when it is the
reference server's sim engine (its `/v1/models` entry says `"engine": "sim"` and what it simulates).
Floors are computed for the run's own shape: mean prompt and output tokens of the measured requests,
mean cached tokens, and the mean number of requests in flight (Little's law: completion rate × mean
E2E) as the decode batch. A floor is a bound no server can beat, not a prediction: the ratio
measured / floor says how far from the hardware's limit the deployment runs.
"""

from __future__ import annotations

from typing import Any

from metrics.model import floors


def spec_from_models_entry(entry: dict[str, Any]) -> dict[str, Any] | None:
    """The roofline spec of a sim-engine target, from its `/v1/models` entry; None for anything else."""
    sim = entry.get("sim")
    if entry.get("engine") != "sim" or not isinstance(sim, dict):
        return None
    return {"model": sim.get("sim_model"), "gpu": sim.get("sim_gpu"), "tp": sim.get("tp", 1),
            "dtype": sim.get("dtype", "bf16"), "kv_dtype": sim.get("kv_dtype"), "source": "sim engine",
            "sim_efficiency": sim.get("efficiency")}


def _mean(summary: dict[str, Any], total_key: str) -> float | None:
    tokens = summary.get("tokens", {})
    n = tokens.get("requests") or 0
    total = tokens.get(total_key)
    return total / n if n and total is not None else None


def roofline_section(summary: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """`summary["roofline"]`: the floors for this run's shape and measured p50 / floor ratios."""
    prompt, output, cached = (_mean(summary, k) for k in ("prompt_tokens", "output_tokens", "cached_tokens"))
    latency = summary.get("latency", {})
    rate = summary.get("throughput", {}).get("requests_per_s")
    e2e_mean = latency.get("e2e_s", {}).get("mean")
    in_flight = rate * e2e_mean if rate and e2e_mean else 1.0
    out: dict[str, Any] = {"spec": spec}
    if prompt is None or output is None:
        out["error"] = "no measured request with known prompt and output tokens"
        return out
    try:
        bound = floors(str(spec["model"]), str(spec["gpu"]), max(1, round(prompt)), max(1, round(output)),
                       batch=max(1, round(in_flight)), weight_dtype=str(spec.get("dtype") or "bf16"),
                       kv_dtype=spec.get("kv_dtype"), tp=int(spec.get("tp") or 1),
                       cached_tokens=min(round(cached or 0), max(0, round(prompt) - 1)))
    except (ValueError, KeyError, OSError) as exc:
        out["error"] = str(exc)
        return out
    out["floors"] = bound
    out["mean_in_flight"] = in_flight
    for metric, floor_key in (("ttft_s", "ttft_floor_s"), ("tpot_s", "tpot_floor_s"), ("e2e_s", "e2e_floor_s")):
        measured = latency.get(metric, {}).get("p50")
        floor = bound.get(floor_key)
        out[metric] = {"measured_p50": measured, "floor": floor,
                       "ratio": measured / floor if measured is not None and floor else None}
    return out
