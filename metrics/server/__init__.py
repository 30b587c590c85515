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
    from metrics.server.histograms import (
        INTERPOLATION,
        CumulativeHistogram,
        add_histograms,
        counter_delta,
        histogram_delta,
        histogram_figures,
        ratio,
    )
    from metrics.server.release import GaugePoint, release_report, release_warning

__all__ = [
    "INTERPOLATION",
    "CumulativeHistogram",
    "GaugePoint",
    "add_histograms",
    "counter_delta",
    "gpu_section",
    "histogram_delta",
    "histogram_figures",
    "ratio",
    "release_report",
    "release_warning",
]

__getattr__ = lazy_names(__name__, {
    "gpu_section": "gpu",
    "CumulativeHistogram": "histograms", "INTERPOLATION": "histograms", "add_histograms": "histograms",
    "counter_delta": "histograms", "histogram_delta": "histograms", "histogram_figures": "histograms",
    "ratio": "histograms",
    "GaugePoint": "release", "release_report": "release", "release_warning": "release",
})
