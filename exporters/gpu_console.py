"""The console's GPU lines (summary.json 'gpu', from `goodput run --scrape`): one per GPU, one for the total
with the energy over the measurement window and joules per output token."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the summary's view is imported where a summary is read, not at start-up
    from metrics.results import Gpu, GpuFigures



def _num(value: float | None, fmt: str) -> str:
    return "n/a" if value is None else fmt.format(value)


def _figures(block: GpuFigures) -> str:
    util, sm = block.utilization_pct, block.sm_active
    return (f"util {_num(util.mean, '{:.0f}')}/{_num(util.max, '{:.0f}')} %  "
            f"SM {_num(sm.mean, '{:.2f}')}/{_num(sm.max, '{:.2f}')}  "
            f"mem {_num(block.memory_used_mib_max, '{:,.0f}')} MiB  "
            f"{_num(block.power_w_mean, '{:,.0f}')} W  {_num(block.energy_j, '{:,.1f}')} J")


def gpu_lines(gpu: Gpu | None) -> list[str]:
    if gpu is None:
        return []
    notes = [f"  {s.name}: {failed} of {(s.scrapes or 0) + failed} scrapes failed"
             + (f" (last: {s.last_failure})" if s.last_failure else "")
             for s in gpu.sources if (failed := s.failed_scrapes)]
    if not gpu.available:
        return [f"gpu: no figures ({gpu.reason})", *notes]
    lines = ["gpu, measured window (util %, SM active: mean/max; mem: max used; W: mean power; "
             "J: energy):"]
    for g in gpu.gpus:
        name = f"{g.source}/{g.hostname}{':' if g.hostname else ''}gpu{g.gpu}"
        lines.append(f"  {name}  {_figures(g.figures)}")
    total = gpu.total
    jpt = total.joules_per_output_token
    lines.append(f"  total, {total.gpus} GPUs  {_figures(total.figures)}")
    if jpt is not None:
        lines.append(f"  energy per output token: {jpt:.3g} J ({total.output_tokens:,.0f} output tokens)")
    if total.energy_note:
        lines.append(f"  note: {total.energy_note}")
    return lines + notes
