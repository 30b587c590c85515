"""Scraping the server's own Prometheus metrics around a run (`--server-metrics`).

One scrape before the first request, one every `interval_s` during the run (in a thread, so a slow
`/metrics` never delays a dispatch), one after the last request. The text is parsed with
prometheus_client's parser; families are summed over their label sets (several models or engines
behind one endpoint add up; `*_perc` and `*_rate` gauges are averaged instead). What the run did is
the difference of the last and the first scrape (metrics.server.histograms); gauges are kept as a time
series in `server_metrics.jsonl`. Names are vLLM's, which the reference server copies; older vLLM
spellings are accepted as fallbacks. A metric the server does not expose is listed under `absent`.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from collections.abc import Container
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import httpx

from loadgen.http import needs_tls, public_url, scrub_userinfo
from loadgen.run.engine_steps import EngineSteps, steps_url_for
from loadgen.run.startup import first_line
from metrics.results import SERVER_SERIES_FILE as SERIES_FILE
from metrics.server import (
    INTERPOLATION,
    CounterJSON,
    CumulativeHistogram,
    GaugeJSON,
    GaugeKey,
    HistogramJSON,
    SeriesPoint,
    ServerPrometheusJSON,
    add_histograms,
    counter_delta,
    histogram_delta,
    histogram_figures,
    ratio,
)

# summary key → metric family names, preferred first (families as the parser names them: no _total).
HISTOGRAMS: dict[str, tuple[str, ...]] = {
    "ttft_s": ("vllm:time_to_first_token_seconds",),
    "itl_s": ("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"),
    "tpot_s": ("vllm:request_time_per_output_token_seconds", "vllm:time_per_output_token_seconds"),
    "e2e_s": ("vllm:e2e_request_latency_seconds",),
    "queue_s": ("vllm:request_queue_time_seconds",),
    "prefill_s": ("vllm:request_prefill_time_seconds",),
    "decode_s": ("vllm:request_decode_time_seconds",),
    "inference_s": ("vllm:request_inference_time_seconds",),
    "prompt_tokens": ("vllm:request_prompt_tokens",),
    "output_tokens": ("vllm:request_generation_tokens",),
}
COUNTERS: dict[str, tuple[str, ...]] = {
    "prompt_tokens": ("vllm:prompt_tokens",),
    "generation_tokens": ("vllm:generation_tokens",),
    "requests_finished": ("vllm:request_success",),
    "prefix_cache_queries": ("vllm:prefix_cache_queries", "vllm:gpu_prefix_cache_queries"),
    "prefix_cache_hits": ("vllm:prefix_cache_hits", "vllm:gpu_prefix_cache_hits"),
    "preemptions": ("vllm:num_preemptions",),
}
GAUGES: dict[GaugeKey, tuple[str, ...]] = {
    "running": ("vllm:num_requests_running",),
    "waiting": ("vllm:num_requests_waiting",),
    "kv_cache_usage": ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
    "prefix_cache_hit_rate": ("vllm:gpu_prefix_cache_hit_rate",),
}


@dataclass(slots=True)
class Snapshot:
    """One scrape, every family summed over its label sets."""

    unix_s: float
    histograms: dict[str, CumulativeHistogram] = field(default_factory=dict)
    counters: dict[str, float] = field(default_factory=dict)
    gauges: dict[str, float] = field(default_factory=dict)
    cache_config: dict[str, str] = field(default_factory=dict)  # vllm:cache_config_info's labels

    @property
    def block_size(self) -> int | None:
        """The server's tokens per KV block (vllm:cache_config_info's `block_size`); None when not given."""
        value = self.cache_config.get("block_size", "")
        return int(value) if value.isdigit() and int(value) > 0 else None


CACHE_CONFIG_INFO = "vllm:cache_config_info"


def parse_exposition(text: str, *, unix_s: float = 0.0) -> Snapshot:
    """Prometheus text → Snapshot. Raises ValueError on text the parser cannot read."""
    from prometheus_client.parser import text_string_to_metric_families

    snap = Snapshot(unix_s=unix_s)
    gauge_parts: dict[str, list[float]] = defaultdict(list)
    for family in text_string_to_metric_families(text):
        if family.type == "histogram":
            per_series: dict[tuple[tuple[str, str], ...], dict[float, float]] = defaultdict(dict)
            sums: dict[tuple[tuple[str, str], ...], float] = defaultdict(float)
            for s in family.samples:
                key = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
                if s.name.endswith("_bucket"):
                    per_series[key][float(s.labels["le"])] = float(s.value)
                elif s.name.endswith("_sum"):
                    sums[key] += float(s.value)
            for key, buckets in per_series.items():
                bounds = tuple(sorted(buckets))
                hist = CumulativeHistogram(bounds, tuple(buckets[b] for b in bounds), sums[key])
                old = snap.histograms.get(family.name)
                snap.histograms[family.name] = hist if old is None else add_histograms(old, hist)
        elif family.type == "counter":
            values = [float(s.value) for s in family.samples if s.name.endswith("_total")]
            if values:
                snap.counters[family.name] = sum(values)
        elif family.type in ("gauge", "unknown", "untyped"):
            gauge_parts[family.name] += [float(s.value) for s in family.samples if s.name == family.name]
            if family.name == CACHE_CONFIG_INFO and family.samples:
                snap.cache_config = dict(family.samples[0].labels)
    for name, parts in gauge_parts.items():
        if parts:
            averaged = name.endswith(("_perc", "_rate"))
            snap.gauges[name] = sum(parts) / len(parts) if averaged else sum(parts)
    return snap


# server_metrics.jsonl's counters: summary key → the series point's key.
SERIES_COUNTERS: tuple[tuple[str, Literal["prefix_cache_queries_total", "prefix_cache_hits_total",
                                          "generation_tokens_total"]], ...] = (
    ("prefix_cache_queries", "prefix_cache_queries_total"), ("prefix_cache_hits", "prefix_cache_hits_total"),
    ("generation_tokens", "generation_tokens_total"))


def series_point(snap: Snapshot, *, started_unix_s: float, t_s: float) -> SeriesPoint:
    """One line of server_metrics.jsonl: the scrape's gauges and a few counters, by goodput's key."""
    point: SeriesPoint = {"t_s": t_s, "unix_s": snap.unix_s,
                          "started_unix_s": started_unix_s}  # the gauges are of a moment in between
    for key, names in GAUGES.items():
        name = _first(names, snap.gauges)
        if name is not None:
            point[key] = snap.gauges[name]
    for counter, series_key in SERIES_COUNTERS:
        name = _first(COUNTERS[counter], snap.counters)
        if name is not None:
            point[series_key] = snap.counters[name]
    return point


def metrics_url_for(base_url: str) -> str:
    """The target's /metrics: vLLM and the reference server serve it next to /v1, not under it."""
    root = base_url.rstrip("/").removesuffix("/v1")
    return f"{root}/metrics"


