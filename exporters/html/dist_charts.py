"""Distribution charts: the CDF of a latency metric over every sample, p50 / p90 / p99 marked, the SLO
drawn, one line per bucket on demand (hidden until chosen in the legend)."""

from __future__ import annotations

from collections.abc import Sequence

from exporters.html import figures as fig
from exporters.html import fmt
from exporters.html.cdf import Curve, cdf_by_label, cdf_curve
from exporters.html.page import Chart, Item, Section, Text
from exporters.html.plotly_json import Layout, Trace
from exporters.html.run_data import RunData

# metric key, title, SLO field drawn on it, what one sample is
DISTRIBUTIONS: tuple[tuple[str, str, str | None, str], ...] = (
    ("ttft_s", "TTFT", "ttft_s", "one per request: first content chunk − send"),
    ("itl_s", "ITL per chunk", None, "one per gap between consecutive content chunks"),
    ("itl_token_s", "ITL per token", None, "each gap split evenly over the tokens of its chunk, one per token"),
    ("tpot_s", "TPOT", "tpot_s", "one per request of ≥ 2 output tokens: (last − first chunk) / (N − 1)"),
    ("e2e_s", "E2E", "e2e_s", "one per request: last content chunk − send"),
)
Y_AXIS = "fraction of samples ≤ x"


def mark_labels(curve: Curve) -> list[str]:
    return [f"p{p:g} {fmt.ms(v)}" for p, v in curve.marks.items()]


def curve_traces(curve: Curve, i: int, *, name: str, width: float = 2.5, visible: bool | str = True,
                 dash: str | None = None, with_marks: bool = True, written: bool = True) -> list[Trace]:
    """A CDF line and, optionally, its marked percentiles (x in ms; their values written beside them, or
    shown on hover only where several runs' marks would overlap)."""
    traces = [fig.line(name, fig.numbers(curve.x, fig.MS), fig.numbers(curve.y), i, width=width, visible=visible,
                       dash=dash)]
    if with_marks and curve.marks:
        traces.append(fig.marks(f"{name}: " + " / ".join(f"p{p:g}" for p in curve.marks),
                                fig.numbers(list(curve.marks.values()), fig.MS),
                                fig.numbers([p / 100 for p in curve.marks]), mark_labels(curve), i, written=written))
    return traces


def slo_rule(name: str, limit_s: float | None) -> list[Trace]:
    if limit_s is None:
        return []
    return [fig.rule(f"SLO {name} ≤ {fmt.ms(limit_s)}", fig.numbers([limit_s, limit_s], fig.MS), [0, 1])]


def cdf_layout(title: str, unit_title: str) -> Layout:
    return fig.layout(title, fig.axis(unit_title), fig.axis(Y_AXIS, range_=[0, 1.02]),
                      updatemenus=fig.log_toggle(), height=420)


def distribution_chart(data: RunData, key: str, name: str, slo_key: str | None, what: str) -> Chart | Text:
    """One metric's CDF; a note instead when it has no sample."""
    sampled = data.sampled
    overall = cdf_curve(data.samples[key], sampled)
    if overall is None:
        return Text(f"{name}: no samples (no measured request succeeded with enough content chunks).")
    traces = curve_traces(overall, 0, name=f"all measured ({overall.count:,} samples)")
    if key == "ttft_s":
        schedule = cdf_curve(data.samples["ttft_from_schedule_s"], sampled)
        if schedule is not None:
            traces += curve_traces(schedule, 1, name="TTFT from schedule (includes dispatch lag)", visible="legendonly",
                                   with_marks=False)
    slo = getattr(data.config.slo, slo_key) if slo_key else None
    traces += slo_rule(name, slo)
    i = 2
    for curve in cdf_by_label(data.samples[key], sampled, data.dimensions):
        traces += curve_traces(curve, i, name=f"{curve.name} ({curve.count:,})", width=1.5, visible="legendonly",
                               with_marks=False)
        i += 1
    description = (f"Samples: {what}. A point (x, y) says a fraction y of the samples are ≤ x. The marked percentiles "
                   "are exact over every sample and equal summary.json's. Bucket lines are hidden: choose them in the "
                   "legend. 'log' switches the x axis to a log scale, where the tail reads better.")
    return Chart(fig.figure(traces, cdf_layout(f"{name}: distribution (CDF)", f"{name} (ms)")), description)


def distributions_section(data: RunData) -> Section:
    items: list[Item] = [distribution_chart(data, *row) for row in DISTRIBUTIONS]
    return Section("Distributions", items,
                   "Only measured requests that succeeded contribute latency samples; failed ones are counted under "
                   "Requests and stay in the goodput denominator.")


def overlay_chart(curves: Sequence[tuple[str, Curve | None]], name: str, slo_s: float | None) -> Chart | Text:
    """Several runs' CDFs of one metric on one chart (the first run is the candidate: solid and thickest)."""
    traces: list[Trace] = []
    for i, (label, curve) in enumerate(curves):
        if curve is None:
            continue
        traces += curve_traces(curve, i, name=f"{label} ({curve.count:,})", width=3.0 if i == 0 else 2.0, written=False)
    if not traces:
        return Text(f"{name}: no samples in any run.")
    traces += slo_rule(name, slo_s)
    description = ("One line per run, p50 / p90 / p99 marked on each (exact over every sample; values on hover and in "
                   "the Runs table). The candidate is the solid line; baselines are dashed or dotted.")
    return Chart(fig.figure(traces, cdf_layout(f"{name}: distribution (CDF) per run", f"{name} (ms)")), description)
