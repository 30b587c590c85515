"""The typed view of summary.json's `gpu` section (metrics.server.gpu, from `goodput run --scrape`): the
scrape sources, one row per GPU and the total over the measurement window. Names and numbers the readers
print as they are (a GPU index, a host) are kept as the text they print as."""

from __future__ import annotations

from typing import Any

from metrics.results.frozen_view import frozen
from metrics.results.summary_parse import int_or_none, number_or_none, object_or_empty, text_or_none


@frozen
class MeanMax:
    mean: float | None = None
    max: float | None = None

    @classmethod
    def from_json(cls, value: Any) -> MeanMax:
        block = object_or_empty(value)
        return cls(number_or_none(block.get("mean")), number_or_none(block.get("max")))


@frozen
class GpuFigures:
    """What a GPU (or all of them) did over the window."""

    utilization_pct: MeanMax
    sm_active: MeanMax
    memory_used_mib_max: float | None
    power_w_mean: float | None
    energy_j: float | None

    @classmethod
    def from_json(cls, value: Any) -> GpuFigures:
        block = object_or_empty(value)
        return cls(MeanMax.from_json(block.get("utilization_pct")), MeanMax.from_json(block.get("sm_active")),
                   *(number_or_none(block.get(k)) for k in ("memory_used_mib_max", "power_w_mean", "energy_j")))


@frozen
class GpuRow:
    source: str
    hostname: str  # "" when the document has none
    gpu: str  # the GPU's index as printed
    model_name: str | None
    figures: GpuFigures

    @classmethod
    def from_json(cls, value: Any) -> GpuRow:
        g = object_or_empty(value)
        return cls(str(g.get("source")), str(g.get("hostname") or ""), str(g.get("gpu")),
                   str(g["model_name"]) if g.get("model_name") else None, GpuFigures.from_json(g))


@frozen
class GpuTotal:
    gpus: int | None
    figures: GpuFigures
    output_tokens: float | None
    joules_per_output_token: float | None
    energy_note: str | None  # why there is no joules per output token

    @classmethod
    def from_json(cls, value: Any) -> GpuTotal:
        t = object_or_empty(value)
        return cls(int_or_none(t.get("gpus")), GpuFigures.from_json(t), number_or_none(t.get("output_tokens")),
                   number_or_none(t.get("joules_per_output_token")), text_or_none(t.get("energy_note")))


@frozen
class GpuSource:
    """One scraped endpoint (DCGM exporter) and how its scrapes went."""

    name: str
    url: str
    scrapes: int | None
    failed_scrapes: int | None
    last_failure: str | None

    @classmethod
    def from_json(cls, value: Any) -> GpuSource:
        s = object_or_empty(value)
        return cls(str(s.get("name")), str(s.get("url")), int_or_none(s.get("scrapes")),
                   int_or_none(s.get("failed_scrapes")), str(s["last_failure"]) if s.get("last_failure") else None)


@frozen
class Gpu:
    available: bool
    reason: str  # why there are no figures (when not available)
    sources: tuple[GpuSource, ...]
    gpus: tuple[GpuRow, ...]
    total: GpuTotal

    @classmethod
    def from_json(cls, value: Any) -> Gpu | None:
        """None when the summary has no `gpu` object (a run without --scrape)."""
        if not isinstance(value, dict):
            return None
        sources, gpus = value.get("sources") or [], value.get("gpus") or []
        return cls(bool(value.get("available")), str(value.get("reason", "nothing scraped")),
                   tuple(map(GpuSource.from_json, sources)), tuple(map(GpuRow.from_json, gpus)),
                   GpuTotal.from_json(value.get("total")))
