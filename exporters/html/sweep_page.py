"""The page of `goodput sweep`: latency against throughput, attainment and goodput against the load with
the target and the capacity the points show, errors and the client per point, and the table of points
with a link to each point's own report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from exporters.html import fmt
from exporters.html import load_charts as lc
from exporters.html.header import slo_text
from exporters.html.page import Cell, Flag, Item, Page, Section, Table, Text
from exporters.html.sweep_charts import (
    attainment_chart,
    errors_chart,
    goodput_chart,
    lag_chart,
    latency_chart,
)
from exporters.html.sweep_data import (
    LATENCY_METRICS,
    SWEEP_CONFIDENCE,
    SWEEP_TARGET,
    attainment_points,
    ceiling_row,
    done,
    load_kind,
    load_points,
    sweep_capacity,
    sweep_rows,
)
from metrics.capacity_search import SearchResult
from metrics.results import PointRow, ServerInfo, SweepView


def mode_text(doc: SweepView) -> str:
    mode = doc.mode
    if mode.rates is not None:
        return "open loop at " + ", ".join(f"{r:g}" for r in mode.rates) + " req/s (--rates)"
    if mode.concurrencies is not None:
        return "closed loop at " + ", ".join(str(c) for c in mode.concurrencies) + " in flight (--concurrencies)"
    rps = doc.ceiling.requests_per_s if doc.ceiling is not None else None
    measured = f"; ceiling {rps:.3g} req/s" if isinstance(rps, float) else ""
    return (f"--auto: a ceiling point at concurrency {mode.auto_concurrency}, then {mode.auto_points} open-loop "
            f"rates up to 1.1 × the ceiling{measured}")


def length_text(doc: SweepView) -> str:
    length = doc.length
    parts = []
    if length.duration_s is not None:
        parts.append(f"{length.duration_s:g} s")
    if length.requests is not None:
        parts.append(f"{length.requests} requests")
    warmup = length.warmup_s
    warm = f"warm-up {warmup:g} s" if warmup is not None else "first 10 % left out as warm-up"
    return f"{' or '.join(parts) or fmt.NONE} per point ({warm})"


def server_text(server: ServerInfo | None) -> str:
    """The URL the points went to, and whether it was the embedded reference server."""
    if server is None:
        return fmt.NONE
    return (server.url or fmt.NONE) + (" (embedded reference server, started once)" if server.embedded else "")


def sweep_meta(label: str, doc: SweepView, model: str | None, workload: str | None) -> list[tuple[str, str]]:
    rows = sweep_rows(doc)
    target = server_text(doc.server)
    return [
        ("sweep", label), ("target", target), ("model", model or fmt.NONE), ("workload", workload or fmt.NONE),
        ("points", mode_text(doc)), ("length", length_text(doc)),
        ("finished", f"{len(done(rows))} of {len(rows)} planned points"),
        ("SLO", slo_text(doc.slo)),
        ("capacity rule", f"goodput capacity's defaults: {SWEEP_TARGET * 100:g} % attainment, "
                          f"{SWEEP_CONFIDENCE * 100:g} % Wilson interval per point"),
    ]


def sweep_flags(doc: SweepView) -> list[Flag]:
    rows = sweep_rows(doc)
    flags = []
    missing = list(doc.missing)
    if doc.interrupted:
        flags.append(Flag("fail", "Interrupted.", "The sweep was stopped; its finished points are shown."))
    if missing:
        flags.append(Flag("fail", "Incomplete.", f"Missing: {', '.join(missing)}. `goodput sweep --resume DIR` runs them."))
    for status in ("failed", "interrupted"):
        bad = [r.label for r in rows if r.status == status]
        if bad:
            flags.append(Flag("warn", f"Points {status}.", f"{', '.join(bad)}: not in the charts."))
    saturated = [r.label for r in done(rows) if r.client_saturated]
    if saturated:
        flags.append(Flag("warn", "Client saturated.", f"At {', '.join(saturated)} the load generator fell behind its "
                          "schedule: those points measured the client as well as the server (see the dispatch lag)."))
    errors = [r.label for r in done(rows) if r.failed]
    if errors:
        flags.append(Flag("info", "Failed requests.", f"At {', '.join(errors)} (see 'Failed requests per point')."))
    exits = [f"{r.label} (exit {r.exit_code})" for r in done(rows) if r.exit_code not in (0, None)]
    if exits:
        flags.append(Flag("warn", "Points exited non-zero.", ", ".join(exits) + ": thresholds failed or a runtime error."))
    if not flags:
        flags.append(Flag("ok", "Nothing flagged.", "Every planned point ran, with the client on schedule."))
    return flags


def capacity_text(capacity: SearchResult | None, kind: str) -> Text:
    if kind != "rate" or capacity is None:
        return Text("Capacity: not read from this sweep (it needs open-loop points; `goodput capacity` searches for it).")
    if capacity.capacity is None:
        low = f" (the lowest not shown to pass: {capacity.upper:g} req/s)" if capacity.upper is not None else ""
        return Text(f"Capacity: no rate of this sweep was shown to meet {SWEEP_TARGET * 100:g} % attainment{low}.")
    bracket = (f"bracket {capacity.capacity:g}–{capacity.upper:g} req/s" if capacity.upper is not None
               else "no rate above it was shown to fall short: the capacity is at least this")
    return Text(f"Capacity read from these points: {capacity.capacity:g} req/s at {SWEEP_TARGET * 100:g} % attainment "
                f"({bracket}). The sweep's grid limits how fine this is; `goodput capacity` narrows it.")


def points_table(rows: Sequence[PointRow], reports: Mapping[str, str],
                 capacity: SearchResult | None) -> Table:
    intervals = {p.label: p.interval for p in attainment_points(rows)}
    verdicts = {e.rate: e.verdict for e in capacity.evidence} if capacity is not None else {}
    out: list[list[str | Cell]] = []
    for r in rows:
        label = r.label
        state = r.status
        if r.client_saturated:
            state += ", client saturated"
        verdict = verdicts.get(r.load) if r.kind == "rate" and r.status == "done" else None
        out.append([
            Cell(label, "name", reports.get(label, "")), Cell(state, "text"), fmt.num(r.value),
            fmt.rate(r.offered_rps, ""), fmt.rate(r.achieved_rps, ""),
            fmt.rate(r.requests_per_s, ""), fmt.rate(r.output_tokens_per_s, ""),
            *(fmt.ms(r.percentile(m, p)) for m, _, _ in LATENCY_METRICS for p in ("p50", "p99")),
            fmt.count(r.measured), fmt.count(r.good), fmt.pct(r.attainment),
            lc.interval_text(intervals.get(label)), verdict or fmt.NONE, fmt.rate(r.goodput_rps, ""),
            fmt.pct(r.error_rate), fmt.ms(r.dispatch_lag_p99_s), fmt.count(r.exit_code),
        ])
    header = ["point", "status", "load", "offered req/s", "sent req/s", "completed req/s", "output tok/s",
              *(f"{name} {p}" for _, name, _ in LATENCY_METRICS for p in ("p50", "p99")), "measured", "good",
              "attainment", "interval", "verdict", "goodput req/s", "failed", "dispatch lag p99", "exit"]
    return Table("Points (sweep.json's rows; a point's name links to its own report where it has one)", header, out,
                 "load: the planned rate (req/s) or concurrency; offered: the rate scheduled in the measurement window. "
                 "Latencies are exact percentiles over every sample of the point.")


def sweep_page(doc: SweepView, label: str, *, reports: Mapping[str, str] | None = None, model: str | None = None,
               workload: str | None = None) -> Page:
    """`reports`: point label → link to its report.html; `model`, `workload`: as a point's run.json says."""
    rows = sweep_rows(doc)
    points, ceiling, kind = load_points(rows), ceiling_row(rows), load_kind(rows)
    capacity = sweep_capacity(points) if kind == "rate" else None
    slo, lag = doc.slo, doc.lag_threshold_s
    latency: list[Item] = [latency_chart(points, ceiling, metric, name, slo.get(slo_key) if slo_key else None)
                           for metric, name, slo_key in LATENCY_METRICS]
    finished = done(rows)
    sections = [
        Section("Latency against throughput", latency,
                "Each finished point's exact p50 and p99 against the requests/s it completed."),
        Section("Goodput and SLO attainment", [attainment_chart(points, capacity, kind, SWEEP_TARGET, ceiling),
                                               capacity_text(capacity, kind), goodput_chart(points, capacity, kind,
                                                                                            ceiling)]),
        Section("Errors and the client", [errors_chart(finished),
                                          lag_chart(finished, lag)]),
        Section("Points", [points_table(rows, reports or {}, capacity)]),
    ]
    if not finished:
        sections = [Section("Points", [Text("No point has finished yet."), points_table(rows, reports or {}, None)])]
    return Page(title=f"goodput sweep report: {label}", meta=sweep_meta(label, doc, model, workload),
                flags=sweep_flags(doc), sections=sections,
                footer="Written by goodput from sweep.json; each point's figures are its own summary.json's.")
