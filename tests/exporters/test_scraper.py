"""ServerScraper against a tiny loopback server: before / during / after, failures kept, absent named."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from loadgen.run.scrape import SERIES_FILE, ServerScraper, metrics_url_for

PARTIAL = """\
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{{le="0.1"}} {n}
vllm:time_to_first_token_seconds_bucket{{le="+Inf"}} {n}
vllm:time_to_first_token_seconds_count {n}
vllm:time_to_first_token_seconds_sum {s}
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running {n}
"""


class _Handler(BaseHTTPRequestHandler):
    scrapes = 0
    during = threading.Event()  # set at the second scrape: the first background one, after the 'before'

    def do_GET(self) -> None:
        if self.path != "/metrics":
            self.send_error(404)
            return
        type(self).scrapes += 1
        n = type(self).scrapes
        if n >= 2:
            type(self).during.set()
        body = PARTIAL.format(n=n, s=n * 0.05).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    _Handler.scrapes = 0
    _Handler.during.clear()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_metrics_url_sits_next_to_v1() -> None:
    assert metrics_url_for("http://h:8000/v1") == "http://h:8000/metrics"
    assert metrics_url_for("http://h:8000/") == "http://h:8000/metrics"


def test_before_during_after_and_absent(server: str, tmp_path: Path) -> None:
    scraper = ServerScraper(f"{server}/metrics", interval_s=0.05)
    scraper.start()
    # Wait for a background scrape (the server saw it), not a fixed time: under load a fixed 0.3 s may hold
    # none. Their number does not matter: every figure below is checked against n, whatever it is.
    assert _Handler.during.wait(60)
    scraper.stop()
    section = scraper.section()
    n = len(scraper.snapshots)
    assert n >= 3 and section["scrapes"] == n and section["failed_scrapes"] == 0
    ttft = section["histograms"]["ttft_s"]
    assert ttft["count"] == n - 1  # the server's count went 1 → n
    assert ttft["sum"] == pytest.approx((n - 1) * 0.05)
    assert section["gauges"]["running"]["samples"] == n and section["gauges"]["running"]["max"] == n
    assert "vllm:kv_cache_usage_perc" in section["absent"] and "kv_cache_usage" not in section["gauges"]
    assert "vllm:prompt_tokens_total" in section["absent"] and section["prefix_cache_hit_rate"] is None
    assert "itl_s" not in section["histograms"]
    lines = scraper.save(tmp_path).read_text().splitlines()
    assert len(lines) == n and (tmp_path / SERIES_FILE).exists()


def test_a_server_without_metrics_fails_the_before_scrape(server: str) -> None:
    scraper = ServerScraper(f"{server}/nothing", interval_s=1.0)
    with pytest.raises(httpx.HTTPStatusError):
        scraper.start()
    scraper.abort()
    assert scraper.section()["available"] is False


def test_interval_must_be_positive() -> None:
    with pytest.raises(ValueError):
        ServerScraper("http://127.0.0.1:9/metrics", interval_s=0)
