"""Per-request latencies and their statistics: the derivations from a RequestFrame (`derive`: TTFT, TPOT,
ITL, E2E, ...; `answer`: reasoning and tool-call figures), the fluidity index (`fluidity`), samples and
their percentile blocks (`samples`, `stats`) and aggregates by bucket (`aggregate`).

`derive` and `answer` are faces' namespaces too: callers write `derive.ttft_s(frame)`.
"""

from __future__ import annotations

from metrics.latency import answer, derive
from metrics.latency.aggregate import Stats, selection_stats, stats_by_dimension
from metrics.latency.answer import ended_in_tool_call
from metrics.latency.derive import last_chunk_ns
from metrics.latency.fluidity import fluidity_index
from metrics.latency.samples import Samples
from metrics.latency.stats import PERCENTILE_METHOD, stats_block

__all__ = [
    "PERCENTILE_METHOD", "Samples", "Stats", "answer", "derive", "ended_in_tool_call", "fluidity_index",
    "last_chunk_ns", "selection_stats", "stats_block", "stats_by_dimension",
]
