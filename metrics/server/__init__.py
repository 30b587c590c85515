"""The server's side of a run: its Prometheus histograms and counters over the run (`histograms`), the
GPU section from `--scrape` (`gpu`), and how long the server took to release cancelled requests
(`release`).

The names below are imported on first use (metrics.lazy_face).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics import lazy_names

if TYPE_CHECKING:
    from metrics.server.gpu import gpu_section
    from metrics.server.gpu_json import Figure, GpuDocument, GpuReading, GpuSourceJSON, read_gpu_document
    from metrics.server.histograms import (
        INTERPOLATION,
        CumulativeHistogram,
        add_histograms,
        counter_delta,
        histogram_delta,
        histogram_figures,
        ratio,
    )
    from metrics.server.prometheus_json import (
        CounterJSON,
        GaugeJSON,
        GaugeKey,
        HistogramJSON,
        SeriesPoint,
        ServerPrometheusJSON,
    )
    from metrics.server.release import GaugePoint, release_report, release_warning

__all__ = [
    "INTERPOLATION",
    "CounterJSON",
    "CumulativeHistogram",
    "Figure",
    "GaugeJSON",
    "GaugeKey",
    "GaugePoint",
    "GpuDocument",
    "GpuReading",
    "GpuSourceJSON",
    "HistogramJSON",
    "SeriesPoint",
    "ServerPrometheusJSON",
    "add_histograms",
    "counter_delta",
    "gpu_section",
    "histogram_delta",
    "histogram_figures",
    "ratio",
    "read_gpu_document",
    "release_report",
    "release_warning",
]

__getattr__ = lazy_names(__name__, {
    "gpu_section": "gpu",
    "Figure": "gpu_json", "GpuDocument": "gpu_json", "GpuReading": "gpu_json", "GpuSourceJSON": "gpu_json",
    "read_gpu_document": "gpu_json",
    "CumulativeHistogram": "histograms", "INTERPOLATION": "histograms", "add_histograms": "histograms",
    "counter_delta": "histograms", "histogram_delta": "histograms", "histogram_figures": "histograms",
    "ratio": "histograms",
    "CounterJSON": "prometheus_json", "GaugeJSON": "prometheus_json", "GaugeKey": "prometheus_json",
    "HistogramJSON": "prometheus_json", "SeriesPoint": "prometheus_json", "ServerPrometheusJSON": "prometheus_json",
    "GaugePoint": "release", "release_report": "release", "release_warning": "release",
})
