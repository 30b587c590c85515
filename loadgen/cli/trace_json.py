"""`goodput trace inspect --json`: the document it prints, as TypedDicts: the trace's shape as
loadgen.workload's describe_trace gives it, and the prefix-cache predictions of its predict_hits with
loadgen.run's resolve_block_size (TypedDicts match by their keys: mypy holds these to theirs where the
document is made)."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from loadgen.workload import CachePredictionJSON, TraceShape


class LruPart(TypedDict, total=False):
    lru: CachePredictionJSON  # with --cache-blocks


class PrefixCachePrediction(TypedDict):
    unbounded: CachePredictionJSON
    block_size: int
    block_size_source: str  # server | option | default
    block_size_from: NotRequired[str]  # the /metrics that said so (source "server")
    blocks: str  # how the block size was chosen, for the console
    lru: NotRequired[CachePredictionJSON]  # with --cache-blocks


class TraceInspection(TraceShape):
    prefix_cache: PrefixCachePrediction
