"""The live `/metrics` endpoint of a run: prometheus_client's WSGI server on one registry, stoppable.

Loopback by default: a load generator's metrics say a lot about the target, and binding every interface
is a choice the user makes with `--metrics-host`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, start_http_server


@dataclass(slots=True)
class MetricsServer:
    httpd: WSGIServer
    thread: threading.Thread
    host: str

    @property
    def port(self) -> int:
        return int(self.httpd.server_port)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"

    def stop(self) -> None:
        """Stop serving and release the port (idempotent)."""
        if self.thread.is_alive():
            self.httpd.shutdown()
            self.thread.join()
        self.httpd.server_close()


def serve_metrics(registry: CollectorRegistry, *, port: int, host: str = "127.0.0.1") -> MetricsServer:
    """Serve `registry` on http://host:port/metrics in a daemon thread (port 0 picks a free one)."""
    if not 0 <= port <= 65535:
        raise ValueError(f"metrics port must be in 0..65535, got {port}")
    try:
        httpd, thread = start_http_server(port, addr=host, registry=registry)
    except OSError as exc:
        raise RuntimeError(f"cannot serve metrics on {host}:{port}: {exc.strerror or exc}") from None
    return MetricsServer(httpd, thread, host)
