"""The `gpu` section of summary.json, from the samples `goodput run --scrape` kept (loadgen.run.gpu_scrape).

Only samples taken within the measurement window count (wall clock: `run.start_unix_s` + the window's
`start_s` .. `end_s`). Per GPU: mean and max utilisation (%), mean and max SM active (ratio), the most
framebuffer memory used (MiB), mean power (W) and the energy over the window (J): the trapezoid rule over
every power sample of the GPU, the power taken as linear between scrapes and cut at the window's ends
(metrics.model.cost.energy_joules). The total adds the GPUs' energy and mean power and memory, and divides
the energy by the output tokens the window's requests produced: joules per output token, given only when
every GPU's power samples span the whole window (otherwise `energy_note` says how much they cover).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from metrics.model import energy_joules, joules_per_output_token
from metrics.results import GPU_FILE

COVERAGE_SLACK = 0.999  # power samples reaching this share of the window count as spanning it


def _stats(values: list[float]) -> dict[str, float] | None:
    return {"mean": sum(values) / len(values), "max": max(values)} if values else None


def _per_gpu(source: str, samples: list[dict[str, Any]], lo: float, hi: float) -> dict[str, Any]:
    first = samples[0]
    inside = [s for s in samples if lo <= s["unix_s"] <= hi]

    def values(key: str) -> list[float]:
        return [float(s[key]) for s in inside if key in s]

    powered = [s for s in samples if "power_w" in s]
    times, watts = [s["unix_s"] for s in powered], [float(s["power_w"]) for s in powered]
    energy = energy_joules(times, watts, start_s=lo, end_s=hi) if len(powered) >= 2 else None
    covered = max(0.0, min(hi, times[-1]) - max(lo, times[0])) if powered else 0.0
    power = values("power_w")
    memory = values("fb_used_mib")
    return {
        "source": source, "gpu": first.get("gpu"), "uuid": first.get("uuid"), "model_name": first.get("model_name"),
        "hostname": first.get("hostname"), "samples": len(inside),
        "utilization_pct": _stats(values("util_pct")), "sm_active": _stats(values("sm_active")),
        "memory_used_mib_max": max(memory) if memory else None,
        "power_w_mean": sum(power) / len(power) if power else None,
        "energy_j": energy, "energy_covered_s": covered if powered else None,
    }


def gpu_section(document: dict[str, Any], *, start_unix_s: float, window_start_s: float | None,
                window_end_s: float | None, output_tokens: float | None) -> dict[str, Any] | None:
    """None when no GPU sample was scraped at all (every endpoint failed, or served no DCGM family)."""
    sources = list(document.get("sources") or [])
    out: dict[str, Any] = {"sources": sources, "file": GPU_FILE}
    samples = [s for s in document.get("samples") or [] if isinstance(s, dict) and "unix_s" in s]
    if window_start_s is None or window_end_s is None:
        return {**out, "available": False, "reason": "no measurement window"} if sources else None
    lo, hi = start_unix_s + window_start_s, start_unix_s + window_end_s
    grouped: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for s in sorted(samples, key=lambda s: s["unix_s"]):
        grouped[(s.get("source", ""), s.get("hostname") or "", s.get("uuid") or s.get("gpu") or "")].append(s)
    if not grouped:
        return {**out, "available": False, "reason": "no GPU metric was scraped"} if sources else None
    gpus = [_per_gpu(key[0], group, lo, hi) for key, group in grouped.items()]
    return {**out, "available": True, "window": {"start_unix_s": lo, "end_unix_s": hi, "duration_s": hi - lo},
            "gpus": gpus, "total": _total(gpus, hi - lo, output_tokens)}


def _sum(gpus: list[dict[str, Any]], key: str) -> float | None:
    values = [g[key] for g in gpus if g.get(key) is not None]
    return sum(values) if values else None


def _mean_of(gpus: list[dict[str, Any]], key: str) -> dict[str, float] | None:
    blocks = [g[key] for g in gpus if g.get(key)]
    if not blocks:
        return None
    return {"mean": sum(b["mean"] for b in blocks) / len(blocks), "max": max(b["max"] for b in blocks)}


def _total(gpus: list[dict[str, Any]], duration_s: float, output_tokens: float | None) -> dict[str, Any]:
    total: dict[str, Any] = {
        "gpus": len(gpus), "utilization_pct": _mean_of(gpus, "utilization_pct"),
        "sm_active": _mean_of(gpus, "sm_active"), "memory_used_mib_max": _sum(gpus, "memory_used_mib_max"),
        "power_w_mean": _sum(gpus, "power_w_mean"), "energy_j": None, "output_tokens": output_tokens,
        "joules_per_output_token": None,
    }
    powered = [g for g in gpus if g["energy_covered_s"] is not None]
    if not powered:
        total["energy_note"] = "no power samples (DCGM_FI_DEV_POWER_USAGE) were scraped"
        return total
    total["energy_j"] = _sum(powered, "energy_j")
    short = [g for g in powered if g["energy_covered_s"] < COVERAGE_SLACK * duration_s]
    if short:
        least = min(g["energy_covered_s"] for g in short)
        total["energy_note"] = (f"power samples cover {least:.2f} s of the {duration_s:.2f} s window on some GPU: "
                                "energy is for the covered part only, no joules per output token")
    elif len(powered) < len(gpus):
        total["energy_note"] = "some GPUs have no power samples: no joules per output token"
    else:
        total["joules_per_output_token"] = joules_per_output_token(total["energy_j"], output_tokens)
    return total
