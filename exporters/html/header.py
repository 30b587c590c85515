"""A run's header: what was tested and how (target, model, load, window), and the flags that change how
its figures are read. The warnings use the console's own wording (exporters.console_notes)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import TYPE_CHECKING

from exporters import console_notes, workload_notes
from exporters.html import fmt
from exporters.html.page import Flag
from metrics.results import Run, SummaryView, Window

if TYPE_CHECKING:
    from metrics.results import Json

SloBounds = Mapping[str, float | list[float] | None]  # an SLO's bounds by field; None: not set


def started_at(run: Run) -> str:
    if run.start_unix_s is None:
        return fmt.NONE
    return dt.datetime.fromtimestamp(run.start_unix_s, tz=dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def workload_text(run: Run) -> str:
    """run.json's workload in a line: its kind, then the sizes, file and token counter it names."""
    w = run.workload
    if not w.present:
        return fmt.NONE
    parts = [str(w.kind)]
    for value, name in ((w.prompt_tokens, "prompt tokens"), (w.output_tokens, "output tokens"), (w.path, "file"),
                        (w.token_counter, "token counter")):
        if value is not None:
            parts.append(f"{name} {value}")
    return ", ".join(parts)


def load_text(run: Run) -> str:
    load = run.load or fmt.NONE
    loop = ("" if run.open_loop is None else "open loop" if run.open_loop
            else "closed loop (subject to coordinated omission)")
    bounds = []
    if run.requests is not None:
        bounds.append(f"{run.requests} requests")
    if run.duration_s is not None:
        bounds.append(f"{run.duration_s:g} s")
    extra = ", ".join(x for x in (loop, " / ".join(bounds)) if x)
    return f"{load} ({extra})" if extra else load


def window_text(w: Window) -> str:
    if not w.present:
        return fmt.NONE
    text = f"{fmt.ms(w.duration_s)}, {fmt.count(w.measured)} measured requests"
    edges = []
    if w.warmup_s:
        edges.append(f"warm-up {w.warmup_s:g} s")
    if w.cooldown_s:
        edges.append(f"cool-down {w.cooldown_s:g} s")
    return text + (f" ({', '.join(edges)} excluded)" if edges else "")


def slo_text(slo: SloBounds | None) -> str:
    """The SLO's set bounds in a line (`slo`: summary.json's goodput.slo, or a document's SLO)."""
    slo = slo or {}
    given = []
    for key, name in (("ttft_s", "TTFT"), ("tpot_s", "TPOT"), ("e2e_s", "E2E"), ("itl_max_s", "largest ITL")):
        if isinstance(slo.get(key), int | float):
            given.append(f"{name} ≤ {fmt.ms(slo[key])}")
    if isinstance(slo.get("fluidity_min"), int | float):
        given.append(f"fluidity ≥ {slo['fluidity_min']:g}")
    return ", ".join(given) if given else "none given (every successful request with content is good)"


def run_meta(label: str, view: SummaryView) -> list[tuple[str, str]]:
    """The header's lines of a run (`view`: its summary.json, parsed)."""
    run = view.run
    target = (run.target or fmt.NONE) + (" (embedded reference server)" if run.embedded else "")
    return [
        ("run", label), ("target", target), ("model", run.model or fmt.NONE),
        ("load", load_text(run)), ("workload", workload_text(run)), ("started", started_at(run)),
        ("measurement window", window_text(run.window)), ("SLO", slo_text(view.goodput.slo if view.goodput is not None else None)),
        ("percentiles", f"exact over every sample (numpy '{run.percentile_method}')"),
        ("goodput version", run.tool_version or fmt.NONE),
    ]


def run_flags(summary: Mapping[str, Json]) -> list[Flag]:
    """What changes how this run is read, worst first; one 'ok' flag when nothing does."""
    view = SummaryView.from_json(summary)
    run, req, tokens = view.run, view.requests, view.tokens
    flags: list[Flag] = []
    if run.aborted:
        flags.append(Flag("fail", "Aborted by a threshold.",
                          f"{run.abort_reason or ''} The planned load was not all sent: this is not a full test."))
    elif run.interrupted:
        flags.append(Flag("fail", "Interrupted.", "The run was stopped by a signal; it measured what was sent before."))
    elif run.stopped_early:
        flags.append(Flag("fail", "Stopped early.", f"{run.stopped_early}. Only those requests were sent."))
    elif not run.complete:
        flags.append(Flag("fail", "Incomplete.", "The run did not finish (killed?); this report was rebuilt from the "
                                                 "records it had written."))
    saturation = run.client_saturation
    if run.client_saturated:
        flags.append(Flag("warn", "Client saturated.",
                          f"Dispatch lag p99 {fmt.ms(saturation.lag_p99_s if saturation else None)} exceeds "
                          f"{fmt.ms(saturation.threshold_s if saturation else None)}: the load generator sent late, so"
                          " the offered load was lower than planned (see 'Dispatch lag' below)."))
    for line in (console_notes.error_warning(req), console_notes.content_warning(req),
                 console_notes.prompt_warning(tokens, run)):
        if line:
            flags.append(Flag("warn", "Warning.", line.removeprefix("WARNING: ")))
    for line in workload_notes.cache_lines(tokens, run):
        if line.startswith("WARNING: "):
            flags.append(Flag("warn", "Warning.", line.removeprefix("WARNING: ")))
        else:
            flags.append(Flag("info", "Prefix cache.", line.removeprefix("note: ")))
    for note in console_notes.estimate_notes(tokens):
        flags.append(Flag("info", "Estimated token counts.", note.removeprefix("note: ")))
    found = summary.get("input")
    skipped = found.get("skipped") if isinstance(found, dict) else None
    if isinstance(skipped, int) and skipped:
        flags.append(Flag("warn", "Damaged records file.",
                          f"{skipped} line(s) of records.jsonl are not records and were left out (summary.json 'input')."))
    unwritten = run.unwritten_records
    if unwritten:
        flags.append(Flag("warn", "Records missing.", f"The run could not write {unwritten} record(s); they are in no figure."))
    from exporters.failure_notes import failure_lines  # the server's own words on failures, and ignore_eos

    said = failure_lines(view)
    if said:
        flags.append(Flag("warn", "What the server said.", " ".join(line.strip() for line in said)))
    if not flags:
        flags.append(Flag("ok", "Nothing flagged.", "The run completed, the client kept to its schedule, and every "
                                                    "token count came from the server."))
    return flags
