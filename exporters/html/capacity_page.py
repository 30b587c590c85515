"""The page of `goodput capacity`: the verdict line, attainment against rate with every probed rate's
interval, the bracket and the capacity, the order of the probes and the requests spent, and the tables of
rates and runs (each run's name links to its own report)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from exporters.html import fmt
from exporters.html import load_charts as lc
from exporters.html.capacity_charts import attainment_chart, order_chart, spent_chart
from exporters.html.capacity_data import (
    ProbeRun,
    Verdict,
    capacity_verdict,
    probe_runs,
    rate_points,
)
from exporters.html.cost_table import cost_table
from exporters.html.header import slo_text
from exporters.html.page import Cell, Flag, Level, Page, Section, Table, Text
from exporters.html.sweep_page import server_text
from metrics.results import CapacityView, ProbedRate


def capacity_meta(label: str, doc: CapacityView, verdict: Verdict, model: str | None,
                  workload: str | None) -> list[tuple[str, str]]:
    cap, ceiling = doc.capacity, doc.ceiling
    low, high = cap.min_rate, cap.max_rate
    searched = (f"{low:g} to {high:g} req/s" if low is not None and high is not None
                else f"from {low:g} req/s" if low is not None else f"up to {high:g} req/s" if high is not None
                else "unbounded")
    if ceiling is not None:
        searched += (f" (from a throughput ceiling of {ceiling.requests_per_s or 0:.3g} req/s at concurrency "
                     f"{ceiling.concurrency})")
    return [
        ("capacity search", label), ("target", server_text(doc.server)), ("model", model or fmt.NONE),
        ("workload", workload or fmt.NONE), ("SLO", slo_text(doc.slo)),
        ("attainment target", f"{verdict.target * 100:g} % of measured requests good, judged on a "
                              f"{verdict.confidence * 100:g} % {verdict.method} interval"),
        ("rates searched", searched),
        ("budget", f"tolerance {fmt.pct(cap.tolerance)}, at most {fmt.count(cap.max_points)} runs"),
        ("stopped", f"{verdict.status}: {verdict.reason}" if verdict.reason else verdict.status or fmt.NONE),
    ]


def capacity_flags(doc: CapacityView, verdict: Verdict, verdict_line: str) -> list[Flag]:
    level: Level
    if verdict.status in ("error", "interrupted") or not doc.complete:
        level = "fail"
    elif verdict.rate is None or verdict.status == "client_limited":
        level = "warn"
    else:
        level = "ok"
    flags = [Flag(level, "Verdict.", verdict_line)]
    if not doc.complete:
        flags.append(Flag("fail", "Incomplete.", "The search did not end by its own rule (interrupted, killed or "
                                                 "stopped by an error): what it measured is shown."))
    flags += [Flag("info", "Note.", note) for note in doc.notes]
    return flags


def verdict_table(v: Verdict) -> Table:
    rows: list[list[str | Cell]] = [
        ["capacity (highest rate shown to pass)", Cell(lc.rate_text(v.rate), "pass" if v.rate is not None else "fail")],
        ["bracket's upper end (lowest rate not shown to pass)", lc.rate_text(v.upper)],
        ["attainment at the capacity", fmt.pct(v.attainment)],
        [f"its {v.confidence * 100:g} % {v.method} interval", lc.interval_text(v.interval)],
        ["status", Cell(f"{v.status}: {v.reason}", "text")],
        ["runs", fmt.count(v.points)], ["requests sent", fmt.count(v.requests)],
    ]
    return Table("The capacity (capacity.json 'capacity')", ["figure", "value"], rows)


def rates_table(rates: Sequence[ProbedRate]) -> Table:
    rows: list[list[str | Cell]] = []
    for r in rates:
        cls = {"pass": "pass", "fail": "fail"}.get(r.verdict, "text")
        rows.append([f"{r.rate:g}", Cell(r.verdict.replace("_", " "), cls), fmt.count(r.good), fmt.count(r.measured),
                     fmt.pct(r.attainment), lc.interval_text(r.interval), fmt.count(r.runs), fmt.count(r.saturated_runs)])
    return Table("Probed rates, pooled over their runs (capacity.json 'rates')",
                 ["rate (req/s)", "verdict", "good", "measured", "attainment", "interval", "runs",
                  "runs where the client fell behind"], rows)


def runs_table(runs: Sequence[ProbeRun], reports: Mapping[str, str]) -> Table:
    out: list[list[str | Cell]] = []
    for r in runs:
        row = r.row
        state = r.status + (", client saturated" if r.client_saturated else "")
        out.append([
            str(r.order), Cell(r.label, "name", reports.get(r.label, "")), lc.rate_text(r.rate),
            Cell(r.verdict or fmt.NONE, "text"), Cell(state, "text"), fmt.count(r.measured), fmt.count(r.good),
            fmt.pct(r.attainment), lc.interval_text(r.interval), fmt.rate(row.offered_rps, ""),
            fmt.rate(row.requests_per_s, ""), fmt.ms(row.ttft_p50_s), fmt.ms(row.ttft_p99_s),
            fmt.ms(row.tpot_p99_s), fmt.ms(row.e2e_p99_s), fmt.pct(row.error_rate),
            fmt.ms(row.dispatch_lag_p99_s), fmt.count(r.sent), fmt.count(r.spent),
        ])
    header = ["#", "run", "rate", "verdict", "status", "measured", "good", "attainment", "interval (this run)",
              "offered req/s", "completed req/s", "TTFT p50", "TTFT p99", "TPOT p99", "E2E p99", "failed",
              "dispatch lag p99", "sent", "sent so far"]
    return Table("Runs, in the order run (capacity.json 'points'; a run's name links to its own report)", header, out,
                 "verdict: the rate's, once this run was pooled with the earlier runs at the same rate.")


def capacity_page(doc: CapacityView, label: str, verdict_line: str, *, reports: Mapping[str, str] | None = None,
                  model: str | None = None, workload: str | None = None) -> Page:
    """`verdict_line`: the one line `goodput capacity` printed; `reports`: run label → link to its report.html."""
    verdict, rates, runs = capacity_verdict(doc), rate_points(doc), probe_runs(doc)
    ceiling = doc.ceiling
    cost = cost_table(doc.cost, capacity_upper=doc.capacity.upper)
    sections = [
        Section("Verdict", [Text(verdict_line), verdict_table(verdict), *filter(None, [cost])]),
        Section("Attainment against rate", [attainment_chart(rates, runs, verdict, ceiling), rates_table(rates)]),
    ]
    if runs:
        sections.append(Section("The search", [order_chart(runs, verdict, ceiling), spent_chart(runs, verdict)]))
    sections.append(Section("Runs", [runs_table(runs, reports or {})]))
    return Page(title=f"goodput capacity report: {label}", meta=capacity_meta(label, doc, verdict, model, workload),
                flags=capacity_flags(doc, verdict, verdict_line), sections=sections,
                footer="Written by goodput from capacity.json; each run's figures are its own summary.json's.")
