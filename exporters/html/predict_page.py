"""The page of `goodput predict` (predict.html beside predict.json, from predict.json alone): per predicted
rate TTFT, TPOT and E2E p50/p90/p99, the SLO attainment and the output throughput against the offered rate,
the predicted capacity with its band, replicas and cost when given; with --measured, every measured point
on the same charts and a table of predicted against measured with the error of each figure."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from exporters.html import fmt
from exporters.html.cost_table import cost_table
from exporters.html.header import slo_text
from exporters.html.page import Cell, Flag, Item, Page, Section, Table, Text, render_page
from exporters.html.predict_charts import (
    PERCENTILES,
    attainment_chart,
    latency_chart,
    rates_text,
    throughput_chart,
)
from metrics.results import MeasuredComparison, PredictView, write_atomic

METRICS = (("ttft", "TTFT"), ("tpot", "TPOT"), ("e2e", "E2E"))


def err(value: float | None, unit: str = "%") -> str:
    return fmt.NONE if not isinstance(value, int | float) else f"{value:+.1f} {unit}"


def _spec_value(doc: PredictView, *keys: str) -> object:
    """A value of the predicted run spec's JSON (`_spec_value(doc, "load", "seed")`); None when absent."""
    value: object = doc.spec
    for key in keys:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _or_none(value: object) -> object:
    return fmt.NONE if value is None else value


def predict_meta(doc: PredictView) -> list[tuple[str, str]]:
    cap = doc.capacity
    measured = doc.measured or ()
    return [
        ("server model", f"{doc.server_model} ({doc.model.form or fmt.NONE} step-time form)"),
        ("workload", doc.workload or fmt.NONE),
        ("arrivals", f"{_or_none(_spec_value(doc, 'load', 'arrival', 'kind'))}, "
                     f"{fmt.count(_spec_value(doc, 'load', 'requests'))} requests per rate, "
                     f"seed {_or_none(_spec_value(doc, 'load', 'seed'))}"),
        ("SLO", slo_text(doc.slo)),
        ("rates predicted", rates_text([float(p.rate) for p in doc.points])),
        ("capacity", f"highest rate with {fmt.pct(cap.attainment)} of requests good" if cap
         else "not searched (--capacity)"),
        ("replicas", f"{doc.replicas} behind a {doc.routing} router"),
        ("measured", ", ".join(f"{m.path} ({m.kind})" for m in measured) or fmt.NONE),
    ]


def predict_flags(doc: PredictView) -> list[Flag]:
    flags = [Flag("info", "Predicted, not measured.", "Every predicted figure comes from running the reference "
                  "engine's scheduler over the workload's arrival schedule in virtual time, each step lasting what "
                  "the server model says; no request was sent.")]
    note = doc.capacity.note if doc.capacity is not None else None
    if note:
        flags.append(Flag("warn", "Attainment not monotone.", f"{note[0].upper()}{note[1:]}."))
    for m in doc.measured or ():
        for d in m.workload_differences:
            flags.append(Flag("warn", "Another workload.", f"{m.label} measured another workload than the one "
                              f"predicted ({d}): its points are drawn and compared, but they are not of this workload."))
        flags += [Flag("info", "Note.", n) for n in m.notes]
    return flags


def points_table(doc: PredictView) -> Table:
    rows: list[list[str | Cell]] = []
    for p in sorted(doc.points, key=lambda p: float(p.rate)):
        lat = p.latency_s
        rows.append([f"{p.rate:g}", fmt.count(p.requests),
                     *(fmt.ms(lat[m][pct]) for m, _ in METRICS for pct in PERCENTILES), fmt.pct(p.attainment),
                     fmt.rate(p.output_tokens_per_s, ""), fmt.count(p.preemptions)])
    header = ["rate (req/s)", "requests", *(f"{name} {pct}" for _, name in METRICS for pct in PERCENTILES),
              "attainment", "output tokens/s", "preemptions"]
    return Table("Predicted, per rate (predict.json 'points')", header, rows,
                 "" if rows else "No rate was predicted: give --rates, or --measured directories to predict at their rates.")


def bracket_text(rate: float | None, upper: float | None) -> str:
    if upper is None:
        return fmt.NONE if rate is None else f"from {rate:.4g} req/s (nothing above it failed)"
    return f"{rate:.4g} – {upper:.4g} req/s (bracket)" if rate is not None else \
        f"below {upper:.4g} req/s (lowest rate not shown to pass)"


