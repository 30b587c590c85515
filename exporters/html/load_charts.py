"""Figure parts shared by the sweep and capacity pages: points with their attainment interval as error
bars, limits drawn across a chart, and one look per verdict (symbol and colour, so it reads without colour).
"""

from __future__ import annotations

from collections.abc import Sequence

from exporters.html import figures as fig
from exporters.html import fmt
from exporters.html.plotly_json import Annotation, Shape, Trace

PCT = 100.0  # fractions → percent on attainment axes
ATTAINMENT_AXIS = "SLO attainment (%)"
RATE_AXIS = "requests/s"

# verdict → (legend name, marker symbol, colour)
VERDICT_LOOK: dict[str, tuple[str, str, str]] = {
    "pass": ("pass: interval above the target", "circle", "#009E73"),
    "fail": ("fail: interval below the target", "x", "#D55E00"),
    "undecided": ("undecided: interval straddles the target", "diamond", "#E69F00"),
    "unresolved": ("unresolved: straddles the target, not shown to pass", "diamond", "#E69F00"),
    "not_evidence": ("not evidence: the client fell behind", "square-open", "#888888"),
    "too_short": ("too short: the point measured no request", "circle-open", "#888888"),
    "ceiling": ("throughput ceiling run (closed loop)", "star", "#000000"),
}
CAPACITY_COLOUR = "#0072B2"


def verdict_key(verdict: str) -> str:
    """The look of a verdict as capacity.json or a row spells it ('not evidence' in a row)."""
    key = verdict.replace(" ", "_")
    return key if key in VERDICT_LOOK else "undecided"


def interval_trace(name: str, x: Sequence[float], attainment: Sequence[float | None],
                   intervals: Sequence[tuple[float, float] | None], labels: Sequence[str], *, symbol: str,
                   colour: str, size: float = 10.0) -> Trace:
    """Attainment points (in %) with their confidence intervals as error bars; each interval's ends are in
    the trace (customdata), so the chart's table view lists them beside the point."""
    y = fig.numbers(list(attainment), PCT)
    lo = fig.numbers([i[0] if i else None for i in intervals], PCT)
    hi = fig.numbers([i[1] if i else None for i in intervals], PCT)
    plus = [None if h is None or v is None else max(h - v, 0.0) for v, h in zip(y, hi, strict=True)]
    minus = [None if lo_ is None or v is None else max(v - lo_, 0.0) for v, lo_ in zip(y, lo, strict=True)]
    return {
        "type": "scatter", "mode": "markers", "name": name, "x": fig.numbers(list(x)), "y": y,
        "text": list(labels), "customdata": [[a, b] for a, b in zip(lo, hi, strict=True)],
        "meta": {"columns": ["interval low (%)", "interval high (%)"]},
        "hovertemplate": "%{text}<br>%{x} req/s: %{y:.4g} %<br>interval %{customdata[0]:.4g} – %{customdata[1]:.4g} %"
                         "<extra></extra>",
        "error_y": {"type": "data", "symmetric": False, "array": plus, "arrayminus": minus, "color": colour,
                    "thickness": 1.5, "width": 5},
        "marker": {"symbol": symbol, "color": colour, "size": size, "line": {"width": 1, "color": colour}},
    }


def hrule(name: str, x0: float, x1: float, y: float, *, colour: str = "#B00020", dash: str = "dash") -> Trace:
    """A horizontal limit across [x0, x1] (a target, a threshold)."""
    trace = fig.rule(name, fig.numbers([x0, x1]), fig.numbers([y, y]), colour=colour)
    trace["line"]["dash"] = dash
    return trace


def vrule(name: str, x: float, y0: float, y1: float, *, colour: str = CAPACITY_COLOUR,
          dash: str = "dashdot") -> Trace:
    """A vertical mark at x over [y0, y1] (the capacity, a ceiling)."""
    trace = fig.rule(name, fig.numbers([x, x]), fig.numbers([y0, y1]), colour=colour)
    trace["line"]["dash"] = dash
    return trace


def drawn_if_near(rule: Trace, limit: float, highest: float | None, *, factor: float = 3.0) -> Trace:
    """A limit far above every plotted value (more than `factor` × the highest) would flatten the points
    against the axis: it is then listed in the legend, drawn when chosen there."""
    if highest is not None and highest > 0 and limit > factor * highest:
        rule["name"] += ": far above every point (choose it in the legend to draw it)"
        rule["visible"] = "legendonly"
    return rule


def upper_rule(upper: float, y0: float, y1: float) -> Trace:
    """The lowest rate not shown to pass: the bracket's upper end."""
    return vrule(f"lowest rate not shown to pass {upper:g} req/s", upper, y0, y1, colour="#D55E00", dash="dash")


def band(x0: float, x1: float, label: str) -> tuple[Shape, Annotation]:
    """A shaded interval of the x axis with its label above the plot (the bracket)."""
    shape, note = fig.shaded(x0, x1, label)
    shape["fillcolor"], shape["opacity"] = CAPACITY_COLOUR, 0.12
    return shape, note


def hband(y0: float, y1: float, label: str) -> tuple[Shape, Annotation]:
    """A shaded interval of the y axis with its label at the right (the bracket, on a chart of rates)."""
    shape: Shape = {"type": "rect", "xref": "paper", "yref": "y", "x0": 0, "x1": 1, "y0": y0, "y1": y1,
             "fillcolor": CAPACITY_COLOUR, "opacity": 0.12, "line": {"width": 0}, "layer": "below"}
    note: Annotation = {"xref": "paper", "yref": "y", "x": 1, "xanchor": "right", "y": y1, "yanchor": "bottom", "text": label,
            "showarrow": False, "font": {"size": 10, "color": "#555"}}
    return shape, note


def span(values: Sequence[float | None], *, pad: float = 0.05) -> tuple[float, float]:
    """The range of the values given, widened a little on both sides ((0, 1) when none)."""
    known = [v for v in values if v is not None]
    if not known:
        return 0.0, 1.0
    lo, hi = min(known), max(known)
    width = (hi - lo) or abs(hi) or 1.0
    return lo - pad * width, hi + pad * width


def rate_text(rate: float | None) -> str:
    return fmt.NONE if rate is None else f"{rate:g} req/s"


def interval_text(interval: tuple[float, float] | None) -> str:
    return fmt.NONE if interval is None else f"{fmt.pct(interval[0])} – {fmt.pct(interval[1])}"
