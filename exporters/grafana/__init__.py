"""Grafana: the dashboards over goodput's Prometheus series (`dashboards`, built by `build`), written with
the rules as one bundle (`export`, `goodput dashboards`).
"""

from __future__ import annotations

from exporters.grafana.export import export

__all__ = ["export"]
