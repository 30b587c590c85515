"""The report's GPU section (summary.json 'gpu', from `goodput run --scrape`): a table per GPU and the total,
with the energy over the measurement window and joules per output token."""

from __future__ import annotations

from typing import Any

from exporters.html import fmt
from exporters.html.page import Cell, Section, Table, Text


def _n(value: Any, spec: str) -> str:
    return fmt.NONE if value is None else format(value, spec)


def _row(name: str, block: dict[str, Any]) -> list[str | Cell]:
    util, sm = block.get("utilization_pct") or {}, block.get("sm_active") or {}
    return [Cell(name, "name"), _n(util.get("mean"), ".1f"), _n(util.get("max"), ".0f"), _n(sm.get("mean"), ".3f"),
            _n(sm.get("max"), ".3f"), _n(block.get("memory_used_mib_max"), ",.0f"),
            _n(block.get("power_w_mean"), ",.1f"), _n(block.get("energy_j"), ",.1f")]


def gpu_section(summary: dict[str, Any]) -> Section | None:
    gpu = summary.get("gpu")
    if not isinstance(gpu, dict):
        return None
    sources = "; ".join(f"{s.get('name')} ({s.get('url')}): {s.get('scrapes')} scrapes, {s.get('failed_scrapes')} failed"
                        + (f", last: {s['last_failure']}" if s.get("last_failure") else "")
                        for s in gpu.get("sources") or [])
    if not gpu.get("available"):
        return Section("GPU", [Text(f"No GPU figures: {gpu.get('reason', 'nothing scraped')}. {sources}")])
    rows = [_row(f"{g.get('source')} {g.get('hostname') or ''} gpu {g.get('gpu')} ({g.get('model_name') or '?'})", g)
            for g in gpu.get("gpus") or []]
    total = gpu.get("total") or {}
    rows.append(_row(f"total, {total.get('gpus')} GPUs", total))
    jpt = total.get("joules_per_output_token")
    lines = [f"Energy per output token: {jpt:.4g} J ({total.get('output_tokens'):,.0f} output tokens in the window)."
             if jpt is not None else f"No energy per output token: {total.get('energy_note', 'no energy')}."]
    header = ["GPU", "util % mean", "util % max", "SM active mean", "SM active max", "memory used max (MiB)",
              "power mean (W)", "energy (J)"]
    return Section("GPU", [Text(" ".join(lines)), Table("GPU telemetry over the measurement window (summary.json 'gpu')",
                                                        header, rows, f"Scraped: {sources}.")])
