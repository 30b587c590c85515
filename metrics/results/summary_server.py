"""The typed view of summary.json's `server` section: the server's own figures per request (exact
latency blocks, metrics.summary.server_side) and its scraped Prometheus `/metrics` (`server.prometheus`,
loadgen.run.scrape): histogram quantiles as the range their buckets allow, gauges, the cache hit rate."""

from __future__ import annotations

from dataclasses import field
from typing import Any

from metrics.results.frozen_view import frozen
from metrics.results.summary_parse import JsonObject, int_or_none, number_or_none
from metrics.results.summary_stats import Stats

# A histogram quantile's bucket (or the part of it the sum and count allow): (lower, upper); upper None: +Inf.
Bounds = tuple[float, float | None]


def _bounds(value: Any) -> Bounds | None:
    if not isinstance(value, list | tuple) or len(value) != 2:
        return None
    lower, upper = number_or_none(value[0]), number_or_none(value[1])
    return None if lower is None or (upper is None and value[1] is not None) else (lower, upper)


@frozen
class Quantile:
    value: float | None  # interpolated inside its bucket
    range: Bounds | None  # what the sum and count allow (a summary before ranges has none)
    bucket: Bounds | None


@frozen
class Histogram:
    """One /metrics histogram over the run (last − first scrape)."""

    metric: str | None  # the Prometheus name
    count: float | None
    mean: float | None
    p50: Quantile
    p99: Quantile

    @classmethod
    def from_json(cls, h: Any) -> Histogram | None:
        if not isinstance(h, dict):
            return None
        metric = h.get("metric")
        return cls(None if metric is None else str(metric), number_or_none(h.get("count")),
                   number_or_none(h.get("mean")),
                   *(Quantile(number_or_none(h.get(q)), _bounds(h.get(f"{q}_range")), _bounds(h.get(f"{q}_bucket")))
                     for q in ("p50", "p99")))


@frozen
class Gauge:
    mean: float
    max: float

    @classmethod
    def from_json(cls, g: Any) -> Gauge | None:
        """None for a gauge the summary leaves empty (no samples)."""
        if not isinstance(g, dict) or not g:
            return None
        mean, top = number_or_none(g.get("mean")), number_or_none(g.get("max"))
        return None if mean is None or top is None else cls(mean, top)


@frozen
class ServerPrometheus:
    available: bool
    url: str
    scrapes: int | None
    interval_s: float | None
    last_failure: str  # "no data" when the document says nothing
    histograms: dict[str, Histogram] = field(default_factory=dict)
    gauges: dict[str, Gauge] = field(default_factory=dict)
    prefix_cache_hit_rate: float | None = None
    absent: tuple[str, ...] = ()  # vLLM names the server does not expose
    interpolation: str = ""  # how the histogram quantiles were read

    @classmethod
    def from_json(cls, prom: Any) -> ServerPrometheus | None:
        """None when there is no (or an empty) `server.prometheus`: no scrape was made."""
        if not isinstance(prom, dict) or not prom:
            return None
        hists, gauges, absent = prom.get("histograms"), prom.get("gauges"), prom.get("absent")
        return cls(
            bool(prom.get("available")), str(prom.get("url")), int_or_none(prom.get("scrapes")),
            number_or_none(prom.get("interval_s")), str(prom.get("last_failure", "no data")),
            {str(k): h for k, v in (hists.items() if isinstance(hists, dict) else ())
             if (h := Histogram.from_json(v)) is not None},
            {str(k): g for k, v in (gauges.items() if isinstance(gauges, dict) else ())
             if (g := Gauge.from_json(v)) is not None},
            number_or_none(prom.get("prefix_cache_hit_rate")),
            tuple(map(str, absent)) if isinstance(absent, list) else (), str(prom.get("interpolation", "")),
        )


@frozen
class Server:
    per_request: dict[str, Stats]  # ttft_s, itl_s, e2e_s, queue_s, ...: from the server's stamps, exact
    prometheus: ServerPrometheus | None
    requests_with_timing: int | None = None  # None when the document does not say

    @classmethod
    def from_json(cls, server: Any) -> Server:
        """The view of `server` (nothing in it when the summary has none)."""
        server = server if isinstance(server, dict) else {}
        blocks = {str(k): s for k, v in server.items() if k != "prometheus" and (s := Stats.from_json(v)) is not None}
        return cls(blocks, ServerPrometheus.from_json(server.get("prometheus")),
                   int_or_none(server.get("requests_with_timing")))

    def to_json(self) -> JsonObject:
        """The section as metrics.summary.server_side writes it: the per-request blocks. `prometheus` is not in
        it: the run adds it to the written summary from its own scrape (loadgen.run.prometheus)."""
        out: JsonObject = {"requests_with_timing": self.requests_with_timing}
        out.update((name, block.to_json()) for name, block in self.per_request.items())
        return out
