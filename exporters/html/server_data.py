"""The data of the server-side charts: the server's own clock where it stamps its chunks, and the gauges
scraped from its /metrics during the run (server_metrics.jsonl, written by loadgen.run.scrape)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal, TypedDict

import numpy as np
import numpy.typing as npt

from metrics.records import RequestFrame
from metrics.results import float_or_none
from metrics.summary import server_ttft_s

if TYPE_CHECKING:
    from metrics.results import Json

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

Series = tuple[list[float], list[float | None]]

# the numbers of a server_metrics.jsonl line the charts read (metrics.server's SeriesPoint, as written)
ScrapeKey = Literal["t_s", "unix_s", "running", "waiting", "kv_cache_usage", "prefix_cache_hit_rate",
                    "prefix_cache_queries_total", "prefix_cache_hits_total"]
SCRAPE_KEYS: tuple[ScrapeKey, ...] = ("t_s", "unix_s", "running", "waiting", "kv_cache_usage", "prefix_cache_hit_rate",
               "prefix_cache_queries_total", "prefix_cache_hits_total")


class ScrapeRow(TypedDict, total=False):
    """A line of server_metrics.jsonl as read back: the numbers it holds of SCRAPE_KEYS (a damaged or older
    line may lack any of them, or hold something else there: that key is then absent)."""

    t_s: float
    unix_s: float
    running: float
    waiting: float
    kv_cache_usage: float
    prefix_cache_hit_rate: float
    prefix_cache_queries_total: float
    prefix_cache_hits_total: float


# key, name on the chart, scale
GAUGES: tuple[tuple[ScrapeKey, str, float], ...] = (
    ("running", "running", 1.0), ("waiting", "waiting", 1.0), ("kv_cache_usage", "KV-cache usage", 100.0),
    ("prefix_cache_hit_rate", "prefix-cache hit rate (server's gauge)", 100.0))


def client_minus_server_ttft(frame: RequestFrame, client_ttft_s: FloatArray, include: BoolArray) -> FloatArray:
    """Client TTFT − server TTFT per request (network and client overhead), NaN where the server did not
    stamp the request or it is not in `include` (as summary.json's server.ttft_client_minus_server_s)."""
    diff = client_ttft_s - server_ttft_s(frame)
    return np.where(include & frame.has_server, diff, np.nan)


def scrape_row(line: Mapping[str, Json]) -> ScrapeRow:
    """The numbers of a parsed line, each once checked."""
    row: ScrapeRow = {}
    for key in SCRAPE_KEYS:
        value = float_or_none(line.get(key))
        if value is not None:
            row[key] = value
    return row


def scrape_times(rows: Sequence[ScrapeRow], start_unix_s: float | None) -> list[float | None]:
    """Each scrape's time on the run's axis: wall clock minus the run's anchor (the scraper's own clock
    when the run has no anchor)."""
    out: list[float | None] = []
    for row in rows:
        unix = row.get("unix_s")
        own = row.get("t_s")
        out.append(unix - start_unix_s if unix is not None and start_unix_s is not None else own)
    return out


def gauge_series(rows: Sequence[ScrapeRow], start_unix_s: float | None) -> dict[str, Series]:
    """Per gauge, (times, values) over the scrapes that have both: running and waiting requests, KV-cache
    usage in percent, and the prefix-cache hit rate in percent over each interval between two scrapes
    (Δhits / Δqueries; none for an interval with no query or a counter reset). A gauge no scrape has is
    left out — absent, not zero."""
    times = scrape_times(rows, start_unix_s)
    out: dict[str, Series] = {}
    for key, name, scale in GAUGES:
        xs: list[float] = []
        ys: list[float | None] = []
        for t, row in zip(times, rows, strict=True):
            v = row.get(key)
            if t is not None and v is not None:
                xs.append(t)
                ys.append(v * scale)
        if xs:
            out[name] = (xs, ys)
    hit_x: list[float] = []
    hit_y: list[float | None] = []
    previous: tuple[float, float] | None = None
    for t, row in zip(times, rows, strict=True):
        q, h = row.get("prefix_cache_queries_total"), row.get("prefix_cache_hits_total")
        if q is None or h is None or t is None:
            continue
        if previous is not None:
            dq, dh = q - previous[0], h - previous[1]
            hit_x.append(t)
            hit_y.append(100.0 * dh / dq if dq > 0 and dh >= 0 else None)
        previous = (q, h)
    if hit_x:
        out["prefix-cache hit rate"] = (hit_x, hit_y)
    return out
