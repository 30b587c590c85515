"""The charts of `goodput predict`'s page: each predicted latency's p50/p90/p99, the SLO attainment and the
output throughput against the offered rate, the predicted capacity with its band, and the points of every
--measured directory overlaid (markers in the colour of the predicted line they are held against)."""

from __future__ import annotations

from collections.abc import Sequence

from exporters.html import figures as fig
from exporters.html import fmt
from exporters.html import load_charts as lc
from exporters.html.page import Chart, Text
from exporters.html.plotly_json import Annotation, Shape, Trace
from metrics.capacity_search import proportion_interval
from metrics.results import MeasuredComparison, PredictedPoint, PredictView

PERCENTILES = ("p50", "p90", "p99")
RATE_AXIS = "offered rate (req/s)"
MEASURED_SYMBOLS = ("circle-open", "square-open", "diamond-open", "triangle-up-open", "x-open", "star-open")
BAND_COLOUR = "#0072B2"


def _points(doc: PredictView) -> list[PredictedPoint]:
    return sorted(doc.points, key=lambda p: float(p.rate))


def _measured(doc: PredictView) -> list[MeasuredComparison]:
    return list(doc.measured or ())


def _marker_trace(name: str, xs: list[float], ys: list[float | None], labels: list[str], *, colour: str,
                  symbol: str) -> Trace:
    return {"type": "scatter", "mode": "markers", "name": name, "x": fig.numbers(xs), "y": ys, "text": labels,
            "hovertemplate": "%{text}<br>%{x} req/s: %{y:.4g}<extra>" + name + "</extra>",
            "marker": {"symbol": symbol, "color": colour, "size": 10, "line": {"width": 2, "color": colour}}}


def _measured_label(m: MeasuredComparison) -> str:
    return f"measured {m.label}" + (" (another workload)" if m.workload_differences else "")


def latency_chart(doc: PredictView, metric: str, name: str) -> Chart | Text:
    """Predicted p50/p90/p99 of one metric against the offered rate, each --measured point's the same."""
    points, measured = _points(doc), _measured(doc)
    rates = [float(p.rate) for p in points]
    traces: list[Trace] = []
    values: list[float] = []
    for i, pct in enumerate(PERCENTILES):
        ys = [p.latency_s[metric][pct] for p in points]
        values += [v for v in ys if v is not None]
        traces.append(fig.line(f"predicted {name} {pct}", fig.numbers(rates), fig.numbers(ys, fig.MS), i,
                               mode="lines+markers"))
    for j, m in enumerate(measured):
        rows = m.points
        for i, pct in enumerate(PERCENTILES):
            ys = [r.measured.latency_s[metric][pct] for r in rows]
            values += [v for v in ys if v is not None]
            traces.append(_marker_trace(f"{_measured_label(m)} {name} {pct}", [r.rate for r in rows],
                                        fig.numbers(ys, fig.MS), [r.label for r in rows],
                                        colour=fig.style(i)["color"], symbol=MEASURED_SYMBOLS[j % len(MEASURED_SYMBOLS)]))
    if not values:
        return Text(f"{name} against the offered rate: nothing predicted or measured at a rate.")
    limit = (doc.slo or {}).get(f"{metric}_s")
    if isinstance(limit, int | float):
        xs = rates + [r.rate for m in measured for r in m.points]
        rule = lc.hrule(f"SLO {name} ≤ {fmt.ms(limit)}", *lc.span(xs), limit * fig.MS)
        traces.append(lc.drawn_if_near(rule, limit, max(values)))
    lay = fig.layout(f"{name} p50, p90 and p99 against the offered rate", fig.axis(RATE_AXIS),
                     fig.axis(f"{name} (ms)", rangemode="tozero"), updatemenus=fig.log_toggle("yaxis"))
    return Chart(fig.figure(traces, lay), f"Lines: the predicted {name} percentiles over every request of each "
                 "predicted rate (predict.json 'points'). Open markers: each --measured point's own percentiles, "
                 "at the rate it was offered, in the colour of the percentile they are held against; one symbol "
                 "per measured directory. 'log' switches the y axis to a log scale.")


def _capacity_marks(doc: PredictView, y0: float, y1: float) -> tuple[list[Trace], list[Shape], list[Annotation]]:
    """The predicted capacity and its band, and each measured capacity, as traces, shapes and notes."""
    traces: list[Trace] = []
    shapes: list[Shape] = []
    notes: list[Annotation] = []
    if doc.capacity is not None:
        cap = doc.capacity.band
        traces.append(lc.vrule(f"predicted capacity {cap.rate:.3g} req/s", cap.rate, y0, y1))
        if cap.high > cap.low:
            shape, note = lc.band(cap.low, cap.high, f"predicted band {cap.low:.3g}–{cap.high:.3g} req/s")
            shapes.append(shape)
            notes.append(note)
    for j, m in enumerate(_measured(doc)):
        found = m.capacity.measured.rate if m.capacity is not None else None
        if found is not None:
            traces.append(lc.vrule(f"{_measured_label(m)}: capacity {found:.3g} req/s", found, y0, y1,
                                   colour=fig.COLOURS[(j + 1) % len(fig.COLOURS)], dash="dot"))
    return traces, shapes, notes


