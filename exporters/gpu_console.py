"""The console's GPU lines (summary.json 'gpu', from `goodput run --scrape`): one per GPU, one for the total
with the energy over the measurement window and joules per output token."""

from __future__ import annotations

from typing import Any


def _num(value: Any, fmt: str) -> str:
    return "n/a" if value is None else fmt.format(value)


def _figures(block: dict[str, Any]) -> str:
    util, sm = block.get("utilization_pct") or {}, block.get("sm_active") or {}
    return (f"util {_num(util.get('mean'), '{:.0f}')}/{_num(util.get('max'), '{:.0f}')} %  "
            f"SM {_num(sm.get('mean'), '{:.2f}')}/{_num(sm.get('max'), '{:.2f}')}  "
            f"mem {_num(block.get('memory_used_mib_max'), '{:,.0f}')} MiB  "
            f"{_num(block.get('power_w_mean'), '{:,.0f}')} W  {_num(block.get('energy_j'), '{:,.1f}')} J")


def gpu_lines(summary: dict[str, Any]) -> list[str]:
    gpu = summary.get("gpu")
    if not isinstance(gpu, dict):
        return []
    failed = [s for s in gpu.get("sources") or [] if s.get("failed_scrapes")]
    notes = [f"  {s['name']}: {s['failed_scrapes']} of {s['scrapes'] + s['failed_scrapes']} scrapes failed"
             + (f" (last: {s['last_failure']})" if s.get("last_failure") else "") for s in failed]
    if not gpu.get("available"):
        return [f"gpu: no figures ({gpu.get('reason', 'nothing scraped')})", *notes]
    lines = ["gpu, measured window (util %, SM active: mean/max; mem: max used; W: mean power; "
             "J: energy):"]
    for g in gpu.get("gpus") or []:
        name = f"{g.get('source')}/{g.get('hostname') or ''}{':' if g.get('hostname') else ''}gpu{g.get('gpu')}"
        lines.append(f"  {name}  {_figures(g)}")
    total = gpu.get("total") or {}
    jpt = total.get("joules_per_output_token")
    lines.append(f"  total, {total.get('gpus')} GPUs  {_figures(total)}")
    if jpt is not None:
        lines.append(f"  energy per output token: {jpt:.3g} J ({total.get('output_tokens'):,.0f} output tokens)")
    if total.get("energy_note"):
        lines.append(f"  note: {total['energy_note']}")
    return lines + notes
