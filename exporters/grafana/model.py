"""The shapes of the Grafana dashboard JSON (schema 39) that exporters.grafana.build writes, key for key.

Only what goodput's dashboards use is declared. The lists goodput always leaves empty (a panel's field
overrides, the dashboard's links and annotation queries) are `list[Never]`: giving them an entry means
declaring its shape here first.
"""

from __future__ import annotations

from typing import Never, TypedDict


class DatasourceRef(TypedDict):
    type: str
    uid: str


class Target(TypedDict):
    """One PromQL query of a panel."""

    refId: str
    datasource: DatasourceRef
    expr: str
    legendFormat: str
    range: bool


class VariableOption(TypedDict, total=False):
    """A variable's value as Grafana keeps it (`current`, and each entry of `options`)."""

    text: str
    value: str
    selected: bool


class VariableQuery(TypedDict):
    query: str
    refId: str


class DatasourceVariable(TypedDict):
    """The variable that picks the Prometheus datasource every target uses."""

    name: str
    label: str
    type: str
    query: str  # the datasource type offered
    current: VariableOption
    hide: int
    refresh: int
    regex: str
    options: list[VariableOption]


class QueryVariable(TypedDict):
    """A `label_values(...)` variable."""

    name: str
    label: str
    type: str
    datasource: DatasourceRef
    query: VariableQuery
    definition: str
    refresh: int
    multi: bool
    includeAll: bool
    allValue: str
    current: VariableOption
    sort: int
    hide: int
    options: list[VariableOption]


Variable = DatasourceVariable | QueryVariable


class GridPos(TypedDict):
    h: int
    w: int
    x: int
    y: int


class Bounds(TypedDict, total=False):
    """A panel's fixed axis range (e.g. 0..1 for a ratio)."""

    min: float
    max: float


class FieldDefaults(Bounds):
    unit: str


class FieldConfig(TypedDict):
    defaults: FieldDefaults
    overrides: list[Never]


class Legend(TypedDict):
    displayMode: str
    placement: str


class Tooltip(TypedDict):
    mode: str


class ReduceOptions(TypedDict):
    calcs: list[str]


class PanelOptions(TypedDict, total=False):
    """A time series' legend and tooltip, a stat's reduction and colours; empty for other panels."""

    legend: Legend
    tooltip: Tooltip
    reduceOptions: ReduceOptions
    colorMode: str
    graphMode: str


class Panel(TypedDict):
    type: str
    id: int
    title: str
    description: str
    datasource: DatasourceRef
    targets: list[Target]
    gridPos: GridPos
    fieldConfig: FieldConfig
    options: PanelOptions


class RowPanel(TypedDict):
    """A row header; `panels` holds its panels only when the row is collapsed (goodput's never are)."""

    type: str
    id: int
    title: str
    collapsed: bool
    panels: list[Panel]
    gridPos: GridPos


TimeRange = TypedDict("TimeRange", {"from": str, "to": str})


class Annotations(TypedDict):
    list: list[Never]  # annotation queries


class Templating(TypedDict):
    list: list[Variable]


class Dashboard(TypedDict):
    uid: str
    title: str
    description: str
    tags: list[str]
    editable: bool
    schemaVersion: int
    version: int
    timezone: str
    refresh: str
    time: TimeRange
    graphTooltip: int
    annotations: Annotations
    links: list[Never]
    templating: Templating
    panels: list[Panel | RowPanel]
