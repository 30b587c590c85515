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
from dataclasses import dataclass
from typing import NotRequired, TypedDict

from metrics.model import energy_joules, joules_per_output_token
from metrics.results import GPU_FILE
from metrics.server.gpu_json import Figure, GpuDocument, GpuSample, GpuSourceJSON

COVERAGE_SLACK = 0.999  # power samples reaching this share of the window count as spanning it

@dataclass(frozen=True, slots=True)
class MeanMax:
    mean: float
    max: float

    def to_json(self) -> dict[str, float]:
        return {"mean": self.mean, "max": self.max}


def _stats(values: list[float]) -> MeanMax | None:
    return MeanMax(sum(values) / len(values), max(values)) if values else None


def _json(block: MeanMax | None) -> dict[str, float] | None:
    return block.to_json() if block is not None else None


class GpuRowJSON(TypedDict):
    source: str
    gpu: str | None
    uuid: str | None
    model_name: str | None
    hostname: str | None
    samples: int
    utilization_pct: dict[str, float] | None
    sm_active: dict[str, float] | None
    memory_used_mib_max: float | None
    power_w_mean: float | None
    energy_j: float | None
    energy_covered_s: float | None


@dataclass(frozen=True, slots=True)
class GpuRow:
    """One GPU over the measurement window."""

    source: str
    gpu: str | None
    uuid: str | None
    model_name: str | None
    hostname: str | None
    samples: int  # inside the window
    utilization_pct: MeanMax | None
    sm_active: MeanMax | None
    memory_used_mib_max: float | None
    power_w_mean: float | None
    energy_j: float | None
    energy_covered_s: float | None  # None: no power sample at all

    def to_json(self) -> GpuRowJSON:
        return {"source": self.source, "gpu": self.gpu, "uuid": self.uuid, "model_name": self.model_name,
                "hostname": self.hostname, "samples": self.samples,
                "utilization_pct": _json(self.utilization_pct), "sm_active": _json(self.sm_active),
                "memory_used_mib_max": self.memory_used_mib_max, "power_w_mean": self.power_w_mean,
                "energy_j": self.energy_j, "energy_covered_s": self.energy_covered_s}


def _per_gpu(source: str, samples: list[GpuSample], lo: float, hi: float) -> GpuRow:
    first = samples[0]
    inside = [s for s in samples if lo <= s["unix_s"] <= hi]

    def values(key: Figure) -> list[float]:
        return [float(value) for s in inside if (value := s.get(key)) is not None]

    powered = [(s["unix_s"], float(s["power_w"])) for s in samples if "power_w" in s]
    times, watts = [t for t, _ in powered], [w for _, w in powered]
    energy = energy_joules(times, watts, start_s=lo, end_s=hi) if len(powered) >= 2 else None
    covered = max(0.0, min(hi, times[-1]) - max(lo, times[0])) if powered else 0.0
    power = values("power_w")
    memory = values("fb_used_mib")
    return GpuRow(source, first["gpu"], first["uuid"], first["model_name"], first["hostname"], len(inside),
                  _stats(values("util_pct")), _stats(values("sm_active")), max(memory) if memory else None,
                  sum(power) / len(power) if power else None, energy, covered if powered else None)


class GpuTotalJSON(TypedDict):
    gpus: int
    utilization_pct: dict[str, float] | None
    sm_active: dict[str, float] | None
    memory_used_mib_max: float | None
    power_w_mean: float | None
    energy_j: float | None
    output_tokens: float | None
    joules_per_output_token: float | None
    energy_note: NotRequired[str]


@dataclass(frozen=True, slots=True)
class GpuTotal:
    """Every GPU together: energy, mean power and memory added, utilisation averaged."""

    gpus: int
    utilization_pct: MeanMax | None
    sm_active: MeanMax | None
    memory_used_mib_max: float | None
    power_w_mean: float | None
    energy_j: float | None
    output_tokens: float | None
    joules_per_output_token: float | None
    energy_note: str | None  # why there is no joules per output token (absent from the JSON when None)

    def to_json(self) -> GpuTotalJSON:
        out: GpuTotalJSON = {
            "gpus": self.gpus, "utilization_pct": _json(self.utilization_pct), "sm_active": _json(self.sm_active),
            "memory_used_mib_max": self.memory_used_mib_max, "power_w_mean": self.power_w_mean,
            "energy_j": self.energy_j, "output_tokens": self.output_tokens,
            "joules_per_output_token": self.joules_per_output_token}
        if self.energy_note is not None:
            out["energy_note"] = self.energy_note
        return out


