"""The report's GPU section (summary.json 'gpu', from `goodput run --scrape`): a table per GPU and the total,
with the energy over the measurement window and joules per output token."""

from __future__ import annotations

from exporters.html import fmt
from exporters.html.page import Cell, Section, Table, Text
from metrics.results import Gpu, GpuFigures


def _n(value: float | None, spec: str) -> str:
    return fmt.NONE if value is None else format(value, spec)


def _row(name: str, block: GpuFigures) -> list[str | Cell]:
    util, sm = block.utilization_pct, block.sm_active
    return [Cell(name, "name"), _n(util.mean, ".1f"), _n(util.max, ".0f"), _n(sm.mean, ".3f"),
            _n(sm.max, ".3f"), _n(block.memory_used_mib_max, ",.0f"),
            _n(block.power_w_mean, ",.1f"), _n(block.energy_j, ",.1f")]


def gpu_section(gpu: Gpu | None) -> Section | None:
    if gpu is None:
        return None
    sources = "; ".join(f"{s.name} ({s.url}): {s.scrapes} scrapes, {s.failed_scrapes} failed"
                        + (f", last: {s.last_failure}" if s.last_failure else "")
                        for s in gpu.sources)
    if not gpu.available:
        return Section("GPU", [Text(f"No GPU figures: {gpu.reason}. {sources}")])
    rows = [_row(f"{g.source} {g.hostname} gpu {g.gpu} ({g.model_name or '?'})", g.figures) for g in gpu.gpus]
    total = gpu.total
    rows.append(_row(f"total, {total.gpus} GPUs", total.figures))
    jpt = total.joules_per_output_token
    lines = [f"Energy per output token: {jpt:.4g} J ({total.output_tokens:,.0f} output tokens in the window)."
             if jpt is not None else f"No energy per output token: {total.energy_note or 'no energy'}."]
    header = ["GPU", "util % mean", "util % max", "SM active mean", "SM active max", "memory used max (MiB)",
              "power mean (W)", "energy (J)"]
    return Section("GPU", [Text(" ".join(lines)), Table("GPU telemetry over the measurement window (summary.json 'gpu')",
                                                        header, rows, f"Scraped: {sources}.")])
