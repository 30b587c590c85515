"""How long the server took to release the requests the client cancelled (docs/metrics.md, "Cancelled
requests"), from the scraped gauges (`server_metrics.jsonl`) and the records.

A server that frees a cancelled request at once drops it from `vllm:num_requests_running` (or `..._waiting`)
and frees its KV blocks; one that keeps decoding for a client that left holds a batch slot and its blocks
for every other request. From the last planned cancellation on (the moment the client closed that
connection), the first scrape whose requests held (running + waiting) are no more than the requests the
client had open while that scrape was in flight (asked at t₀, answered at t₁: the gauges are of a moment
in between, so every request open at some time in [t₀, t₁] may be counted), plus what the server held
before the run (another client's load), is the release:

    held(scrape) ≤ open(t₀, t₁) + held(first scrape)

`released_after_s` is that scrape's time minus the last cancel: an upper bound, `resolution_s` wide (the
release happened after the scrape before it was asked: its gauges may be of any moment until its answer). When no scrape after the last cancel shows it, the server
never released them within the run (a warning); when no scrape follows the last cancel at all, or the
server exposes no running gauge, nothing is known and the report says so. Times are seconds from the
run's anchor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from metrics.server.prometheus_json import ReleaseJSON

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class GaugePoint:
    t_s: float  # seconds from the run's anchor: when the scrape's answer was read
    running: float
    waiting: float | None = None
    kv_cache_usage: float | None = None
    asked_s: float | None = None  # when the scrape was asked (None: at t_s)

    @property
    def held(self) -> float:
        return self.running + (self.waiting or 0.0)


def open_during(start_ns: int, end_ns: int, sent_ns: IntArray, closed_ns: IntArray) -> int:
    """Requests the client had open at some time in [start_ns, end_ns]: written by its end, not closed
    before its start (closed_ns < 0: never closed)."""
    return int(((sent_ns <= end_ns) & ((closed_ns < 0) | (closed_ns > start_ns))).sum())


def _client_open(point: GaugePoint, sent_ns: IntArray, closed_ns: IntArray) -> int:
    asked = point.asked_s if point.asked_s is not None else point.t_s
    return open_during(round(asked * 1e9), round(point.t_s * 1e9), sent_ns, closed_ns)


def release_report(points: Sequence[GaugePoint], *, last_cancel_s: float, cancels: int, sent_ns: IntArray,
                   closed_ns: IntArray) -> ReleaseJSON:
    """The `cancel_release` entry of the server's Prometheus section (see the module docstring).
    `sent_ns` and `closed_ns` are every sent request's (closed −1 when it never closed)."""
    if not points:
        return {"planned_cancels": cancels, "last_cancel_s": last_cancel_s, "observed": False,
                "reason": "the server exposes no vllm:num_requests_running gauge"}
    baseline = points[0].held
    out: ReleaseJSON = {"planned_cancels": cancels, "last_cancel_s": last_cancel_s, "held_before_run": baseline,
                        "observed": True}
    previous_s = last_cancel_s
    after = [p for p in points if p.t_s >= last_cancel_s]
    if not after:
        return {"planned_cancels": cancels, "last_cancel_s": last_cancel_s, "held_before_run": baseline,
                "observed": False, "reason": "no scrape of the server's metrics after the last cancel"}
    for point in after:
        client_open = _client_open(point, sent_ns, closed_ns)
        if point.held <= client_open + baseline:
            return {**out, "released": True,
                    "released_after_s": point.t_s - last_cancel_s, "resolution_s": point.t_s - previous_s,
                    "held": point.held, "client_open": client_open, "kv_cache_usage": point.kv_cache_usage}
        previous_s = point.asked_s if point.asked_s is not None else point.t_s  # it held at some moment since
    last = after[-1]
    client_open = _client_open(last, sent_ns, closed_ns)
    return {**out, "released": False, "last_scrape_after_s": last.t_s - last_cancel_s,
            "held": last.held, "client_open": client_open, "kv_cache_usage": last.kv_cache_usage}


def release_warning(report: ReleaseJSON) -> str | None:
    """One line when the scrapes show the server still holding cancelled requests at the end, else None."""
    if not report.get("observed") or report.get("released"):
        return None
    held, client_open = report.get("held"), report.get("client_open")
    baseline = report.get("held_before_run") or 0
    kv = report.get("kv_cache_usage")
    kv_text = f", KV cache {kv:.0%} used" if isinstance(kv, float) else ""
    return (f"the server never released the cancelled requests within the run: "
            f"{report.get('last_scrape_after_s', 0):.2f} s after the last planned cancel it still held {held:g} "
            f"requests (running + waiting{kv_text}) while the client had {client_open} open"
            + (f" and it held {baseline:g} before the run" if baseline else ""))
