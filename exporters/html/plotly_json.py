"""The Plotly figure JSON the report pages embed (`{"data": [trace, ...], "layout": {...}}`), as TypedDicts:
only the attributes the pages draw with. Plain dicts at run time, so the JSON written is what was built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NotRequired, TypedDict

XValues = Sequence[float | str | None]  # numbers, or category labels
YValues = Sequence[float | None]  # None: a gap in a line


class Font(TypedDict, total=False):
    family: str
    size: float
    color: str


class Line(TypedDict, total=False):
    """A trace's line, a marker's outline or a shape's border."""

    color: str
    dash: str
    width: float
    shape: str


class Pattern(TypedDict):
    shape: str
    fillmode: str
    fgcolor: str
    size: float


class Marker(TypedDict, total=False):
    symbol: str
    color: str
    size: float
    opacity: float
    line: Line
    pattern: Pattern


class ErrorBars(TypedDict):
    type: str
    symmetric: bool
    array: YValues
    arrayminus: YValues
    color: str
    thickness: float
    width: float


class TraceMeta(TypedDict):
    columns: list[str]  # the names of customdata's columns in the chart's table view


class Trace(TypedDict):
    type: str
    name: str
    mode: NotRequired[str]
    x: XValues
    y: YValues
    visible: NotRequired[bool | str]  # "legendonly": listed, drawn when chosen
    hovertext: NotRequired[Sequence[str]]
    text: NotRequired[Sequence[str]]
    textposition: NotRequired[str]
    textfont: NotRequired[Font]
    cliponaxis: NotRequired[bool]
    hoverinfo: NotRequired[str]
    customdata: NotRequired[list[list[float | None]]]
    meta: NotRequired[TraceMeta]
    hovertemplate: NotRequired[str]
    error_y: NotRequired[ErrorBars]
    line: NotRequired[Line]
    marker: NotRequired[Marker]
    opacity: NotRequired[float]


class Title(TypedDict):
    text: str
    x: NotRequired[float]
    xanchor: NotRequired[str]
    font: NotRequired[Font]


class AxisExtra(TypedDict, total=False):
    """What a chart sets on an axis beyond the report's style."""

    type: str
    dtick: float
    rangemode: str


class Axis(TypedDict):
    title: Title
    type: str
    zeroline: bool
    showline: bool
    linecolor: str
    gridcolor: str
    automargin: bool
    range: NotRequired[list[float]]
    dtick: NotRequired[float]
    rangemode: NotRequired[str]


class Shape(TypedDict):
    type: str
    xref: str
    yref: str
    x0: float
    x1: float
    y0: float
    y1: float
    fillcolor: str
    opacity: float
    line: Line
    layer: str


class Annotation(TypedDict):
    xref: str
    yref: str
    x: float
    xanchor: NotRequired[str]
    y: float
    yanchor: str
    text: str
    showarrow: bool
    font: Font


class Pad(TypedDict):
    b: int


class Button(TypedDict):
    label: str
    method: str
    args: list[dict[str, str]]  # {"<axis>.type": "log"}: the key names the axis


class UpdateMenu(TypedDict):
    type: str
    direction: str
    x: float
    xanchor: str
    y: float
    yanchor: str
    pad: Pad
    showactive: bool
    buttons: list[Button]


class Margin(TypedDict):
    l: int  # noqa: E741 (Plotly's name)
    r: int
    t: int
    b: int


class Legend(TypedDict):
    orientation: str
    y: float
    yanchor: str


class LayoutExtra(TypedDict, total=False):
    """What a chart adds to the report's layout."""

    updatemenus: list[UpdateMenu]
    shapes: list[Shape]
    annotations: list[Annotation]
    barmode: str
    bargap: float


class Layout(TypedDict):
    title: Title
    xaxis: Axis
    yaxis: Axis
    height: int
    margin: Margin
    legend: Legend
    hovermode: str
    paper_bgcolor: str
    plot_bgcolor: str
    font: Font
    updatemenus: NotRequired[list[UpdateMenu]]
    shapes: NotRequired[list[Shape]]
    annotations: NotRequired[list[Annotation]]
    barmode: NotRequired[str]
    bargap: NotRequired[float]


class Figure(TypedDict):
    data: list[Trace]
    layout: Layout