def capacity_table(doc: PredictView) -> Table | None:
    cap = doc.capacity
    if cap is None:
        return None
    band = cap.band
    rows: list[list[str | Cell]] = [
        ["predicted", f"{band.rate:.4g} req/s", f"{band.low:.4g} – {band.high:.4g} req/s", fmt.NONE, fmt.NONE]]
    for m in doc.measured or ():
        c = m.capacity
        if c is None:
            continue
        found = c.measured
        rows.append([Cell(f"measured {m.label} ({found.basis})", "text"),
                     fmt.rate(found.rate, " req/s") if found.rate is not None else "none shown to pass",
                     bracket_text(found.rate, found.upper), f"{found.target * 100:g} %", err(c.error_pct)])
    return Table(f"Capacity at {cap.attainment * 100:g} % attainment, {doc.replicas} replica(s)",
                 ["", "capacity", "band (predicted) or bracket (measured)", "target", "predicted error"], rows,
                 "The predicted band repeats the search with every step-time parameter one standard error slower, "
                 "then faster. Error: (predicted − measured) / measured.")


def comparison_tables(m: MeasuredComparison) -> list[Item]:
    """Predicted against measured for one --measured directory: latencies, then attainment and throughput."""
    lat_rows: list[list[str | Cell]] = []
    other_rows: list[list[str | Cell]] = []
    for r in m.points:
        meas, e = r.measured, r.error_pct
        label = r.label + (" (client saturated)" if meas.client_saturated else "")
        for key, name in METRICS:
            cells: list[str | Cell] = [f"{r.rate:g}", Cell(label, "name"), name]
            for pct in PERCENTILES:
                cells += [fmt.ms(r.predicted_latency_s[key][pct]), fmt.ms(meas.latency_s[key][pct]), err(e[key][pct])]
            lat_rows.append(cells)
        other_rows.append([f"{r.rate:g}", Cell(label, "name"), fmt.pct(r.predicted_attainment),
                           fmt.pct(meas.attainment), err(r.attainment_error_pp, "pp")])
    if not m.points:
        return [Text(f"{m.label}: no measured point at an offered rate to compare.")]
    head = ["rate (req/s)", "point", "metric"]
    for pct in PERCENTILES:
        head += [f"{pct} predicted", f"{pct} measured", f"{pct} error"]
    differs = "; ".join(m.workload_differences)
    note = "Error: (predicted − measured) / measured." + (f" Another workload was measured: {differs}." if differs else "")
    return [Table(f"Latency, predicted against {m.label} ({m.kind}), each at the point's offered rate",
                  head, lat_rows, note),
            Table(f"SLO attainment, predicted against {m.label}",
                  ["rate (req/s)", "point", "attainment predicted", "measured", "error"], other_rows,
                  "Error in percentage points (pp); – where the SLOs differ.")]


def model_table(doc: PredictView) -> Table:
    rows: list[list[str | Cell]] = []
    for name, p in doc.model.params.items():
        rows.append([name, fmt.ms(p.value) if p.value else "0", fmt.NONE if p.std_err is None else fmt.ms(p.std_err)])
    limits = ", ".join(f"{k} {v}" for k, v in doc.model.limits.items())
    return Table("The server model (step-time parameters, seconds per unit shown in ms)", ["parameter", "value",
                 "standard error"], rows, f"Scheduler limits: {limits}." if limits else "")


def predict_page(doc: PredictView) -> Page:
    capacity: list[Item] = [t for t in (capacity_table(doc), cost_table(doc.cost, source="predict.json"))
                            if t is not None]
    sections = []
    if capacity:
        sections.append(Section("Capacity", capacity))
    sections += [
        Section("Latency against the offered rate", [latency_chart(doc, key, name) for key, name in METRICS]),
        Section("SLO attainment and throughput", [attainment_chart(doc), throughput_chart(doc), points_table(doc)]),
    ]
    for m in doc.measured or ():
        sections.append(Section(f"Predicted against measured: {m.label}", comparison_tables(m)))
    sections.append(Section("Server model", [model_table(doc)]))
    return Page(title=f"goodput predict report: {Path(doc.server_model).name}", meta=predict_meta(doc),
                flags=predict_flags(doc), sections=sections,
                footer="Written by goodput predict from predict.json; measured figures are their directories' own.")


def write_predict_report(doc: PredictView, path: Path) -> Path:
    """Write predict.json's page to `path` (self-contained: the plotting library inline); OSError when it
    cannot be written."""
    write_atomic(path, render_page(predict_page(doc)).encode("utf-8"))
    return path
