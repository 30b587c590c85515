"""The charts of a capacity search's page: attainment against rate with each rate's interval, the target,
the bracket and the capacity; the order in which the search probed; the requests it spent."""

from __future__ import annotations

from collections.abc import Sequence

from exporters.html import figures as fig
from exporters.html import load_charts as lc
from exporters.html.capacity_data import ProbeRun, Verdict
from exporters.html.page import Chart, Text
from exporters.html.plotly_json import Trace
from metrics.results import Ceiling, ProbedRate


def _bracket_label(v: Verdict) -> str:
    return f"bracket {v.rate:g}–{v.upper:g} req/s"


def attainment_chart(rates: Sequence[ProbedRate], runs: Sequence[ProbeRun], verdict: Verdict,
                     ceiling: Ceiling | None) -> Chart | Text:
    """Pooled attainment per probed rate with its interval (capacity.json's), each run's own, the target,
    the bracket shaded and the capacity marked."""
    shown = [r for r in rates if r.attainment is not None]
    if not shown:
        return Text("Attainment against rate: no probe measured a request that was evidence.")
    traces: list[Trace] = []
    for key in lc.VERDICT_LOOK:
        group = [r for r in shown if lc.verdict_key(r.verdict) == key]
        if group:
            name, symbol, colour = lc.VERDICT_LOOK[key]
            traces.append(lc.interval_trace(name, [r.rate for r in group], [r.attainment for r in group],
                                            [r.interval for r in group],
                                            [f"{r.rate:g} req/s: {r.good} of {r.measured} good, {r.runs} run(s)"
                                             for r in group], symbol=symbol, colour=colour, size=11))
    single = [r for r in runs if r.rate is not None and r.attainment is not None]
    if single:
        each = fig.points("each run alone", fig.numbers([r.rate for r in single]),
                          fig.numbers([r.attainment for r in single], lc.PCT), 6, size=6, opacity=0.8)
        each["marker"]["symbol"] = "circle-open"
        each["text"], each["hovertemplate"] = [r.label for r in single], "%{text}: %{y:.4g} %<extra></extra>"
        traces.append(each)
    y0 = min([verdict.target, *(r.interval[0] for r in shown if r.interval),
              *(r.attainment for r in single if r.attainment is not None)]) * lc.PCT
    xs: list[float | None] = [r.rate for r in shown]
    ceiling_rps = ceiling.requests_per_s if ceiling is not None else None
    if ceiling is not None and isinstance(ceiling_rps, float):
        xs.append(ceiling_rps)
        traces.append(lc.vrule(f"throughput ceiling {ceiling_rps:.3g} req/s (closed loop, "
                               f"concurrency {ceiling.concurrency})", ceiling_rps, y0, lc.PCT,
                               colour="#000000", dash="dot"))
    traces.append(lc.hrule(f"target {verdict.target * lc.PCT:g} %", *lc.span(xs), verdict.target * lc.PCT))
    shapes, notes = [], []
    if verdict.upper is not None:
        traces.append(lc.upper_rule(verdict.upper, y0, lc.PCT))
    if verdict.rate is not None:
        traces.append(lc.vrule(f"capacity {verdict.rate:g} req/s", verdict.rate, y0, lc.PCT))
    if verdict.rate is not None and verdict.upper is not None:
        shape, note = lc.band(verdict.rate, verdict.upper, _bracket_label(verdict))
        shapes.append(shape)
        notes.append(note)
        traces.append(lc.hrule(_bracket_label(verdict), verdict.rate, verdict.upper, verdict.target * lc.PCT,
                               colour=lc.CAPACITY_COLOUR, dash="solid"))
        traces[-1]["line"]["width"] = 6
        traces[-1]["opacity"] = 0.5
    lay = fig.layout(f"SLO attainment against rate, target {verdict.target * lc.PCT:g} %", fig.axis("rate (req/s)"),
                     fig.axis(lc.ATTAINMENT_AXIS), shapes=shapes, annotations=notes)
    return Chart(fig.figure(traces, lay), f"Each probed rate's attainment pooled over its runs, with its "
                 f"{verdict.confidence * 100:g} % {verdict.method} interval as error bars (capacity.json 'rates'); "
                 "symbols and colours give the verdict. Open circles: each run alone. The shaded bracket runs from "
                 "the highest rate shown to pass (the capacity) to the lowest rate not shown to pass.")


def order_chart(runs: Sequence[ProbeRun], verdict: Verdict, ceiling: Ceiling | None) -> Chart | Text:
    """The rate of each run in the order the search made them."""
    probes = [r for r in runs if r.rate is not None]
    if not probes:
        return Text("The search: no rate was probed.")
    path = fig.line("order probed", [r.order for r in probes], fig.numbers([r.rate for r in probes]), 6, width=1.5,
                    mode="lines")
    path["line"]["dash"] = "dot"
    traces = [path]
    for key in lc.VERDICT_LOOK:
        group = [r for r in probes if lc.verdict_key(r.verdict) == key]
        if group:
            name, symbol, colour = lc.VERDICT_LOOK[key]
            traces.append({"type": "scatter", "mode": "markers+text", "name": name, "x": [r.order for r in group],
                           "y": fig.numbers([r.rate for r in group]), "text": [r.label for r in group],
                           "textposition": "top center", "textfont": {"size": 10}, "cliponaxis": False,
                           "marker": {"symbol": symbol, "color": colour, "size": 11}})
    ceiling_run = next((r for r in runs if r.rate is None), None)
    ceiling_rps = ceiling.requests_per_s if ceiling is not None else None
    if ceiling_run is not None and isinstance(ceiling_rps, float):
        name, symbol, colour = lc.VERDICT_LOOK["ceiling"]
        traces.append({"type": "scatter", "mode": "markers", "name": f"{name}: {ceiling_rps:.3g} req/s "
                       "completed", "x": [ceiling_run.order], "y": fig.numbers([ceiling_rps]),
                       "text": [ceiling_run.label], "marker": {"symbol": symbol, "color": colour, "size": 13}})
    shapes, notes = [], []
    last = runs[-1].order
    if verdict.rate is not None:
        traces.append(lc.hrule(f"capacity {verdict.rate:g} req/s", 1, last, verdict.rate, colour=lc.CAPACITY_COLOUR,
                               dash="dashdot"))
    if verdict.rate is not None and verdict.upper is not None:
        shape, note = lc.hband(verdict.rate, verdict.upper, _bracket_label(verdict))
        shapes.append(shape)
        notes.append(note)
    lay = fig.layout("The search: the rate of each run, in the order run", fig.axis("run (in the order run)", dtick=1),
                     fig.axis("rate (req/s)", rangemode="tozero"), shapes=shapes, annotations=notes)
    return Chart(fig.figure(traces, lay), "Each run of the search and the verdict of its rate once the run was pooled: "
                 "a rate that straddles the target is run again, then the search bisects the bracket.")


def spent_chart(runs: Sequence[ProbeRun], verdict: Verdict) -> Chart:
    """Requests each run sent, and all the search had sent after it."""
    labels = [r.label for r in runs]
    bars = fig.bars("requests sent by the run", labels, [r.sent for r in runs], 0)
    total = fig.line("requests sent so far", labels, [r.spent for r in runs], 1, mode="lines+markers")
    lay = fig.layout(f"Requests spent: {verdict.requests:,} in {verdict.points} runs", fig.axis("run", type="category"),
                     fig.axis("requests", rangemode="tozero"))
    return Chart(fig.figure([bars, total], lay), "Every request sent counts, warm-up included (capacity.json "
                 "capacity.requests); a verdict near the target needs more of them.")
