"""Measured latency next to the roofline floors of the deployment (docs/capacity.md, latency floors), in the run summary.

The spec comes from `--model-config`/`--gpu` on `goodput run`, or from the target itself when it is the
reference server's sim engine (its `/v1/models` entry says `"engine": "sim"` and what it simulates).
Floors are computed for the run's own shape: mean prompt and output tokens of the measured requests,
mean cached tokens, and the mean number of requests in flight (Little's law: completion rate × mean
E2E) as the decode batch. A floor is a bound no server can beat, not a prediction: the ratio
measured / floor says how far from the hardware's limit the deployment runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict

from metrics.model import FloorsJSON, floors
from metrics.results import int_or_none, number_or_none, object_or_empty, text_or_none

if TYPE_CHECKING:
    from metrics.results import Json


class RooflineSpecJSON(TypedDict, total=False):
    """The deployment the floors are for, as run.json keeps it: from --model-config/--gpu
    (loadgen.run.setup.roofline_settings: `model_name` too) or a sim target's entry (spec_from_models_entry:
    `kv_dtype` and `sim_efficiency` too)."""

    model: str | None  # a preset name or a config.json path
    model_name: str
    gpu: str | None
    tp: int
    dtype: str
    kv_dtype: str | None
    source: str
    sim_efficiency: float | None


def roofline_spec(raw: object) -> RooflineSpecJSON | None:
    """run.json's roofline spec, checked: the keys of the right type, in the order the run wrote them
    (None when it is not an object)."""
    if not isinstance(raw, dict):
        return None
    spec = RooflineSpecJSON()
    if "model" in raw:
        spec["model"] = text_or_none(raw["model"])
    if isinstance(name := raw.get("model_name"), str):
        spec["model_name"] = name
    if "gpu" in raw:
        spec["gpu"] = text_or_none(raw["gpu"])
    if (tp := int_or_none(raw.get("tp"))) is not None:
        spec["tp"] = tp
    if isinstance(dtype := raw.get("dtype"), str):
        spec["dtype"] = dtype
    if "kv_dtype" in raw:
        spec["kv_dtype"] = text_or_none(raw["kv_dtype"])
    if isinstance(source := raw.get("source"), str):
        spec["source"] = source
    if "sim_efficiency" in raw:
        spec["sim_efficiency"] = number_or_none(raw["sim_efficiency"])
    return spec


def spec_from_models_entry(entry: Mapping[str, Json]) -> RooflineSpecJSON | None:
    """The roofline spec of a sim-engine target, from its `/v1/models` entry; None for anything else."""
    sim = entry.get("sim")
    if entry.get("engine") != "sim" or not isinstance(sim, dict):
        return None
    return roofline_spec({"model": sim.get("sim_model"), "gpu": sim.get("sim_gpu"), "tp": sim.get("tp", 1),
                          "dtype": sim.get("dtype", "bf16"), "kv_dtype": sim.get("kv_dtype"), "source": "sim engine",
                          "sim_efficiency": sim.get("efficiency")})


class MeasuredJSON(TypedDict):
    measured_p50: float | None
    floor: float | None
    ratio: float | None


class RooflineSectionJSON(TypedDict):
    """`summary["roofline"]`."""

    spec: RooflineSpecJSON
    error: NotRequired[str]  # why there are no floors
    floors: NotRequired[FloorsJSON]
    mean_in_flight: NotRequired[float]
    ttft_s: NotRequired[MeasuredJSON]
    tpot_s: NotRequired[MeasuredJSON]
    e2e_s: NotRequired[MeasuredJSON]


MEASURED: tuple[tuple[Literal["ttft_s", "tpot_s", "e2e_s"], Literal["ttft_floor_s", "tpot_floor_s", "e2e_floor_s"]],
                ...] = (("ttft_s", "ttft_floor_s"), ("tpot_s", "tpot_floor_s"), ("e2e_s", "e2e_floor_s"))


def roofline_section(summary: Mapping[str, Json], spec: RooflineSpecJSON) -> RooflineSectionJSON:
    """`summary["roofline"]`: the floors for this run's shape and measured p50 / floor ratios."""
    tokens = object_or_empty(summary.get("tokens"))
    n = number_or_none(tokens.get("requests")) or 0

    def mean(total_key: str) -> float | None:
        total = number_or_none(tokens.get(total_key))
        return total / n if n and total is not None else None

    prompt, output, cached = (mean(k) for k in ("prompt_tokens", "output_tokens", "cached_tokens"))
    latency = object_or_empty(summary.get("latency"))
    rate = number_or_none(object_or_empty(summary.get("throughput")).get("requests_per_s"))
    e2e_mean = number_or_none(object_or_empty(latency.get("e2e_s")).get("mean"))
    in_flight = rate * e2e_mean if rate and e2e_mean else 1.0
    out: RooflineSectionJSON = {"spec": spec}
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
    for metric, floor_key in MEASURED:
        measured = number_or_none(object_or_empty(latency.get(metric)).get("p50"))
        floor = bound[floor_key]
        out[metric] = {"measured_p50": measured, "floor": floor,
                       "ratio": measured / floor if measured is not None and floor else None}
    return out
