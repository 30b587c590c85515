"""Prometheus: the run's live metrics and their `/metrics` endpoint (`live`, `server`), the Pushgateway
(`pushgateway`), the end-of-run metrics.prom textfile (`textfile`), and recording and alerting rules for the
exported series (`rules`).

The names below are imported on first use (metrics.lazy_face).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics import lazy_names

if TYPE_CHECKING:
    from exporters.prometheus.live import LiveConfig, RunMetrics
    from exporters.prometheus.pushgateway import PushLoop, PushTarget, credentials_out_of_url, delete, push
    from exporters.prometheus.rules import (
        DEFAULT_OBJECTIVE,
        alert_rule_tests,
        alert_rules,
        check_objective,
        recording_rules,
    )
    from exporters.prometheus.server import MetricsServer, serve_metrics
    from exporters.prometheus.textfile import write_textfile

__all__ = [
    "DEFAULT_OBJECTIVE", "LiveConfig", "MetricsServer", "PushLoop", "PushTarget", "RunMetrics",
    "alert_rule_tests", "alert_rules", "check_objective", "credentials_out_of_url", "delete", "push",
    "recording_rules", "serve_metrics", "write_textfile",
]

__getattr__ = lazy_names(__name__, {
    "LiveConfig": "live", "RunMetrics": "live",
    "PushLoop": "pushgateway", "PushTarget": "pushgateway", "credentials_out_of_url": "pushgateway",
    "delete": "pushgateway", "push": "pushgateway",
    "DEFAULT_OBJECTIVE": "rules", "alert_rule_tests": "rules", "alert_rules": "rules",
    "check_objective": "rules", "recording_rules": "rules",
    "MetricsServer": "server", "serve_metrics": "server",
    "write_textfile": "textfile",
})
