"""Small builders for Grafana dashboard JSON (schema 39), so the shipped dashboards are generated, not
hand-edited: every target gets the `${datasource}` variable, panel ids are assigned in order, and the
layout flows left to right in a 24-column grid."""

from __future__ import annotations

from dataclasses import dataclass, field

from exporters.grafana.model import (
    Bounds,
    Dashboard,
    DatasourceRef,
    DatasourceVariable,
    Panel,
    PanelOptions,
    QueryVariable,
    RowPanel,
    Target,
)

DATASOURCE: DatasourceRef = {"type": "prometheus", "uid": "${datasource}"}
SCHEMA_VERSION = 39


def target(expr: str, legend: str = "", ref: str = "A") -> Target:
    return {"refId": ref, "datasource": DATASOURCE.copy(), "expr": expr, "legendFormat": legend, "range": True}


def relabel(t: Target, legend: str) -> Target:
    """A copy of the target with another legend."""
    return {**t, "legendFormat": legend}


def datasource_variable() -> DatasourceVariable:
    return {"name": "datasource", "label": "Prometheus", "type": "datasource", "query": "prometheus",
            "current": {}, "hide": 0, "refresh": 1, "regex": "", "options": []}


def query_variable(name: str, label: str, query: str, *, multi: bool = True) -> QueryVariable:
    """A `label_values(...)` variable; "All" matches every value, also the empty one, via `.*`."""
    return {"name": name, "label": label, "type": "query", "datasource": DATASOURCE.copy(),
            "query": {"query": query, "refId": f"{name}-query"}, "definition": query, "refresh": 2,
            "multi": multi, "includeAll": True, "allValue": ".*", "current": {"text": "All", "value": "$__all"},
            "sort": 1, "hide": 0, "options": []}


@dataclass(slots=True)
class Layout:
    """Assigns ids and grid positions: panels fill rows of 24 columns, a `row` starts a new line."""

    panels: list[Panel | RowPanel] = field(default_factory=list)
    _next_id: int = 1
    _x: int = 0
    _y: int = 0
    _row_h: int = 0

    def _id(self) -> int:
        self._next_id += 1
        return self._next_id - 1

    def row(self, title: str) -> None:
        self._newline()
        self.panels.append({"type": "row", "id": self._id(), "title": title, "collapsed": False, "panels": [],
                            "gridPos": {"h": 1, "w": 24, "x": 0, "y": self._y}})
        self._y += 1

    def _newline(self) -> None:
        if self._x:
            self._y += self._row_h
            self._x, self._row_h = 0, 0

    def add(self, panel_type: str, title: str, targets: list[Target], *, unit: str = "short",
            w: int = 12, h: int = 8, description: str = "", options: PanelOptions | None = None,
            defaults: Bounds | None = None) -> None:
        if self._x + w > 24:
            self._newline()
        for i, t in enumerate(targets):
            t["refId"] = chr(ord("A") + i)
        panel: Panel = {
            "type": panel_type, "id": self._id(), "title": title, "description": description,
            "datasource": DATASOURCE.copy(), "targets": targets,
            "gridPos": {"h": h, "w": w, "x": self._x, "y": self._y},
            "fieldConfig": {"defaults": {"unit": unit, **(defaults or {})}, "overrides": []},
            "options": options or ({"legend": {"displayMode": "list", "placement": "bottom"},
                                    "tooltip": {"mode": "multi"}} if panel_type == "timeseries" else {}),
        }
        self.panels.append(panel)
        self._x += w
        self._row_h = max(self._row_h, h)

    def timeseries(self, title: str, targets: list[Target], *, unit: str = "short", description: str = "",
                   defaults: Bounds | None = None) -> None:
        self.add("timeseries", title, targets, unit=unit, description=description, defaults=defaults)

    def stat(self, title: str, expr: str, *, unit: str = "short", description: str = "") -> None:
        self.add("stat", title, [target(expr)], unit=unit, w=6, h=4, description=description,
                 options={"reduceOptions": {"calcs": ["lastNotNull"]}, "colorMode": "value", "graphMode": "area"})


def quantile_targets(bucket_metric: str, selector: str, by: str = "", qs: tuple[float, ...] = (0.5, 0.9, 0.99),
                     window: str = "$__rate_interval") -> list[Target]:
    """histogram_quantile targets, one per quantile, summed over every label but `le` (and `by`)."""
    group = f"le, {by}" if by else "le"
    legend_by = f" {{{{{by}}}}}" if by else ""
    return [target(f"histogram_quantile({q}, sum by ({group}) (rate({bucket_metric}{{{selector}}}[{window}])))",
                   f"p{q * 100:g}{legend_by}") for q in qs]


def dashboard(*, uid: str, title: str, description: str, tags: list[str], variables: list[QueryVariable],
              layout: Layout) -> Dashboard:
    return {
        "uid": uid, "title": title, "description": description, "tags": tags, "editable": True,
        "schemaVersion": SCHEMA_VERSION, "version": 1, "timezone": "", "refresh": "10s",
        "time": {"from": "now-30m", "to": "now"}, "graphTooltip": 1,
        "annotations": {"list": []}, "links": [],
        "templating": {"list": [datasource_variable(), *variables]},
        "panels": layout.panels,
    }
