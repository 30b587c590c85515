"""The tables of a run report, read from summary.json (its typed view, metrics.results.SummaryView) and the
SLO table from the per-request values."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from exporters.html import fmt
from exporters.html.page import Cell, Table
from exporters.html.run_data import RunData
from metrics import SLO, good_requests
from metrics.gate import Verdict, format_value
from metrics.records import OK
from metrics.results import Goodput, Stats, SummaryView

LATENCY_ROWS: tuple[tuple[str, str], ...] = (
    ("ttft_s", "TTFT"), ("ttft_from_schedule_s", "TTFT from schedule"), ("itl_s", "ITL per chunk"),
    ("itl_token_s", "ITL per token"), ("tpot_s", "TPOT"), ("e2e_s", "E2E (last chunk)"),
    ("e2e_close_s", "E2E (stream close)"), ("e2e_from_schedule_s", "E2E from schedule"),
    ("dispatch_lag_s", "dispatch lag"), ("max_itl_s", "largest ITL per request"),
)
BLOCK_COLUMNS: tuple[tuple[str, str], ...] = (
    ("mean", "mean"), ("min", "min"), ("p50", "p50"), ("p90", "p90"), ("p95", "p95"), ("p99", "p99"),
    ("p999", "p99.9"), ("max", "max"),
)
SLO_ITEMS: tuple[tuple[str, str, str], ...] = (  # SLO field, name, how the limit applies
    ("ttft_s", "TTFT", "≤"), ("tpot_s", "TPOT", "≤"), ("e2e_s", "E2E", "≤"), ("itl_max_s", "largest ITL", "≤"),
    ("fluidity_min", "fluidity index", "≥"), ("ttfo_s", "TTFO", "≤"),
)


def requests_table(summary: SummaryView) -> Table:
    r = summary.requests
    rows: list[list[str | Cell]] = [
        ["every record", fmt.count(r.records), fmt.count(r.succeeded), fmt.count(r.failed),
         fmt.count(r.cancelled), fmt.count(r.sent), fmt.count(r.never_sent)],
        ["measured (in the window)", fmt.count(r.in_window), fmt.count(r.in_window_ok),
         fmt.count(r.in_window_failed), fmt.count(r.in_window_cancelled), fmt.NONE, fmt.NONE],
    ]
    note = "errors by kind: " + ", ".join(f"{k} {v}" for k, v in r.errors.items()) if r.errors else "no request failed"
    return Table("Requests", ["", "requests", "ok", "failed", "cancelled", "sent", "never sent"], rows, note)


def throughput_table(summary: SummaryView) -> Table:
    t, g = summary.throughput, summary.goodput or Goodput(None)
    rows: list[list[str | Cell]] = [
        ["window duration", fmt.ms(t.duration_s)],
        ["requests/s (finished ok)", fmt.rate(t.requests_per_s)],
        ["output tokens/s", fmt.rate(t.output_tokens_per_s)],
        ["total tokens/s (prompt + output)", fmt.rate(t.total_tokens_per_s)],
        ["offered rate (scheduled)", fmt.rate(t.offered_rps)],
        ["achieved send rate", fmt.rate(t.achieved_rps)],
        ["goodput (good requests/s)", fmt.rate(g.requests_per_s)],
        ["SLO attainment (good / measured)", f"{fmt.pct(g.attainment)} ({fmt.count(g.good)} of "
                                             f"{fmt.count(g.measured)})"],
    ]
    return Table("Throughput and goodput (over the measurement window)", ["figure", "value"], rows)


def latency_table(summary: SummaryView) -> Table:
    rows: list[list[str | Cell]] = []
    for key, name in LATENCY_ROWS:
        block = summary.stats(key)
        if block is None:
            continue
        rows.append([name, fmt.count(block.count), *(fmt.ms(getattr(block, k)) for k, _ in BLOCK_COLUMNS)])
    fluid = summary.stats("fluidity")
    if fluid is not None and fluid.count:
        rows.append(["fluidity index (unitless)", fmt.count(fluid.count),
                     *(fmt.num(getattr(fluid, k)) for k, _ in BLOCK_COLUMNS)])
    return Table("Latency: exact statistics over every sample of the measured, successful requests",
                 ["metric", "samples", *(title for _, title in BLOCK_COLUMNS)], rows,
                 "A metric with no sample shows – (never 0).")


def _at(block: Stats | None, key: str) -> float | None:
    return None if block is None else getattr(block, key)


def buckets_table(summary: SummaryView) -> Table:
    rows: list[list[str | Cell]] = []
    for b in summary.buckets:
        lat = b.latency
        rows.append([
            b.dimension, b.label, fmt.count(b.measured), fmt.count(b.ok),
            fmt.count(b.failed), fmt.count(b.good), fmt.pct(b.attainment),
            fmt.ms(_at(lat.get("ttft_s"), "p50")), fmt.ms(_at(lat.get("ttft_s"), "p99")),
            fmt.ms(_at(lat.get("tpot_s"), "p50")), fmt.ms(_at(lat.get("tpot_s"), "p99")),
            fmt.ms(_at(lat.get("itl_s"), "p99")), fmt.ms(_at(lat.get("e2e_s"), "p99")),
        ])
    return Table("Per bucket (prompt tokens × cache class × output tokens × tags, one dimension at a time)",
                 ["dimension", "bucket", "measured", "ok", "failed", "good", "attainment", "TTFT p50", "TTFT p99",
                  "TPOT p50", "TPOT p99", "ITL p99", "E2E p99"], rows,
                 "Every statistic of every bucket, with more percentiles, is in summary.json and summary.csv.")


def slo_table(data: RunData) -> Table:
    """Each SLO item on its own: how many measured requests meet it (goodput needs all of them at once)."""
    slo = data.config.slo
    measured = data.window.measured
    total = int(measured.sum())
    ok_content = (data.frame.status == OK) & (data.frame.chunk_count > 0)
    rows: list[list[str | Cell]] = []
    nan = np.full(data.frame.n, np.nan)
    for key, name, op in SLO_ITEMS:
        limit = getattr(slo, key)
        if limit is None:
            continue
        alone = replace(SLO(), **{key: limit})
        if key == "fluidity_min":
            alone = replace(alone, fluidity_prefill_deadline_s=slo.fluidity_prefill_deadline_s,
                            fluidity_decode_deadline_s=slo.fluidity_decode_deadline_s)
        meets = _meets(data, alone, ok_content, nan)
        n = int((meets & measured).sum())
        shown = fmt.num(limit) if key == "fluidity_min" else fmt.ms(limit)
        rows.append([f"{name} {op} {shown}", f"{n} of {total}", fmt.pct(n / total if total else None)])
    good = int((data.good & measured).sum())
    cls = "pass" if total and good == total else ("fail" if total else "")
    rows.append([Cell("all of them (a good request)"), Cell(f"{good} of {total}", cls),
                 Cell(fmt.pct(good / total if total else None), cls)])
    note = ("Only successful requests with content can meet an SLO; TPOT and the largest ITL do not apply to a request "
            "of one output token. Goodput = good requests / window duration.")
    if len(rows) == 1:
        note = "No SLO was given: every successful request with content counts as good. " + note
    return Table("SLO: measured requests meeting each part", ["SLO", "requests", "share"], rows, note)


def _meets(data: RunData, alone: SLO, ok_content: Any, nan: Any) -> Any:
    return good_requests(alone, ok_with_content=ok_content, ttft_s=data.values["ttft_s"], tpot_s=data.values["tpot_s"],
                         e2e_s=data.values["e2e_s"], max_itl_s=data.values.get("max_itl_s", nan),
                         fluidity=data.values.get("fluidity", nan), ttfo_s=data.values.get("ttfo_s", nan))


def thresholds_table(verdicts: Sequence[Verdict], unjudged: Sequence[tuple[str, str]] = ()) -> Table:
    rows: list[list[str | Cell]] = []
    for v in verdicts:
        kind = v.threshold.query.kind
        rows.append([
            Cell("PASS" if v.passed else "FAIL", "pass" if v.passed else "fail"), Cell(v.threshold.text, "text"),
            "no data" if v.value is None else format_value(kind, v.value),
            fmt.NONE if v.limit is None else format_value(kind, v.limit),
            fmt.NONE if v.baseline is None else format_value(kind, v.baseline), Cell(v.note, "text"),
        ])
    for text, why in unjudged:
        rows.append([Cell("not judged"), Cell(text, "text"), fmt.NONE, fmt.NONE, fmt.NONE, Cell(why, "text")])
    note = "" if rows else "No thresholds were given (goodput run --threshold, or a gate config)."
    return Table("Thresholds (pass conditions; any failure makes goodput exit 99)",
                 ["verdict", "threshold", "measured", "limit", "baseline", "note"], rows, note)
