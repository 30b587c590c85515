"""The console summary of a run: a header of what was measured, warnings and notes on what the figures
are worth, then one row overall and one per bucket, latencies in milliseconds (p50/p99), then the server's
own figures (exporters.server_console), the table and the server section within 100 columns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from exporters.answer_notes import answer_lines
from exporters.burst_note import burst_warning
from exporters.console_notes import (
    content_warning,
    error_warning,
    estimate_notes,
    estimated_marks,
    goodput_line,
    prompt_warning,
    requests_line,
)
from exporters.failure_notes import failure_lines
from exporters.gpu_console import gpu_lines
from exporters.server_console import format_server_section
from exporters.workload_notes import cache_lines

if TYPE_CHECKING:  # the summary's view is imported where a summary is read, not at start-up
    from metrics.results import Json, Roofline, Run, Stats

TABLE_CAPTION = "latency p50/p99 in ms:"
_COLUMNS = (("ttft_s", "TTFT"), ("itl_s", "ITL/chunk"), ("tpot_s", "TPOT"), ("e2e_s", "E2E"))


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1e3:.1f}"


def _table_ms(value: float | None) -> str:
    """Milliseconds for the table: a tenth below 1 s, whole milliseconds above (the table fits 100 columns)."""
    if value is None:
        return "-"
    return f"{value * 1e3:.0f}" if value >= 1.0 else f"{value * 1e3:.1f}"


def _pair(block: Stats | None) -> str:
    if block is None or not block.count:
        return "-"
    return f"{_table_ms(block.p50)}/{_table_ms(block.p99)}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _num(value: float | None, fmt: str = "{:.2f}") -> str:
    return "-" if value is None else fmt.format(value)


def _row(scope: str, counts: tuple[str, str], latency: dict[str, Stats], attainment: float | None) -> list[str]:
    cells = [scope, *counts]
    cells += [_pair(latency.get(key)) for key, _ in _COLUMNS]
    cells.append(_pct(attainment))
    return cells


def render_table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True))))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _state(run: Run) -> str:
    if run.aborted:
        return f"  [ABORTED: {run.abort_reason or 'a threshold failed'}]"
    if run.write_error:
        reason = run.write_error.rsplit(": ", 1)[-1]  # 'PATH: No space left on device'
        return f"  [INCOMPLETE: records could not be written: {reason}]"
    if run.stopped_early:
        return "  [STOPPED EARLY: the first requests all failed the same way]"
    if run.ended_by:  # `goodput report` on a run whose final run.json was never written
        return f"  [INCOMPLETE: {run.ended_by}]"
    if run.workers_lost:
        return f"  [INCOMPLETE: {run.workers_lost} worker(s) lost]"
    return "" if run.complete else "  [INCOMPLETE: interrupted]"


def _roofline_lines(roof: Roofline | None) -> list[str]:
    if roof is None:
        return []
    if roof.has_floors:
        parts = [f"{name} p50 {_ms(row.measured_p50)} ms vs floor {_ms(row.floor)} ms"
                 + (f" ({row.ratio:.2f}x)" if row.ratio else "")
                 for key, name in (("ttft_s", "TTFT"), ("tpot_s", "TPOT")) if (row := roof.rows[key])]
        return [f"roofline ({roof.floors_model} on {roof.floors_gpu}, TP={roof.floors_tp}, batch {roof.batch}"
                f"{', ' + roof.source if roof.source else ''}):", *(f"  {part}" for part in parts)]
    return [f"roofline: not computed ({roof.error})"] if roof.error else []


def format_summary(summary: Mapping[str, Json]) -> str:
    from metrics.results import SummaryView

    view = SummaryView.from_json(summary)
    run, req, thr, good, window, tokens = (view.run, view.requests, view.throughput, view.goodput, view.run.window,
                                           view.tokens)
    out_mark, total_mark = estimated_marks(tokens)
    out = [
        f"target {_or(run.target)}  model {_or(run.model)}  load {_or(run.load)}" + _state(run),
        requests_line(req),
        f"window: {_or(window.measured, 0)} requests over {_num(window.duration_s, '{:.2f}')} s"
        f" (warm-up {window.warmup_s} s, cool-down {window.cooldown_s} s)",
        f"throughput: {_num(thr.requests_per_s)} req/s  {out_mark}{_num(thr.output_tokens_per_s, '{:.1f}')}"
        f" output tok/s  {total_mark}{_num(thr.total_tokens_per_s, '{:.1f}')} total tok/s"
        f"  (offered {_num(thr.offered_rps)} req/s, dispatched {_num(thr.achieved_rps)} req/s)",
    ]
    if good is not None:
        out.append(goodput_line(good, _num(good.requests_per_s), _pct(good.attainment)))
    sat = run.client_saturation
    if sat is not None and sat.saturated:
        out.append(f"WARNING: client saturated: dispatch lag p99 {_ms(sat.lag_p99_s)} ms"
                   f" > {_ms(sat.threshold_s)} ms; latencies may be understated")
    warnings = (error_warning(req), content_warning(req), prompt_warning(tokens, run), burst_warning(view))
    out += [w for w in warnings if w is not None]
    out += failure_lines(view)
    out += cache_lines(tokens, run)
    out += estimate_notes(tokens)
    out += answer_lines(view)
    tpot_mark = {"tpot_s": out_mark}  # TPOT divides by N: marked like the token rates when N is estimated
    header = ["bucket", "n", "failed", *(f"{tpot_mark.get(key, '')}{name}" for key, name in _COLUMNS), "SLO ok"]
    rows = [header, _row("all", (str(window.measured), str(req.failed)), view.latency,
                         good.attainment if good is not None else None)]
    for b in view.buckets:
        rows.append(_row(f"{b.dimension}={b.label}", (_or(b.measured, "-"), _or(b.failed, "-")), b.latency,
                         b.attainment))
    out += ["", TABLE_CAPTION, render_table(rows)]
    out += format_server_section(view.server)
    out += gpu_lines(view.gpu)
    out += _roofline_lines(view.roofline)
    out.append(f"percentiles: exact, numpy '{run.percentile_method}' method over the measurement window")
    return "\n".join(out)


def _or(value: object, default: object = "?") -> str:
    """A value the document may lack, as the console prints it (its default when absent)."""
    return str(default if value is None else value)
