"""The server side of a run where it is known (client − server TTFT, queue / prefill / decode phases, the
gauges scraped from its /metrics, its histograms) and the roofline floors beside the measured latency."""

from __future__ import annotations

from typing import Any

from exporters.html import figures as fig
from exporters.html import fmt
from exporters.html.cdf import cdf_curve
from exporters.html.dist_charts import cdf_layout, curve_traces
from exporters.html.page import Cell, Chart, Item, Section, Table, Text
from exporters.html.plotly_json import Trace
from exporters.html.run_data import RunData
from exporters.html.server_data import client_minus_server_ttft, gauge_series
from exporters.html.time_charts import T_AXIS
from metrics.latency import Samples
from metrics.results import Quantile, Roofline, Server

PHASES = (("queue_s", "queue"), ("prefill_s", "prefill"), ("decode_s", "decode"))


def client_server_chart(data: RunData) -> Chart | None:
    diff = client_minus_server_ttft(data.frame, data.values["ttft_s"], data.sampled)
    curve = cdf_curve(Samples.per_request(diff), data.sampled)
    if curve is None:
        return None
    traces = curve_traces(curve, 0, name=f"client − server TTFT ({curve.count:,} requests)")
    return Chart(fig.figure(traces, cdf_layout("Client − server TTFT (network and client overhead)", "difference (ms)")),
                 "The server stamps its chunks on its own clock (the reference server does); the difference to the "
                 "client's TTFT is the time spent between the two: network, socket queues, SSE parsing.")


def phases_chart(data: RunData) -> Chart | None:
    traces: list[Trace] = []
    for i, (key, name) in enumerate(PHASES):
        values = data.frame.server_phases.get(key)
        if values is None:
            continue
        curve = cdf_curve(Samples.per_request(values), data.sampled)
        if curve is not None:
            traces += curve_traces(curve, i, name=f"{name} ({curve.count:,})")
    if not traces:
        return None
    return Chart(fig.figure(traces, cdf_layout("Server phases per request: queue, prefill, decode", "time (ms)")),
                 "As the server reported them in each request's final chunk.")


def gauges_charts(data: RunData) -> list[Chart]:
    series = gauge_series(data.server_series, data.run.start_unix_s)
    charts = []
    groups = ((("running", "waiting"), "Server: requests running and waiting", "requests"),
              (("KV-cache usage", "prefix-cache hit rate", "prefix-cache hit rate (server's gauge)"),
               "Server: KV-cache usage and prefix-cache hit rate", "percent"))
    for names, title, unit in groups:
        traces = [fig.line(n, fig.numbers(series[n][0]), fig.numbers(series[n][1]), i, mode="lines+markers")
                  for i, n in enumerate(names) if n in series]
        if traces:
            y = fig.axis(unit, range_=[0, 105]) if unit == "percent" else fig.axis(unit, rangemode="tozero")
            charts.append(Chart(fig.figure(traces, fig.layout(title, fig.axis(T_AXIS), y)),
                                f"Scraped from the server's /metrics every {_interval(data)} during the run "
                                "(server_metrics.jsonl); the hit rate is Δhits / Δqueries between two scrapes."))
    return charts


def _interval(data: RunData) -> str:
    prom = data.view.server.prometheus
    interval = prom.interval_s if prom is not None else None
    return f"{interval:g} s" if interval is not None else "few seconds"


def histograms_table(server: Server) -> Table | None:
    prom = server.prometheus
    if prom is None or not prom.histograms:
        return None
    rows: list[list[Any]] = []
    for key, h in prom.histograms.items():
        seconds = key.endswith("_s")
        show = fmt.ms if seconds else fmt.num

        def within(q: Quantile, show: Any = show) -> str:
            b = q.range or q.bucket  # what the sum allows, else the bucket
            if b is not None and b[1] is None:
                return f"{show(q.value)} (above {show(b[0])})"
            return f"{show(q.value)} (in {show(b[0])}–{show(b[1])})" if b is not None else show(q.value)
        rows.append([h.metric if h.metric is not None else key, fmt.num(h.count), show(h.mean), within(h.p50),
                     within(h.p99)])
    return Table("Server /metrics histograms over the run (last − first scrape)", ["metric", "count", "mean", "p50", "p99"],
                 rows, prom.interpolation)


def server_section(data: RunData) -> Section | None:
    items: list[Item] = [c for c in (client_server_chart(data), phases_chart(data)) if c is not None]
    items += gauges_charts(data)
    table = histograms_table(data.view.server)
    if table is not None:
        items.append(table)
    prom = data.view.server.prometheus
    if prom is not None and prom.absent:
        items.append(Text("Not exposed by the server (absent, not zero): " + ", ".join(prom.absent) + "."))
    if not items:
        return None
    return Section("Server side", items, "What the server itself reported, where it did.")


def roofline_section(roof: Roofline | None) -> Section | None:
    if roof is None:
        return None
    where = f"{roof.spec_model} on {roof.spec_gpu} (tp {roof.spec_tp})"
    if roof.error:
        return Section("Roofline floors", [Text(f"No floors for {where}: {roof.error}")])
    names = [("ttft_s", "TTFT p50"), ("tpot_s", "TPOT p50"), ("e2e_s", "E2E p50")]
    shown = [(row, n) for k, n in names if (row := roof.rows.get(k)) is not None and row.floor is not None]
    if not shown:
        return None
    labels = [n for _, n in shown]
    traces = [fig.bars("measured", labels, fig.numbers([row.measured_p50 for row, _ in shown], fig.MS), 0),
              fig.bars("roofline floor (no deployment can beat it)", labels,
                       fig.numbers([row.floor for row, _ in shown], fig.MS), 1)]
    lay = fig.layout(f"Measured p50 beside the roofline floors of {where}", fig.axis("metric", type="category"),
                     fig.axis("ms", log=True), barmode="group")
    rows: list[list[str | Cell]] = [[n, fmt.ms(row.measured_p50), fmt.ms(row.floor), fmt.num(row.ratio, 3)]
                                    for row, n in shown]
    table = Table("Roofline", ["metric", "measured", "floor", "measured / floor"], rows,
                  f"Floors for this run's own shape: mean prompt and output tokens, {fmt.num(roof.mean_in_flight, 3)} "
                  "requests in flight as the decode batch (Little's law).")
    return Section("Roofline floors", [Chart(fig.figure(traces, lay), "A log scale: floors are often far below."), table])
