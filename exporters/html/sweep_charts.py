"""The charts of a sweep's page: latency against throughput, attainment and goodput against the load,
errors and the client's dispatch lag per point. Built from sweep.json's rows (exporters.html.sweep_data)."""

from __future__ import annotations

from collections.abc import Sequence

from exporters.html import figures as fig
from exporters.html import fmt
from exporters.html import load_charts as lc
from exporters.html.page import Chart, Text
from exporters.html.plotly_json import Trace
from exporters.html.sweep_data import (
    LOAD_AXES,
    SWEEP_CONFIDENCE,
    AttainmentPoint,
    Series,
    attainment_points,
    column_series,
    latency_series,
)
from metrics.capacity_search import SearchResult
from metrics.results import PointRow

THROUGHPUT_AXIS = "completed requests/s (req/s)"


def _line(name: str, s: Series, i: int, scale: float = 1.0, *, width: float = 2.0) -> Trace:
    trace = fig.line(name, fig.numbers(s.x), fig.numbers(s.y, scale), i, width=width, mode="lines+markers")
    trace["text"], trace["hovertemplate"] = s.labels, "%{text}<br>x %{x}<br>y %{y}<extra>" + name + "</extra>"
    return trace


def latency_chart(points: Sequence[PointRow], ceiling: PointRow | None, metric: str, name: str,
                  slo_s: float | None) -> Chart | Text:
    """p50 and p99 of one metric against the requests/s each point completed, in order of load."""
    p50, p99 = latency_series(points, metric, "p50"), latency_series(points, metric, "p99")
    if not any(v is not None for v in p50.y + p99.y):
        return Text(f"{name} against throughput: no point has a {name} sample.")
    traces = [_line(f"{name} p50", p50, 0, fig.MS), _line(f"{name} p99", p99, 1, fig.MS)]
    xs = list(p50.x)
    if ceiling is not None:
        for j, p in enumerate(("p50", "p99")):
            s = latency_series([ceiling], metric, p)
            traces.append(fig.marks(f"ceiling {ceiling.label} {p} (closed loop)", fig.numbers(s.x),
                                    fig.numbers(s.y, fig.MS), s.labels, 6 + j, written=False))
            xs += s.x
    if slo_s is not None:
        rule = lc.hrule(f"SLO {name} ≤ {fmt.ms(slo_s)}", *lc.span(xs), slo_s * fig.MS)
        traces.append(lc.drawn_if_near(rule, slo_s, max(v for v in p50.y + p99.y if v is not None)))
    lay = fig.layout(f"{name} p50 and p99 against throughput", fig.axis(THROUGHPUT_AXIS),
                     fig.axis(f"{name} (ms)", rangemode="tozero"), updatemenus=fig.log_toggle("yaxis"))
    return Chart(fig.figure(traces, lay), f"One marker per finished point, joined in order of load: x is the requests/s "
                 f"it completed in its measurement window, y the exact p50 (solid) and p99 (dashed) over every {name} "
                 "sample of that point, as in sweep.json. Where the line turns up steeply the server is past its knee; "
                 "where it bends back to the left, more load completed less. 'log' switches the y axis to a log scale.")


def attainment_chart(points: Sequence[PointRow], capacity: SearchResult | None, kind: str, target: float,
                     ceiling: PointRow | None) -> Chart | Text:
    """Each point's SLO attainment with its interval, the target, and the capacity the points show."""
    found = attainment_points(points)
    if not found:
        return Text("SLO attainment: no point measured a request.")
    verdicts = {e.rate: e.verdict for e in capacity.evidence} if capacity is not None else {}
    groups: dict[str, list[AttainmentPoint]] = {}
    for p in found:
        key = "not_evidence" if p.client_saturated else verdicts.get(p.load, "") if kind == "rate" else ""
        groups.setdefault(key, []).append(p)
    traces = []
    for key, group in groups.items():
        name, symbol, colour = lc.VERDICT_LOOK[key] if key else ("each point", "circle", fig.COLOURS[0])
        traces.append(lc.interval_trace(name, [p.load for p in group], [p.attainment for p in group],
                                        [p.interval for p in group], [p.label for p in group], symbol=symbol,
                                        colour=colour))
    xs: list[float | None] = [p.load for p in found]
    y0 = min([target, *(p.interval[0] for p in found)]) * lc.PCT
    shapes, notes = [], []
    ceiling_rps = ceiling.requests_per_s if ceiling is not None else None
    if ceiling is not None and kind == "rate" and isinstance(ceiling_rps, float):
        traces.append(lc.vrule(f"throughput ceiling {ceiling_rps:.3g} req/s ({ceiling.label})",
                               ceiling_rps, y0, lc.PCT, colour="#000000", dash="dot"))
        xs.append(ceiling_rps)
    traces.append(lc.hrule(f"target {target * lc.PCT:g} %", *lc.span(xs), target * lc.PCT))
    if capacity is not None and capacity.upper is not None:
        traces.append(lc.upper_rule(capacity.upper, y0, lc.PCT))
    if capacity is not None and capacity.capacity is not None:
        traces.append(lc.vrule(f"capacity {capacity.capacity:g} req/s", capacity.capacity, y0, lc.PCT))
        if capacity.upper is not None:
            shape, note = lc.band(capacity.capacity, capacity.upper,
                                  f"bracket {capacity.capacity:g}–{capacity.upper:g} req/s")
            shapes.append(shape)
            notes.append(note)
    lay = fig.layout(f"SLO attainment against the load, target {target * lc.PCT:g} %", fig.axis(LOAD_AXES[kind]),
                     fig.axis(lc.ATTAINMENT_AXIS), shapes=shapes, annotations=notes)
    return Chart(fig.figure(traces, lay), f"Attainment = good / measured requests of each point (sweep.json), with its "
                 f"{SWEEP_CONFIDENCE * 100:g} % Wilson interval as error bars. The target and the verdicts are those "
                 "`goodput capacity` uses by default: a rate passes when its whole interval lies above the target. "
                 "The capacity marked is the highest rate shown to pass below every rate that was not.")


