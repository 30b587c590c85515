"""The JSON of the server's scraped `/metrics` (loadgen.run.scrape): a line of server_metrics.jsonl and the
`server.prometheus` section of summary.json (also kept in server_prometheus.json, which `goodput report`
puts back), with the `cancel_release` entry (metrics.server.release). Light: the standard library only."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

# A quantile's bucket, or the part of it the sum and count allow: [lower, upper]; upper None: +Inf.
Bounds = list[float | None]
GaugeKey = Literal["running", "waiting", "kv_cache_usage", "prefix_cache_hit_rate"]


class SeriesPoint(TypedDict):
    """A line of server_metrics.jsonl: one scrape's gauges and a few counters, by goodput's key."""

    t_s: float  # seconds from the scraper's start, when the answer was read
    unix_s: float
    started_unix_s: float  # when the scrape was asked: the gauges are of a moment in between
    running: NotRequired[float]
    waiting: NotRequired[float]
    kv_cache_usage: NotRequired[float]
    prefix_cache_hit_rate: NotRequired[float]
    prefix_cache_queries_total: NotRequired[float]
    prefix_cache_hits_total: NotRequired[float]
    generation_tokens_total: NotRequired[float]


class HistogramFiguresJSON(TypedDict):
    """metrics.server.histograms.histogram_figures: a (delta) histogram's figures."""

    count: float
    sum: float
    mean: float | None
    p50: float | None
    p50_bucket: Bounds | None
    p50_range: Bounds | None
    p90: float | None
    p90_bucket: Bounds | None
    p90_range: Bounds | None
    p95: float | None
    p95_bucket: Bounds | None
    p95_range: Bounds | None
    p99: float | None
    p99_bucket: Bounds | None
    p99_range: Bounds | None
    reset: NotRequired[bool]  # the server restarted between the first and last scrape


class HistogramJSON(HistogramFiguresJSON):
    metric: str  # the Prometheus name (written first)


class CounterJSON(TypedDict):
    metric: str
    delta: float | None
    reset: NotRequired[bool]


class GaugeJSON(TypedDict):
    metric: str
    samples: int
    mean: float
    min: float
    max: float
    last: float


class ReleaseJSON(TypedDict):
    """`cancel_release`: how long the server took to release the requests the client cancelled."""

    planned_cancels: int
    last_cancel_s: float
    held_before_run: NotRequired[float]
    observed: bool
    reason: NotRequired[str]  # not observed: why
    released: NotRequired[bool]
    released_after_s: NotRequired[float]
    resolution_s: NotRequired[float]
    last_scrape_after_s: NotRequired[float]  # never released: the last scrape's time after the last cancel
    held: NotRequired[float]
    client_open: NotRequired[int]
    kv_cache_usage: NotRequired[float | None]


class ServerPrometheusJSON(TypedDict):
    """`server.prometheus`: deltas between the first and last scrape, gauge statistics, what was absent."""

    url: str
    scrapes: int
    failed_scrapes: int
    interval_s: float
    interpolation: str
    series_file: str
    last_failure: NotRequired[str]
    available: bool
    block_size: NotRequired[int]
    cache_config: NotRequired[dict[str, str]]  # vllm:cache_config_info's labels, as published
    span_s: NotRequired[float]
    histograms: NotRequired[dict[str, HistogramJSON]]
    counters: NotRequired[dict[str, CounterJSON]]
    gauges: NotRequired[dict[str, GaugeJSON]]
    prefix_cache_hit_rate: NotRequired[float | None]
    absent: NotRequired[list[str]]
    cancel_release: NotRequired[ReleaseJSON]
