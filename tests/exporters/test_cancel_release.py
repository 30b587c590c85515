"""The server's release of cancelled requests, read from its scraped gauges: a small fake /metrics server that
releases them at a known time (the report brackets that time between two scrapes) and one that never does
(the warning); and the rule itself on hand-made scrapes."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from loadgen.run.cancel_release import with_cancel_release
from loadgen.run.scrape import ServerScraper
from metrics.records.frame import frame_from_records
from metrics.records.record import RequestRecord
from metrics.results import RunDocument
from metrics.server.release import GaugePoint, release_report

MS = 1_000_000
CANCEL_S = 0.1  # both planned cancels close their connections 100 ms into the run
RELEASE_S = 0.3  # the fake server drops them from its gauges 300 ms into the run


class _Gauges(BaseHTTPRequestHandler):
    run_start_unix = 0.0
    release_s: float | None = RELEASE_S  # None: never released

    def do_GET(self) -> None:
        t = time.time() - type(self).run_start_unix
        release = type(self).release_s
        held = 0 if t < 0 or (release is not None and t >= release) else 2
        body = (f"# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running {held}\n"
                f"# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting 0\n"
                f"# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc {0.25 * held}\n").encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def metrics_url() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Gauges)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}/metrics"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def _records() -> list[RequestRecord]:
    """Two requests cancelled as planned at 100 ms, one that finished at 100 ms: nothing open after."""
    return [
        RequestRecord(id=0, intended_ns=0, sent_ns=0, status="cancelled", error_kind="planned_cancel",
                      closed_ns=round(CANCEL_S * 1e9)),
        RequestRecord(id=1, intended_ns=0, sent_ns=0, status="cancelled", error_kind="planned_cancel",
                      closed_ns=round(CANCEL_S * 1e9) - 5 * MS),
        RequestRecord(id=2, intended_ns=0, sent_ns=0, chunk_ns=[50 * MS], closed_ns=60 * MS),
    ]


def _scraped_run(url: str, tmp_path: Path, release_s: float | None) -> tuple[dict[str, Any], float]:
    _Gauges.release_s = release_s
    scraper = ServerScraper(url, interval_s=0.04)
    _Gauges.run_start_unix = start = time.time() + 0.2  # the 'before' scrape sees the idle server
    scraper.start()
    assert scraper.series[0]["running"] == 0, "the 'before' scrape came after the run's start: a slow machine"
    time.sleep(max(0.0, start + 0.6 - time.time()))
    scraper.stop()
    scraper.save(tmp_path)
    return scraper.section(), start


def test_the_release_is_bracketed_by_two_scrapes(metrics_url: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    section, start = _scraped_run(metrics_url, tmp_path, RELEASE_S)
    out = with_cancel_release(section, tmp_path, frame_from_records(_records()), RunDocument.from_json({"start_unix_s": start}))
    assert out is not None
    report = out["cancel_release"]
    assert report["planned_cancels"] == 2 and report["last_cancel_s"] == CANCEL_S
    assert report["released"] is True and report["held_before_run"] == 0 and report["client_open"] == 0
    # The scrape that showed the release came after it; the one before still showed both held.
    after = report["released_after_s"]
    assert after - report["resolution_s"] < RELEASE_S - CANCEL_S <= after < RELEASE_S - CANCEL_S + 0.1
    assert report["kv_cache_usage"] == 0.0
    assert "released the cancelled requests within" in capsys.readouterr().err
    from loadgen.run.prometheus import load_server_section

    assert load_server_section(tmp_path) == out  # what `goodput report` puts back into summary.json


def test_a_server_that_never_releases_them_is_warned_about(metrics_url: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    section, start = _scraped_run(metrics_url, tmp_path, None)
    out = with_cancel_release(section, tmp_path, frame_from_records(_records()), RunDocument.from_json({"start_unix_s": start}))
    assert out is not None
    report = out["cancel_release"]
    assert report["released"] is False and report["held"] == 2 and report["client_open"] == 0
    assert report["last_scrape_after_s"] > 0.4
    err = capsys.readouterr().err
    assert "warning: the server never released the cancelled requests within the run" in err
    assert "still held 2 requests (running + waiting, KV cache 50% used) while the client had 0 open" in err


def test_a_run_without_planned_cancels_gets_no_report(tmp_path: Path) -> None:
    section = {"available": True}
    records = [r for r in _records() if r.error_kind is None]
    assert with_cancel_release(section, tmp_path, frame_from_records(records), RunDocument.from_json({"start_unix_s": 1.0})) == section


def _hand(points: list[GaugePoint]) -> dict[str, Any]:
    # Request 0 open 0-1 s, cancelled at 1 s; request 1 open 0.5-3 s; request 2 never closed (open from 2 s).
    sent = np.array([0, 500, 2000], dtype=np.int64) * MS
    closed = np.array([1000, 3000, -1], dtype=np.int64) * MS
    return release_report(points, last_cancel_s=1.0, cancels=1, sent_ns=sent, closed_ns=closed)


def test_the_release_rule_by_hand() -> None:
    # Another client holds 1 before the run. At 1.5 s: held 3 > open 1 + 1. At 2.5 s: held 3 ≤ open 2 + 1.
    report = _hand([GaugePoint(-1.0, 1.0), GaugePoint(0.8, 3.0), GaugePoint(1.5, 2.0, 1.0), GaugePoint(2.5, 3.0)])
    assert report["released"] is True and report["released_after_s"] == 1.5 and report["resolution_s"] == 1.0
    assert report["client_open"] == 2 and report["held_before_run"] == 1.0
    never = _hand([GaugePoint(-1.0, 0.0), GaugePoint(1.5, 2.0), GaugePoint(3.5, 2.0)])  # open 1 at 3.5 s
    assert never["released"] is False and never["last_scrape_after_s"] == 2.5 and never["client_open"] == 1
    assert _hand([GaugePoint(-1.0, 0.0), GaugePoint(0.5, 1.0)])["reason"] == \
        "no scrape of the server's metrics after the last cancel"
    assert _hand([])["observed"] is False


def test_a_request_that_closed_while_the_scrape_was_in_flight_may_be_in_its_gauges() -> None:
    # Asked at 2.9 s, answered at 3.1 s: request 1 (closed at 3.0 s) may still be in the gauges, so held 3 is
    # open 2 + 1 held before: released. Judged at 3.1 s alone, open 1 + 1 < 3 would read as not released.
    in_flight = _hand([GaugePoint(-1.0, 1.0), GaugePoint(3.1, 3.0, asked_s=2.9)])
    assert in_flight["released"] is True and in_flight["client_open"] == 2
    at_answer = _hand([GaugePoint(-1.0, 1.0), GaugePoint(3.1, 3.0)])
    assert at_answer["released"] is False and at_answer["client_open"] == 1


def test_the_release_is_bounded_below_by_when_the_scrape_before_was_asked() -> None:
    # The scrape asked at 1.9 s and answered at 2.1 s still saw 3 held: its gauges may be of any moment in
    # between, so the release is known only to lie after 1.9 s. The next, asked 2.4 s and answered 2.5 s,
    # sees it: released within 1.5 s of the cancel at 1 s, a window 0.6 s wide (2.5 − 1.9), not 0.4.
    report = _hand([GaugePoint(-1.0, 1.0), GaugePoint(2.1, 4.0, asked_s=1.9), GaugePoint(2.5, 3.0, asked_s=2.4)])
    assert report["released"] is True and report["released_after_s"] == 1.5
    assert report["resolution_s"] == pytest.approx(0.6, abs=1e-12)