def goodput_chart(points: Sequence[PointRow], capacity: SearchResult | None, kind: str,
                  ceiling: PointRow | None) -> Chart | Text:
    """Goodput, completed and sent requests/s against the load."""
    if not points:
        return Text("Goodput against the load: no point of the sweep's load axis has finished.")
    traces = [_line("goodput (good requests/s)", column_series(points, "goodput_rps"), 0, width=3.0),
              _line("completed requests/s", column_series(points, "requests_per_s"), 1),
              _line("achieved send rate (req/s)", column_series(points, "achieved_rps"), 2)]
    loads = [p.load for p in points]
    if kind == "rate" and loads:
        top = max(loads)
        traces.append(fig.rule("offered rate (y = x)", [0, top], [0, top], colour=fig.GREY))
    ceiling_rps = ceiling.requests_per_s if ceiling is not None else None
    if ceiling is not None and isinstance(ceiling_rps, float) and loads:
        traces.append(lc.hrule(f"throughput ceiling ({ceiling.label})", *lc.span(loads), ceiling_rps,
                               colour="#000000", dash="dot"))
    if capacity is not None and capacity.capacity is not None:
        top_y = max([v for t in traces for v in t["y"] if v is not None] or [1.0])
        traces.append(lc.vrule(f"capacity {capacity.capacity:g} req/s", capacity.capacity, 0, top_y))
    lay = fig.layout("Goodput and throughput against the load", fig.axis(LOAD_AXES[kind]),
                     fig.axis(lc.RATE_AXIS, rangemode="tozero"))
    return Chart(fig.figure(traces, lay), "Goodput: requests that met every SLO per second of the measurement window; "
                 "completed: requests that succeeded; send rate: requests the client sent. While the server keeps up "
                 "they follow the offered rate; past its capacity completed requests level off and goodput falls.")


def errors_chart(rows: Sequence[PointRow]) -> Chart:
    """Failed share of the measured requests, per point in the order run."""
    labels = [r.label for r in rows]
    failed = [r.error_rate for r in rows]
    trace = fig.line("failed requests (% of measured)", labels, fig.numbers(failed, lc.PCT), 1, mode="lines+markers")
    lay = fig.layout("Failed requests per point", fig.axis("point (in the order run)", type="category"),
                     fig.axis("failed (% of measured requests)", rangemode="tozero"))
    return Chart(fig.figure([trace], lay), "Failed and cancelled measured requests / measured requests, per point "
                 "(sweep.json error_rate; the kinds of error are in each point's report).")


def lag_chart(rows: Sequence[PointRow], threshold_s: float | None) -> Chart:
    """The client's dispatch lag p99 per point, the saturation threshold, and the points past it."""
    labels = [r.label for r in rows]
    lag = [r.dispatch_lag_p99_s for r in rows]
    trace = fig.line("dispatch lag p99", labels, fig.numbers(lag, fig.MS), 0, mode="lines+markers")
    traces = [trace]
    saturated = [(label, v) for label, v, r in zip(labels, lag, rows, strict=True) if r.client_saturated]
    if saturated:
        traces.append(fig.marks("client saturated (the point measured the client too)", [x for x, _ in saturated],
                                fig.numbers([v for _, v in saturated], fig.MS), ["client saturated"] * len(saturated), 1,
                                written=False))
        marker = traces[-1]["marker"]
        marker["symbol"], marker["size"], marker["color"] = "x", 12, "#B00020"
    if threshold_s is not None and labels:
        rule = fig.rule(f"saturation threshold {fmt.ms(threshold_s)} (--lag-threshold)", [labels[0], labels[-1]],
                        fig.numbers([threshold_s] * 2, fig.MS))
        known = [v for v in lag if isinstance(v, int | float)]
        traces.append(lc.drawn_if_near(rule, threshold_s, max(known) if known else None))
    lay = fig.layout("Client dispatch lag p99 per point", fig.axis("point (in the order run)", type="category"),
                     fig.axis("dispatch lag p99 (ms)", rangemode="tozero"))
    return Chart(fig.figure(traces, lay), "How late the load generator sent its requests against their schedule "
                 "(p99 over the point). Above the threshold the client was saturated: the point measured the "
                 "load generator as well as the server, and `goodput capacity` takes no evidence from it.")