def attainment_chart(doc: PredictView) -> Chart | Text:
    """Predicted attainment against the offered rate; the target, the predicted capacity and its band; each
    measured point's attainment with its 95 % Wilson interval, and each measured capacity."""
    points, measured = _points(doc), _measured(doc)
    predicted = [(p.rate, p.attainment) for p in points if p.attainment is not None]
    traces: list[Trace] = []
    if predicted:
        traces.append(fig.line("predicted attainment", fig.numbers([r for r, _ in predicted]),
                               fig.numbers([a for _, a in predicted], lc.PCT), 0, mode="lines+markers"))
    lows: list[float] = [a for _, a in predicted]
    for j, m in enumerate(measured):
        rows = [(r, r.measured.attainment) for r in m.points if r.measured.attainment is not None]
        intervals = [proportion_interval(r.measured.good, r.measured.measured, 0.95, "wilson")
                     if r.measured.good is not None and r.measured.measured else None for r, _ in rows]
        lows += [i[0] for i in intervals if i] + [a for _, a in rows]
        if rows:
            other = "" if m.slo_compared else " (another SLO)"  # drawn, not held against the line
            traces.append(lc.interval_trace(_measured_label(m) + other, [r.rate for r, _ in rows],
                                            [a for _, a in rows], intervals,
                                            [r.label for r, _ in rows], symbol=MEASURED_SYMBOLS[j % len(MEASURED_SYMBOLS)],
                                            colour=fig.COLOURS[(j + 1) % len(fig.COLOURS)]))
    cap = doc.capacity
    if not traces and cap is None:
        return Text("SLO attainment: no SLO was given (--slo), so every request is good.")
    target = cap.attainment if cap is not None else None
    y0 = min([*lows, *([target] if target is not None else []), 1.0]) * lc.PCT
    xs = [p.rate for p in points] + [r.rate for m in measured for r in m.points]
    if cap is not None:
        xs += [cap.band.low, cap.band.high]
    if target is not None:
        traces.append(lc.hrule(f"target {target * lc.PCT:g} %", *lc.span(xs), target * lc.PCT))
    marks, shapes, notes = _capacity_marks(doc, y0, lc.PCT)
    lay = fig.layout("SLO attainment against the offered rate" + (f", target {target * lc.PCT:g} %" if target else ""),
                     fig.axis(RATE_AXIS), fig.axis(lc.ATTAINMENT_AXIS), shapes=shapes, annotations=notes)
    return Chart(fig.figure(traces + marks, lay), "Line: the predicted share of requests meeting every part of the "
                 "SLO at each predicted rate. Shaded: the predicted capacity's band, the search repeated with every "
                 "step-time parameter one standard error slower, then faster. Markers: each measured point's "
                 "attainment with its 95 % Wilson interval (a directory that judged its requests by another SLO is marked "
                 "'another SLO': its attainment is not comparable); dotted lines: the capacity each measured "
                 "directory shows.")


def throughput_chart(doc: PredictView) -> Chart | Text:
    """Predicted output tokens/s against the offered rate, and each measured point's."""
    points, measured = _points(doc), _measured(doc)
    traces = [fig.line("predicted output tokens/s", fig.numbers([p.rate for p in points]),
                       fig.numbers([p.output_tokens_per_s for p in points]), 0, mode="lines+markers")] if points else []
    for j, m in enumerate(measured):
        rows = m.points
        if rows:
            traces.append(_marker_trace(f"{_measured_label(m)} output tokens/s", [r.rate for r in rows],
                                        fig.numbers([r.measured.output_tokens_per_s for r in rows]),
                                        [r.label for r in rows], colour=fig.COLOURS[(j + 1) % len(fig.COLOURS)],
                                        symbol=MEASURED_SYMBOLS[j % len(MEASURED_SYMBOLS)]))
    if not traces:
        return Text("Output throughput: nothing predicted or measured at a rate.")
    lay = fig.layout("Output tokens/s against the offered rate", fig.axis(RATE_AXIS),
                     fig.axis("output tokens/s", rangemode="tozero"))
    return Chart(fig.figure(traces, lay), "Predicted: all the requests' output tokens over the virtual run, from the "
                 "first arrival to the last token (every request runs to its max tokens). Measured: each point's "
                 "output tokens/s over its own measurement window. The spans differ (a short run's drain weighs "
                 "more in it), so no error is computed from them.")


def rates_text(rates: Sequence[float]) -> str:
    return ", ".join(f"{r:g}" for r in rates) + " req/s" if rates else fmt.NONE
