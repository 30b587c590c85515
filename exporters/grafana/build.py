"""Small builders for Grafana dashboard JSON (schema 39), so the shipped dashboards are generated, not
hand-edited: every target gets the `${datasource}` variable, panel ids are assigned in order, and the
layout flows left to right in a 24-column grid."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
SCHEMA_VERSION = 39


def target(expr: str, legend: str = "", ref: str = "A") -> dict[str, Any]:
    return {"refId": ref, "datasource": dict(DATASOURCE), "expr": expr, "legendFormat": legend, "range": True}


def datasource_variable() -> dict[str, Any]:
    return {"name": "datasource", "label": "Prometheus", "type": "datasource", "query": "prometheus",
            "current": {}, "hide": 0, "refresh": 1, "regex": "", "options": []}


def query_variable(name: str, label: str, query: str, *, multi: bool = True) -> dict[str, Any]:
    """A `label_values(...)` variable; "All" matches every value, also the empty one, via `.*`."""
    return {"name": name, "label": label, "type": "query", "datasource": dict(DATASOURCE),
            "query": {"query": query, "refId": f"{name}-query"}, "definition": query, "refresh": 2,
            "multi": multi, "includeAll": True, "allValue": ".*", "current": {"text": "All", "value": "$__all"},
            "sort": 1, "hide": 0, "options": []}


@dataclass(slots=True)
class Layout:
    """Assigns ids and grid positions: panels fill rows of 24 columns, a `row` starts a new line."""

    panels: list[dict[str, Any]] = field(default_factory=list)
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

    def add(self, panel_type: str, title: str, targets: list[dict[str, Any]], *, unit: str = "short",
            w: int = 12, h: int = 8, description: str = "", options: dict[str, Any] | None = None,
            defaults: dict[str, Any] | None = None) -> None:
        if self._x + w > 24:
            self._newline()
        for i, t in enumerate(targets):
            t["refId"] = chr(ord("A") + i)
        panel = {
            "type": panel_type, "id": self._id(), "title": title, "description": description,
            "datasource": dict(DATASOURCE), "targets": targets,
            "gridPos": {"h": h, "w": w, "x": self._x, "y": self._y},
            "fieldConfig": {"defaults": {"unit": unit, **(defaults or {})}, "overrides": []},
            "options": options or ({"legend": {"displayMode": "list", "placement": "bottom"},
                                    "tooltip": {"mode": "multi"}} if panel_type == "timeseries" else {}),
        }
        self.panels.append(panel)
        self._x += w
        self._row_h = max(self._row_h, h)

    def timeseries(self, title: str, targets: list[dict[str, Any]], **kw: Any) -> None:
        self.add("timeseries", title, targets, **kw)

    def stat(self, title: str, expr: str, **kw: Any) -> None:
        kw.setdefault("w", 6)
        kw.setdefault("h", 4)
        self.add("stat", title, [target(expr)], options={"reduceOptions": {"calcs": ["lastNotNull"]},
                                                          "colorMode": "value", "graphMode": "area"}, **kw)


def quantile_targets(bucket_metric: str, selector: str, by: str = "", qs: tuple[float, ...] = (0.5, 0.9, 0.99),
                     window: str = "$__rate_interval") -> list[dict[str, Any]]:
    """histogram_quantile targets, one per quantile, summed over every label but `le` (and `by`)."""
    group = f"le, {by}" if by else "le"
    legend_by = f" {{{{{by}}}}}" if by else ""
    return [target(f"histogram_quantile({q}, sum by ({group}) (rate({bucket_metric}{{{selector}}}[{window}])))",
                   f"p{q * 100:g}{legend_by}") for q in qs]


def dashboard(*, uid: str, title: str, description: str, tags: list[str], variables: list[dict[str, Any]],
              layout: Layout) -> dict[str, Any]:
    return {
        "uid": uid, "title": title, "description": description, "tags": tags, "editable": True,
        "schemaVersion": SCHEMA_VERSION, "version": 1, "timezone": "", "refresh": "10s",
        "time": {"from": "now-30m", "to": "now"}, "graphTooltip": 1,
        "annotations": {"list": []}, "links": [],
        "templating": {"list": [datasource_variable(), *variables]},
        "panels": layout.panels,
    }
