"""Plotly figure JSON (`{"data": [...], "layout": {...}}`) in the report's one style.

Lines differ by dash pattern and markers by symbol as well as by colour, so a chart reads in greyscale
and for colour-blind readers (the Okabe–Ito palette). Numbers are rounded to 6 significant digits for
drawing: the tables and summary.json keep full precision.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Unpack

import numpy as np
import numpy.typing as npt

from exporters.html.plotly_json import (
    Annotation,
    Axis,
    AxisExtra,
    Figure,
    Layout,
    LayoutExtra,
    Shape,
    Trace,
    UpdateMenu,
    XValues,
    YValues,
)

FloatArray = npt.NDArray[np.float64]

COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "cross", "star", "triangle-down")
PATTERNS = ("", "/", "\\", "x", "-", "|", "+", ".")
MS = 1e3  # seconds → milliseconds on latency axes
GREY = "#888888"


def style(i: int) -> dict[str, str]:
    return {"color": COLOURS[i % len(COLOURS)], "dash": DASHES[i % len(DASHES)],
            "symbol": SYMBOLS[i % len(SYMBOLS)], "pattern": PATTERNS[i % len(PATTERNS)]}


def numbers(values: Sequence[float | None] | FloatArray, scale: float = 1.0) -> list[float | None]:
    """JSON-ready numbers: scaled, 6 significant digits; None, NaN and inf as null (a gap in a line)."""
    arr = np.asarray(values, dtype=np.float64) * scale
    out: list[float | None] = []
    for v in arr.tolist():
        out.append(float(f"{v:.6g}") if np.isfinite(v) else None)
    return out


def line(name: str, x: XValues, y: YValues, i: int, *, width: float = 2.0, shape: str = "linear", visible: bool | str = True,
         dash: str | None = None, mode: str = "lines") -> Trace:
    s = style(i)
    return {"type": "scatter", "mode": mode, "name": name, "x": x, "y": y, "visible": visible,
            "line": {"color": s["color"], "dash": dash or s["dash"], "width": width, "shape": shape},
            "marker": {"symbol": s["symbol"], "color": s["color"], "size": 6}}


def points(name: str, x: XValues, y: YValues, i: int, *, size: float = 4.0, opacity: float = 0.45) -> Trace:
    s = style(i)
    return {"type": "scatter", "mode": "markers", "name": name, "x": x, "y": y,
            "marker": {"symbol": s["symbol"], "color": s["color"], "size": size, "opacity": opacity}}


def marks(name: str, x: XValues, y: YValues, labels: list[str], i: int, *, written: bool = True) -> Trace:
    """Marked points, their labels written beside them or only on hover (percentiles on a CDF)."""
    s = style(i)
    return {"type": "scatter", "mode": "markers+text" if written else "markers", "hovertext": labels, "name": name, "x": x, "y": y, "text": labels,
            "textposition": "middle right", "textfont": {"size": 11, "color": s["color"]}, "cliponaxis": False,
            "marker": {"symbol": s["symbol"], "color": s["color"], "size": 9, "line": {"width": 1, "color": "#fff"}}}


def bars(name: str, x: XValues, y: YValues, i: int) -> Trace:
    s = style(i)
    return {"type": "bar", "name": name, "x": x, "y": y,
            "marker": {"color": s["color"], "pattern": {"shape": s["pattern"], "fillmode": "overlay",
                                                   "fgcolor": "#ffffff", "size": 6}}}


def rule(name: str, x: XValues, y: YValues, *, colour: str = "#B00020") -> Trace:
    """A limit drawn as a two-point line (an SLO, a threshold): in the legend and in the table view."""
    return {"type": "scatter", "mode": "lines", "name": name, "x": x, "y": y, "hoverinfo": "name+x+y",
            "line": {"color": colour, "dash": "dash", "width": 1.5}}


def axis(title: str, *, log: bool = False, range_: Sequence[float] | None = None, **extra: Unpack[AxisExtra]) -> Axis:
    style: Axis = {"title": {"text": title}, "type": "log" if log else "linear", "zeroline": False,
                   "showline": True, "linecolor": "#444", "gridcolor": "#e5e5e5", "automargin": True}
    if range_ is not None:
        style["range"] = list(range_)
    out: Axis = {**style, **extra}  # a key of `extra` already in the style keeps its place
    return out


# px above the plot of a chart with buttons: plotly's mode bar (top ~25 px), then the title and the buttons,
# raised MENU_PAD px above the plot so that a band's label at the plot's top edge stays clear of them.
MENU_TOP_MARGIN = 92
MENU_PAD = 22


def layout(title: str, x: Axis, y: Axis, *, height: int = 380, **extra: Unpack[LayoutExtra]) -> Layout:
    style: Layout = {
        "title": {"text": title, "x": 0, "xanchor": "left", "font": {"size": 15}},
        "xaxis": x, "yaxis": y, "height": height, "margin": {"l": 60, "r": 20, "t": 48, "b": 60},
        "legend": {"orientation": "h", "y": -0.3, "yanchor": "top"}, "hovermode": "closest",
        "paper_bgcolor": "#ffffff", "plot_bgcolor": "#ffffff", "font": {"family": "system-ui, sans-serif", "size": 12},
    }
    out: Layout = {**style, **extra}
    if "updatemenus" in extra:  # room for the buttons under plotly's mode bar, which sits at the top right
        margin = out["margin"]
        out["margin"] = {"l": margin["l"], "r": margin["r"], "t": MENU_TOP_MARGIN, "b": margin["b"]}
    return out


def log_toggle(axis_name: str = "xaxis") -> list[UpdateMenu]:
    """Buttons switching one axis between linear and log scale (tails of latency read better in log)."""
    return [{"type": "buttons", "direction": "right", "x": 1, "xanchor": "right", "y": 1, "yanchor": "bottom",
             "pad": {"b": MENU_PAD},
             "showactive": True, "buttons": [
                 {"label": "linear", "method": "relayout", "args": [{f"{axis_name}.type": "linear"}]},
                 {"label": "log", "method": "relayout", "args": [{f"{axis_name}.type": "log"}]}]}]


def shaded(x0: float, x1: float, label: str) -> tuple[Shape, Annotation]:
    """A grey band over an x interval (a part of the run outside the measurement window) and its label."""
    shape: Shape = {"type": "rect", "xref": "x", "yref": "paper", "x0": x0, "x1": x1, "y0": 0, "y1": 1,
             "fillcolor": GREY, "opacity": 0.15, "line": {"width": 0}, "layer": "below"}
    note: Annotation = {"xref": "x", "yref": "paper", "x": (x0 + x1) / 2, "y": 1, "yanchor": "bottom", "text": label,
            "showarrow": False, "font": {"size": 10, "color": "#555"}}
    return shape, note


def figure(data: list[Trace], lay: Layout) -> Figure:
    return {"data": data, "layout": lay}