SCRAPE_TIMEOUT_S = 5.0  # one scrape of the server's /metrics, the 'before' one included


def scrape_failure(exc: Exception) -> str:
    """Why a scrape failed, in one plain line: the HTTP status (a server without /metrics answers 404), or
    the exception's first line (httpx adds a second one with a documentation link)."""
    if isinstance(exc, httpx.HTTPStatusError):
        resp = exc.response
        return f"HTTP {resp.status_code}" + (": the server has no /metrics" if resp.status_code == 404 else "")
    first = first_line(exc) if str(exc).strip() else ""
    if isinstance(exc, ValueError):
        return f"not Prometheus text ({first})" if first else "not Prometheus text"
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _first(names: tuple[str, ...], table: Container[str]) -> str | None:
    return next((n for n in names if n in table), None)


class ServerScraper:
    """Scrapes one `/metrics` URL before, during and after a run; see the module docstring."""

    def __init__(self, url: str, *, interval_s: float = 5.0, timeout_s: float = SCRAPE_TIMEOUT_S) -> None:
        if interval_s <= 0:
            raise ValueError(f"scrape interval must be > 0, got {interval_s}")
        self.url = url
        self.interval_s = interval_s
        self._client = httpx.Client(timeout=timeout_s, verify=needs_tls(url))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = time.perf_counter()
        self.snapshots: list[Snapshot] = []
        self.series: list[SeriesPoint] = []
        self.failures: list[str] = []
        self.steps = EngineSteps(steps_url_for(url))  # the reference server's engine steps, when it has them

    def scrape(self) -> Snapshot:
        """One scrape; raises httpx.HTTPError or ValueError on failure."""
        started = time.time()
        resp = self._client.get(self.url)
        resp.raise_for_status()
        snap = parse_exposition(resp.text, unix_s=time.time())
        self._keep(snap, started)
        self.steps.poll(self._client)
        return snap

    def _keep(self, snap: Snapshot, started_unix_s: float) -> None:
        self.snapshots.append(snap)
        self.series.append(series_point(snap, started_unix_s=started_unix_s,
                                        t_s=round(time.perf_counter() - self._t0, 6)))

    def start(self) -> None:
        """The 'before' scrape (raises if the server does not answer), then scrape in the background."""
        self.scrape()
        self._thread = threading.Thread(target=self._loop, name="goodput-scraper", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.scrape()
            except (httpx.HTTPError, ValueError) as exc:
                self.failures.append(scrape_failure(exc))

    def stop(self) -> None:
        """Stop the background scrapes and take the 'after' scrape."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        try:
            self.scrape()
        except (httpx.HTTPError, ValueError) as exc:
            self.failures.append(scrape_failure(exc))
        self._client.close()

    def abort(self) -> None:
        """Stop the background scrapes without an 'after' scrape (the run failed)."""
        self._stop.set()
        if self._thread is not None and self._thread.is_alive():
            self._thread.join()
        self._client.close()

    def save(self, out_dir: Path) -> Path:
        """Write the gauge series atomically: a failed write (disk full) raises OSError naming the file
        and leaves no cut line behind."""
        from metrics.results import write_atomic

        path = out_dir / SERIES_FILE
        write_atomic(path, "".join(json.dumps(point) + "\n" for point in self.series).encode())
        self.steps.save(out_dir)
        return path

    def section(self) -> ServerPrometheusJSON:
        """The `server.prometheus` entry of summary.json."""
        return prometheus_section(self.snapshots, self.series, url=public_url(self.url), interval_s=self.interval_s,
                                  failures=[scrub_userinfo(f) for f in self.failures])


def _gauge_stats(metric: str, values: list[float]) -> GaugeJSON:
    return {"metric": metric, "samples": len(values), "mean": sum(values) / len(values), "min": min(values),
            "max": max(values), "last": values[-1]}


def prometheus_section(snapshots: list[Snapshot], series: list[SeriesPoint], *, url: str, interval_s: float,
                       failures: list[str]) -> ServerPrometheusJSON:
    """Deltas between the first and last snapshot, gauge statistics, and what was absent."""
    available = len(snapshots) >= 2
    out: ServerPrometheusJSON = {"url": url, "scrapes": len(snapshots), "failed_scrapes": len(failures),
                                 "interval_s": interval_s, "interpolation": INTERPOLATION, "series_file": SERIES_FILE,
                                 "last_failure": failures[-1], "available": available} if failures else {
        "url": url, "scrapes": len(snapshots), "failed_scrapes": len(failures), "interval_s": interval_s,
        "interpolation": INTERPOLATION, "series_file": SERIES_FILE, "available": available}
    if not available:
        return out
    first, last = snapshots[0], snapshots[-1]
    if last.block_size is not None:
        out["block_size"] = last.block_size
    if last.cache_config:
        out["cache_config"] = dict(last.cache_config)  # vllm:cache_config_info's labels, as published
    out["span_s"] = last.unix_s - first.unix_s
    absent: list[str] = []
    hists: dict[str, HistogramJSON] = {}
    for key, names in HISTOGRAMS.items():
        name = _first(names, last.histograms)
        if name is None:
            absent.append(names[0])
            continue
        delta, reset = histogram_delta(first.histograms.get(name), last.histograms[name])
        hists[key] = {"metric": name, **histogram_figures(delta, reset=reset)}
    counters: dict[str, CounterJSON] = {}
    for key, names in COUNTERS.items():
        name = _first(names, last.counters)
        if name is None:
            absent.append(names[0] + "_total")
            continue
        value, reset = counter_delta(first.counters.get(name), last.counters[name])
        counters[key] = {"metric": name + "_total", "delta": value}
        if reset:
            counters[key]["reset"] = True
    gauges: dict[str, GaugeJSON] = {}
    for key, names in GAUGES.items():
        values = [float(value) for p in series if (value := p.get(key)) is not None]
        name = _first(names, last.gauges)
        if not values or name is None:
            if key != "prefix_cache_hit_rate":  # newer vLLM has counters instead of this gauge
                absent.append(names[0])
            continue
        gauges[key] = _gauge_stats(name, values)
    hits, queries = counters.get("prefix_cache_hits"), counters.get("prefix_cache_queries")
    out["histograms"], out["counters"], out["gauges"] = hists, counters, gauges
    out["prefix_cache_hit_rate"] = ratio(hits["delta"] if hits else None, queries["delta"] if queries else None)
    out["absent"] = absent
    return out
