"""The console summary of a run: a header of what was measured, warnings and notes on what the figures
are worth, then one row overall and one per bucket, latencies in milliseconds (p50/p99), then the server's
own figures (exporters.server_console), the table and the server section within 100 columns."""

from __future__ import annotations

from typing import Any

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

TABLE_CAPTION = "latency p50/p99 in ms:"
_COLUMNS = (("ttft_s", "TTFT"), ("itl_s", "ITL/chunk"), ("tpot_s", "TPOT"), ("e2e_s", "E2E"))


def _ms(value: Any) -> str:
    return "-" if value is None else f"{value * 1e3:.1f}"


def _table_ms(value: Any) -> str:
    """Milliseconds for the table: a tenth below 1 s, whole milliseconds above (the table fits 100 columns)."""
    if value is None:
        return "-"
    return f"{value * 1e3:.0f}" if value >= 1.0 else f"{value * 1e3:.1f}"


def _pair(block: dict[str, Any] | None) -> str:
    if not block or not block.get("count"):
        return "-"
    return f"{_table_ms(block.get('p50'))}/{_table_ms(block.get('p99'))}"


def _pct(value: Any) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _num(value: Any, fmt: str = "{:.2f}") -> str:
    return "-" if value is None else fmt.format(value)


def _row(scope: str, counts: dict[str, Any], latency: dict[str, Any], goodput: dict[str, Any] | None) -> list[str]:
    cells = [scope, str(counts.get("measured", "-")), str(counts.get("failed", "-"))]
    cells += [_pair(latency.get(key)) for key, _ in _COLUMNS]
    cells.append(_pct((goodput or {}).get("attainment")))
    return cells


def render_table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True))))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _state(run: dict[str, Any]) -> str:
    if run.get("aborted"):
        return f"  [ABORTED: {run.get('abort_reason') or 'a threshold failed'}]"
    if run.get("write_error"):
        reason = str(run["write_error"]).rsplit(": ", 1)[-1]  # 'PATH: No space left on device'
        return f"  [INCOMPLETE: records could not be written: {reason}]"
    if run.get("stopped_early"):
        return "  [STOPPED EARLY: the first requests all failed the same way]"
    if run.get("ended_by"):  # `goodput report` on a run whose final run.json was never written
        return f"  [INCOMPLETE: {run['ended_by']}]"
    lost = (run.get("workers") or {}).get("lost") or []
    if lost:
        return f"  [INCOMPLETE: {len(lost)} worker(s) lost]"
    return "" if run.get("complete", True) else "  [INCOMPLETE: interrupted]"


def format_summary(summary: dict[str, Any]) -> str:
    run = summary.get("run", {})
    req = summary.get("requests", {})
    thr = summary.get("throughput", {})
    good = summary.get("goodput", {})
    window = run.get("window", {})
    tokens = summary.get("tokens") or {}
    out_mark, total_mark = estimated_marks(tokens)
    out = [
        f"target {run.get('target', '?')}  model {run.get('model', '?')}  load {run.get('load', '?')}"
        + _state(run),
        requests_line(req),
        f"window: {window.get('measured', 0)} requests over {_num(window.get('duration_s'), '{:.2f}')} s"
        f" (warm-up {window.get('warmup_s', 0)} s, cool-down {window.get('cooldown_s', 0)} s)",
        f"throughput: {_num(thr.get('requests_per_s'))} req/s  {out_mark}{_num(thr.get('output_tokens_per_s'), '{:.1f}')}"
        f" output tok/s  {total_mark}{_num(thr.get('total_tokens_per_s'), '{:.1f}')} total tok/s"
        f"  (offered {_num(thr.get('offered_rps'))} req/s, dispatched {_num(thr.get('achieved_rps'))} req/s)",
    ]
    if good:
        out.append(goodput_line(good, _num(good.get("requests_per_s")), _pct(good.get("attainment"))))
    sat = run.get("client_saturation")
    if isinstance(sat, dict) and sat.get("saturated"):
        out.append(f"WARNING: client saturated: dispatch lag p99 {_ms(sat.get('lag_p99_s'))} ms"
                   f" > {_ms(sat.get('threshold_s'))} ms; latencies may be understated")
    warnings = (error_warning(req), content_warning(req), prompt_warning(tokens, run), burst_warning(summary))
    out += [w for w in warnings if w is not None]
    out += failure_lines(summary)
    out += cache_lines(tokens, run)
    out += estimate_notes(tokens)
    out += answer_lines(summary)
    tpot_mark = {"tpot_s": out_mark}  # TPOT divides by N: marked like the token rates when N is estimated
    header = ["bucket", "n", "failed", *(f"{tpot_mark.get(key, '')}{name}" for key, name in _COLUMNS), "SLO ok"]
    rows = [header, _row("all", {"measured": window.get("measured"), "failed": req.get("failed")},
                         summary.get("latency", {}), good)]
    for b in summary.get("buckets", []):
        rows.append(_row(f"{b.get('dimension')}={b.get('label')}", b.get("counts", b), b.get("latency", {}), b.get("goodput")))
    out += ["", TABLE_CAPTION, render_table(rows)]
    out += format_server_section(summary.get("server"))
    out += gpu_lines(summary)
    roof = summary.get("roofline") or {}
    if roof.get("floors"):
        spec, fl = roof["spec"], roof["floors"]
        parts = [f"{name} p50 {_ms(roof[key]['measured_p50'])} ms vs floor {_ms(roof[key]['floor'])} ms"
                 + (f" ({roof[key]['ratio']:.2f}x)" if roof[key].get("ratio") else "")
                 for key, name in (("ttft_s", "TTFT"), ("tpot_s", "TPOT"))]
        out.append(f"roofline ({fl['model']} on {fl['gpu']}, TP={fl['tp']}, batch {fl['batch']}"
                   f"{', ' + spec['source'] if spec.get('source') else ''}):")
        out += [f"  {part}" for part in parts]
    elif roof.get("error"):
        out.append(f"roofline: not computed ({roof['error']})")
    out.append(f"percentiles: exact, numpy '{run.get('percentile_method', 'linear')}' method over the measurement window")
    return "\n".join(out)
