"""summary.json: `summarize` builds it from a run's records (`build`), with the measurement window
(`window`), the buckets by prompt and output length, cache and turns (`buckets`), the failures, lost and
cancelled requests, sessions, tokens and answer figures in their own modules.

The names below are imported on first use (metrics.lazy_face).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics import lazy_names

if TYPE_CHECKING:
    from metrics.summary.answers import shown
    from metrics.summary.buckets import (
        CACHE_CLASSES,
        DEFAULT_OUTPUT_EDGES,
        DEFAULT_PROMPT_EDGES,
        IMAGE_LABELS,
        TURN_LABELS,
        Dimension,
        cache_classes,
        range_codes,
        range_labels,
    )
    from metrics.summary.build import (
        SummaryConfig,
        bucket_dimensions,
        derive_per_request,
        summarize,
        summarize_frame,
    )
    from metrics.summary.cancels import excluded_from_goodput, planned
    from metrics.summary.server_side import server_ttft_s
    from metrics.summary.window import Window, completion_ns, measurement_window, throughput

__all__ = [
    "CACHE_CLASSES",
    "DEFAULT_OUTPUT_EDGES",
    "DEFAULT_PROMPT_EDGES",
    "IMAGE_LABELS",
    "TURN_LABELS",
    "Dimension",
    "SummaryConfig",
    "Window",
    "bucket_dimensions",
    "cache_classes",
    "completion_ns",
    "derive_per_request",
    "excluded_from_goodput",
    "measurement_window",
    "planned",
    "range_codes",
    "range_labels",
    "server_ttft_s",
    "shown",
    "summarize",
    "summarize_frame",
    "throughput",
]

__getattr__ = lazy_names(__name__, {
    "shown": "answers",
    "CACHE_CLASSES": "buckets", "DEFAULT_OUTPUT_EDGES": "buckets", "DEFAULT_PROMPT_EDGES": "buckets",
    "Dimension": "buckets", "IMAGE_LABELS": "buckets", "TURN_LABELS": "buckets", "cache_classes": "buckets",
    "range_codes": "buckets", "range_labels": "buckets",
    "SummaryConfig": "build", "bucket_dimensions": "build", "derive_per_request": "build",
    "summarize": "build", "summarize_frame": "build",
    "excluded_from_goodput": "cancels", "planned": "cancels",
    "server_ttft_s": "server_side",
    "Window": "window", "completion_ns": "window", "measurement_window": "window", "throughput": "window",
})
