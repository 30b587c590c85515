"""The page of `goodput compare`: one or more baseline runs and a candidate, overlaid.

The candidate is drawn first (solid, thickest); each baseline run has its own dash pattern. Each run's
time axis starts at its own anchor, so runs made at different hours line up by elapsed time.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from exporters.html import figures as fig
from exporters.html import fmt
from exporters.html import timeline as tl
from exporters.html.cdf import cdf_curve
from exporters.html.dist_charts import DISTRIBUTIONS, overlay_chart
from exporters.html.header import load_text, run_flags
from exporters.html.page import Cell, Chart, Flag, Item, Page, Section, Table, Text
from exporters.html.run_data import RunData
from exporters.html.time_charts import T_AXIS
from exporters.markdown import change_cells
from metrics.gate import Row
from metrics.latency import selection_stats
from metrics.records import ERROR
from metrics.results import Run


def ordered(baselines: Sequence[RunData], candidate: RunData) -> list[tuple[str, RunData]]:
    """(role, run), the candidate first: the order every chart and table of the page uses."""
    roles = ["baseline"] if len(baselines) == 1 else [f"baseline {i}" for i in range(1, len(baselines) + 1)]
    return [("candidate", candidate), *zip(roles, baselines, strict=True)]


def _p(data: RunData, key: str, percentile: float) -> float | None:
    stats = selection_stats(data.samples[key], data.sampled, (percentile,))
    return stats.quantiles[0] if stats.count else None


def runs_table(runs: Sequence[tuple[str, RunData]]) -> Table:
    rows: list[list[str | Cell]] = []
    for role, d in runs:
        measured = int(d.window.measured.sum())
        failed = int((d.window.measured & (d.frame.status == ERROR)).sum())
        good = int((d.window.measured & d.good).sum())
        duration = d.window.duration_s
        ok = int(d.sampled.sum())
        rows.append([
            role, Cell(d.label, "text"), f"{measured:,}", fmt.pct(failed / measured if measured else None),
            fmt.pct(good / measured if measured else None), fmt.rate(ok / duration if duration else None),
            *(fmt.ms(_p(d, key, p)) for key, p in (("ttft_s", 50), ("ttft_s", 99), ("itl_s", 50), ("itl_s", 99),
                                                   ("tpot_s", 50), ("tpot_s", 99), ("e2e_s", 99))),
        ])
    return Table("Runs (measured requests, exact percentiles over every sample)",
                 ["role", "run", "measured", "errors", "attainment", "requests/s", "TTFT p50", "TTFT p99", "ITL p50",
                  "ITL p99", "TPOT p50", "TPOT p99", "E2E p99"], rows)


def rows_table(rows: Sequence[Row], rule: str) -> Table:
    out: list[list[str | Cell]] = []
    for r in rows:
        base, cand, change, ci, verdict = change_cells(r)
        cls = {"regression": "fail", "improvement": "pass"}.get(r.flag or "", "")
        out.append([Cell(r.scope, "text"), Cell(r.query.describe(), "text"), f"{r.base_n}/{r.cand_n}", base, cand, change, ci, Cell(verdict, cls or "text")])
    return Table("Comparison: candidate − baseline, with a bootstrap confidence interval over requests",
                 ["scope", "metric", "n", "baseline", "candidate", "change", "interval", "verdict"], out, rule)


def rolling_chart(runs: Sequence[tuple[str, RunData]], key: str, name: str, percentile: float) -> Chart | Text:
    traces = []
    for i, (role, d) in enumerate(runs):
        ok = d.sampled
        x = np.where(ok, tl.seconds(d.frame.sent_ns), np.nan)
        lo, hi = tl.time_span(d.frame)
        window = tl.rolling_window_s(hi - lo, int(ok.sum()))
        centers, rolling = tl.rolling_percentiles(x, d.values[key], window_s=window, percentiles=(percentile,))
        if centers.shape[0]:
            traces.append(fig.line(f"{role} (window {fmt.ms(window)})", fig.numbers(centers),
                                   fig.numbers(rolling[percentile], fig.MS), i, width=3.0 if i == 0 else 2.0))
    if not traces:
        return Text(f"{name} over time: no samples in any run.")
    lay = fig.layout(f"{name} rolling p{percentile:g} over time, per run", fig.axis(T_AXIS), fig.axis(f"{name} (ms)"))
    return Chart(fig.figure(traces, lay), "Exact percentile over the measured, successful requests sent within a "
                 "window around each point (a twentieth of each run's span, wider for a small run).")


def tokens_chart(runs: Sequence[tuple[str, RunData]]) -> Chart:
    traces = []
    for i, (role, d) in enumerate(runs):
        bins = tl.make_bins(*tl.time_span(d.frame), target=tl.bin_target(d.frame.n))
        traces.append(fig.line(f"{role} (bins of {fmt.width(bins.width_s)})", fig.numbers(bins.centers),
                               fig.numbers(tl.token_rate(d.frame, bins)), i, width=3.0 if i == 0 else 2.0))
    lay = fig.layout("Output tokens per second over time, per run", fig.axis(T_AXIS), fig.axis("tokens/s", rangemode="tozero"))
    return Chart(fig.figure(traces, lay), "Tokens of every content chunk received, per bin, at their arrival time.")


def compare_page(baselines: Sequence[RunData], candidate: RunData, rows: Sequence[Row] = (), rule: str = "") -> Page:
    runs = ordered(baselines, candidate)
    described = [(role, d, Run.from_json(d.run)) for role, d in runs]  # run.json: a run may have no summary
    meta = [(role, f"{d.label}: {run.model or fmt.NONE} at {run.target or fmt.NONE}, {load_text(run)}")
            for role, d, run in described]
    flags = [Flag(f.level, f"{role}: {f.title}", f.text) for role, d in runs for f in run_flags(d.summary)
             if f.level != "ok"]
    slo = candidate.config.slo
    dists: list[Item] = []
    for key, name, slo_key, _ in DISTRIBUTIONS:
        curves = [(role, cdf_curve(d.samples[key], d.sampled)) for role, d in runs]
        dists.append(overlay_chart(curves, name, getattr(slo, slo_key) if slo_key else None))
    sections = [Section("Runs", [runs_table(runs)])]
    if rows:
        sections.append(Section("Comparison", [rows_table(rows, rule)]))
    sections += [
        Section("Distributions", dists),
        Section("Over time", [rolling_chart(runs, "ttft_s", "TTFT", 50.0), rolling_chart(runs, "ttft_s", "TTFT", 99.0),
                              rolling_chart(runs, "tpot_s", "TPOT", 99.0), tokens_chart(runs)]),
    ]
    return Page(title=f"goodput compare: {candidate.label} against {', '.join(d.label for d in baselines)}",
                meta=meta, flags=flags, sections=sections,
                footer="Written by goodput compare from each run's records.jsonl.")
