"""The metrics library: everything computed from a run's records, below the load generator, the exporters
and the reference server. Its own modules are the shared vocabulary: SLOs and the goodput test (`slo`),
units and durations (`units`), the length grammar (`lengths`), burst delivery (`burst`), the garbage
collector paused for a block (`collector`); the folders hold
one job each (records, latency, summary, gate, server, model, capacity_search, results).

The names below are imported on first use; `lazy_names` is the helper every lazy face uses for that
(metrics.lazy_face).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics.lazy_face import lazy_names

if TYPE_CHECKING:
    from metrics.collector import gc_paused
    from metrics.lengths import LENGTH_KINDS, parse_length_spec
    from metrics.slo import SLO, good_requests, parse_slo, slo_field
    from metrics.units import NS_PER_S, parse_duration

__all__ = [
    "LENGTH_KINDS", "NS_PER_S", "SLO", "gc_paused", "good_requests", "lazy_names", "parse_duration",
    "parse_length_spec", "parse_slo", "slo_field",
]

__getattr__ = lazy_names(__name__, {
    "gc_paused": "collector", "LENGTH_KINDS": "lengths", "parse_length_spec": "lengths",
    "SLO": "slo", "good_requests": "slo", "parse_slo": "slo", "slo_field": "slo",
    "NS_PER_S": "units", "parse_duration": "units",
})