class GpuWindowJSON(TypedDict):
    start_unix_s: float
    end_unix_s: float
    duration_s: float


class GpuSectionJSON(TypedDict):
    sources: list[GpuSourceJSON]
    file: str
    available: bool
    reason: NotRequired[str]
    window: NotRequired[GpuWindowJSON]
    gpus: NotRequired[list[GpuRowJSON]]
    total: NotRequired[GpuTotalJSON]


@dataclass(frozen=True, slots=True)
class GpuSection:
    """The `gpu` section: either a reason (`available` False) or the window, the GPUs and their total."""

    sources: list[GpuSourceJSON]  # gpu_metrics.json's
    reason: str | None = None
    start_unix_s: float = 0.0
    end_unix_s: float = 0.0
    gpus: tuple[GpuRow, ...] = ()
    total: GpuTotal | None = None

    def to_json(self) -> GpuSectionJSON:
        out = GpuSectionJSON(sources=self.sources, file=GPU_FILE, available=self.total is not None)
        if self.total is None:
            out["reason"] = self.reason or ""
            return out
        out["window"] = {"start_unix_s": self.start_unix_s, "end_unix_s": self.end_unix_s,
                         "duration_s": self.end_unix_s - self.start_unix_s}
        out["gpus"] = [g.to_json() for g in self.gpus]
        out["total"] = self.total.to_json()
        return out


def gpu_section(document: GpuDocument, *, start_unix_s: float, window_start_s: float | None,
                window_end_s: float | None, output_tokens: float | None) -> GpuSection | None:
    """None when no GPU sample was scraped at all (every endpoint failed, or served no DCGM family)."""
    sources = document["sources"]
    if window_start_s is None or window_end_s is None:
        return GpuSection(sources, "no measurement window") if sources else None
    lo, hi = start_unix_s + window_start_s, start_unix_s + window_end_s
    grouped: dict[tuple[str, str, str], list[GpuSample]] = defaultdict(list)
    for s in sorted(document["samples"], key=lambda s: s["unix_s"]):
        grouped[(s["source"], s["hostname"] or "", s["uuid"] or s["gpu"] or "")].append(s)
    if not grouped:
        return GpuSection(sources, "no GPU metric was scraped") if sources else None
    gpus = [_per_gpu(key[0], group, lo, hi) for key, group in grouped.items()]
    return GpuSection(sources, None, lo, hi, tuple(gpus), _total(gpus, hi - lo, output_tokens))


def _sum(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _mean_of(blocks: list[MeanMax | None]) -> MeanMax | None:
    present = [b for b in blocks if b is not None]
    if not present:
        return None
    return MeanMax(sum(b.mean for b in present) / len(present), max(b.max for b in present))


def _total(gpus: list[GpuRow], duration_s: float, output_tokens: float | None) -> GpuTotal:
    def total(energy_j: float | None, joules: float | None, note: str | None) -> GpuTotal:
        return GpuTotal(len(gpus), _mean_of([g.utilization_pct for g in gpus]),
                        _mean_of([g.sm_active for g in gpus]), _sum([g.memory_used_mib_max for g in gpus]),
                        _sum([g.power_w_mean for g in gpus]), energy_j, output_tokens, joules, note)

    powered = [(g, g.energy_covered_s) for g in gpus if g.energy_covered_s is not None]
    if not powered:
        return total(None, None, "no power samples (DCGM_FI_DEV_POWER_USAGE) were scraped")
    energy_j = _sum([g.energy_j for g, _ in powered])
    short = [covered for _, covered in powered if covered < COVERAGE_SLACK * duration_s]
    if short:
        return total(energy_j, None, f"power samples cover {min(short):.2f} s of the {duration_s:.2f} s window "
                                     "on some GPU: energy is for the covered part only, no joules per output token")
    if len(powered) < len(gpus):
        return total(energy_j, None, "some GPUs have no power samples: no joules per output token")
    return total(energy_j, joules_per_output_token(energy_j, output_tokens), None)
