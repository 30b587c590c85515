"""Over-time charts of a run: each request's TTFT and TPOT against its send time with rolling
percentiles, request and token rates, requests in flight, failures by kind and dispatch lag.

The x axis is seconds since the run's anchor (the first intended send is 0). Grey bands mark the parts
of the run outside the measurement window (warm-up, cool-down): they are drawn, but not in the summary.
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np

from exporters.html import figures as fig
from exporters.html import fmt
from exporters.html import timeline as tl
from exporters.html.downsample import SCATTER_POINTS, thin_scatter
from exporters.html.page import Chart, Item, Section, Text
from exporters.html.plotly_json import Annotation, Shape
from exporters.html.run_data import RunData
from metrics.records import OK

T_AXIS = "time since the run's start (s)"


class Bands(TypedDict):
    """Layout keys: the grey bands and their labels."""

    shapes: list[Shape]
    annotations: list[Annotation]


def excluded_bands(data: RunData, span: tuple[float, float]) -> Bands:
    """Layout shapes and notes for warm-up and cool-down."""
    shapes: list[Shape] = []
    notes: list[Annotation] = []
    lo, hi = span
    cfg = data.config
    if cfg.warmup_s > 0:
        s, n = fig.shaded(lo, min(cfg.warmup_s, hi), "warm-up (not measured)")
        shapes.append(s)
        notes.append(n)
    if cfg.cooldown_s > 0 and data.frame.n:
        end = cfg.schedule_end_s if cfg.schedule_end_s is not None else float(tl.seconds(data.frame.intended_ns).max())
        s, n = fig.shaded(max(end - cfg.cooldown_s, lo), hi, "cool-down (not measured)")
        shapes.append(s)
        notes.append(n)
    return {"shapes": shapes, "annotations": notes}


def per_request_chart(data: RunData, key: str, name: str, slo_s: float | None, span: tuple[float, float],
                      *, x_key: str = "sent", ok_only: bool = True) -> Chart | Text:
    """One point per request (successful ones with `ok_only`; thinned beyond the point budget) and the
    rolling p50 / p99 of all of them."""
    frame = data.frame
    use_request = frame.has_sent & (frame.status == OK) if ok_only else frame.has_sent
    x_ns = frame.sent_ns if x_key == "sent" else frame.intended_ns
    x = np.where(use_request, tl.seconds(x_ns), np.nan)
    y = data.values[key]
    use = ~np.isnan(y) & ~np.isnan(x)
    if not use.any():
        return Text(f"{name} over time: no {'successful ' if ok_only else ''}request has a {name}.")
    keep = thin_scatter(x, y, SCATTER_POINTS)
    window = tl.rolling_window_s(span[1] - span[0], int(use.sum()))
    centers, rolling = tl.rolling_percentiles(x, y, window_s=window)
    drawn = f"{keep.shape[0]:,} of {int(use.sum()):,} requests drawn" if keep.shape[0] < use.sum() else \
        f"all {int(use.sum()):,} requests"
    traces = [fig.points(f"each request ({drawn})", fig.numbers(x[keep]), fig.numbers(y[keep], fig.MS), 0)]
    for i, (p, values) in enumerate(rolling.items(), start=1):
        traces.append(fig.line(f"rolling p{p:g} (window {fmt.ms(window)})", fig.numbers(centers),
                               fig.numbers(values, fig.MS), i, width=2.5))
    if slo_s is not None:
        traces.append(fig.rule(f"SLO {name} ≤ {fmt.ms(slo_s)}", fig.numbers(list(span)), fig.numbers([slo_s, slo_s], fig.MS)))
    what = "send" if x_key == "sent" else "intended send"
    lay = fig.layout(f"{name} of each request over time", fig.axis(f"{T_AXIS}, at its {what}"),
                     fig.axis(f"{name} (ms)"), updatemenus=fig.log_toggle("yaxis"), **excluded_bands(data, span))
    description = (f"Beyond {SCATTER_POINTS:,} points the scatter keeps each time slice's highest value and an even "
                   "random share of the rest; the rolling percentiles are exact over every request (including "
                   "warm-up and cool-down) sent within the window around each point.")
    return Chart(fig.figure(traces, lay), description)


def rates_chart(data: RunData, bins: tl.Bins, span: tuple[float, float]) -> Chart:
    rates = tl.request_rates(data.frame, bins)
    rates["good (within every SLO)"] = tl.good_rate(data.frame, data.good, bins)
    x = fig.numbers(bins.centers)
    traces = [fig.line(name, x, fig.numbers(v), i)
              for i, (name, v) in enumerate(rates.items())]
    lay = fig.layout("Requests per second", fig.axis(T_AXIS), fig.axis("requests/s", rangemode="tozero"), **excluded_bands(data, span))
    return Chart(fig.figure(traces, lay), f"Counts per {fmt.width(bins.width_s)} bin divided by its width; "
                 "sends at their send time, ends at stream close (or last chunk).")


def tokens_chart(data: RunData, bins: tl.Bins, span: tuple[float, float]) -> Chart:
    traces = [fig.line("output tokens received/s", fig.numbers(bins.centers), fig.numbers(tl.token_rate(data.frame, bins)), 0)]
    lay = fig.layout("Output tokens per second", fig.axis(T_AXIS), fig.axis("tokens/s", rangemode="tozero"), **excluded_bands(data, span))
    return Chart(fig.figure(traces, lay), f"Tokens of every content chunk received in each {fmt.width(bins.width_s)} "
                 "bin (failed requests' chunks included: the server produced them), at their arrival time.")


def in_flight_chart(data: RunData, bins: tl.Bins, span: tuple[float, float]) -> Chart:
    peak, mean = tl.in_flight(data.frame, bins)
    x = fig.numbers(bins.centers)
    traces = [fig.line("maximum in the bin", x, fig.numbers(peak), 0), fig.line("time average in the bin", x, fig.numbers(mean), 1)]
    lay = fig.layout("Requests in flight", fig.axis(T_AXIS), fig.axis("requests", rangemode="tozero"), **excluded_bands(data, span))
    return Chart(fig.figure(traces, lay), "A request is in flight from its send to its stream close (or last chunk).")


def failures_chart(data: RunData, bins: tl.Bins, span: tuple[float, float]) -> Chart | Text:
    kinds = tl.failures_by_kind(data.frame, bins)
    if not kinds:
        return Text("Failures by kind: no request failed or was cancelled.")
    x = fig.numbers(bins.centers)
    traces = [fig.bars(f"{kind} ({int(v.sum()):,})", x, fig.numbers(v), i) for i, (kind, v) in enumerate(kinds.items())]
    lay = fig.layout(f"Failed and cancelled requests per {fmt.width(bins.width_s)}, by kind", fig.axis(T_AXIS),
                     fig.axis("requests", rangemode="tozero"), barmode="stack", bargap=0.05, **excluded_bands(data, span))
    return Chart(fig.figure(traces, lay), "At the time each request ended; kinds as in summary.json 'requests.errors' "
                 "(loadgen/http/errors.py documents them).")


def lag_chart(data: RunData, span: tuple[float, float]) -> Chart | Text:
    chart = per_request_chart(data, "dispatch_lag_s", "dispatch lag", None, span, x_key="intended", ok_only=False)
    if isinstance(chart, Chart):
        threshold = data.config.lag_threshold_s
        chart.figure["data"].append(fig.rule(f"client saturated above p99 {fmt.ms(threshold)}", fig.numbers(list(span)),
                                             fig.numbers([threshold, threshold], fig.MS)))
        chart.description = ("Dispatch lag = actual − intended send time of every request sent, whatever its outcome: "
                             "the client's own honesty. When its p99 over the measured requests exceeds the threshold "
                             "the run is flagged client saturated. " + chart.description)
    return chart


def over_time_section(data: RunData) -> Section:
    span = tl.time_span(data.frame)
    bins = tl.make_bins(*span, target=tl.bin_target(data.frame.n))
    slo = data.config.slo
    items: list[Item] = [
        per_request_chart(data, "ttft_s", "TTFT", slo.ttft_s, span),
        per_request_chart(data, "tpot_s", "TPOT", slo.tpot_s, span),
        rates_chart(data, bins, span), tokens_chart(data, bins, span), in_flight_chart(data, bins, span),
        failures_chart(data, bins, span), lag_chart(data, span),
    ]
    return Section("Over time", items, "Where in the run things happened: a tail that is one bad minute "
                   "looks different from one spread over the whole run.")
