"""`goodput trace inspect --json`: the document it prints, as TypedDicts. The shape's fields are those
loadgen.workload's describe_trace gives and the predictions those of its predict_hits and of loadgen.run's
resolve_block_size (TypedDicts match by their keys: mypy holds these to theirs where the document is made)."""

from __future__ import annotations

from typing import NotRequired, TypedDict


class Lengths(TypedDict):
    mean: float
    p50: float
    p90: float
    p99: float
    min: float
    max: float


class Blocks(TypedDict):
    block_tokens: int
    total: int
    unique: int


class HitPrediction(TypedDict):
    block_size: int
    cache_blocks: int | None  # None: unbounded
    prompt_tokens: int
    cached_tokens: int
    hit_rate: float | None


class LruPart(TypedDict, total=False):
    lru: HitPrediction  # with --cache-blocks


class PrefixCachePrediction(TypedDict):
    unbounded: HitPrediction
    block_size: int
    block_size_source: str  # server | option | default
    block_size_from: NotRequired[str]  # the /metrics that said so (source "server")
    blocks: str  # how the block size was chosen, for the console
    lru: NotRequired[HitPrediction]  # with --cache-blocks


class TraceInspection(TypedDict):
    path: str
    format: str
    requests: int
    duration_s: float
    mean_rate_per_min: float | None
    peak_rate_per_min: float | None
    peak_window_s: float | None
    input_tokens: Lengths
    output_tokens: Lengths
    blocks: NotRequired[Blocks]  # a trace whose hash ids record prompt reuse
    prefix_cache: PrefixCachePrediction
