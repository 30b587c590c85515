"""Every PromQL expression in the shipped files, and the metric names goodput and vLLM export."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from exporters.prometheus.live import LiveConfig, RunMetrics
from metrics.slo import parse_slo
from refserver.api.server_metrics import ServerMetrics
from refserver.engine.types import EngineStats
from tests.exporters._records import random_records
from tests.metrics._reasoning import reasoning_records

REPO = Path(__file__).resolve().parents[2]
DASHBOARDS = REPO / "dashboards"
METRIC = re.compile(r"\b(goodput_[a-z0-9_]+|vllm:[a-z0-9_:]+)")
RECORDED = re.compile(r"\bgoodput:[a-z0-9_:]+")
# vLLM names the dashboards may fall back to that the reference server does not expose (older vLLM).
OLDER_VLLM = {"vllm:gpu_cache_usage_perc", "vllm:gpu_prefix_cache_hit_rate", "vllm:gpu_prefix_cache_queries_total",
              "vllm:gpu_prefix_cache_hits_total"}


@dataclass(frozen=True)
class Expr:
    where: str
    promql: str


def dashboard_files() -> list[Path]:
    return sorted((DASHBOARDS / "grafana").glob("*.json"))


def rule_files() -> list[Path]:
    return sorted((DASHBOARDS / "prometheus").glob("*.rules.yml"))


def _panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for panel in dashboard["panels"]:
        out.append(panel)
        out += panel.get("panels", [])
    return out


def dashboard_exprs() -> list[Expr]:
    exprs = []
    for path in dashboard_files():
        board = json.loads(path.read_text())
        for panel in _panels(board):
            for t in panel.get("targets", []):
                exprs.append(Expr(f"{path.name}: {panel['title']} {t['refId']}", t["expr"]))
    return exprs


def variable_queries() -> list[Expr]:
    out = []
    for path in dashboard_files():
        for var in json.loads(path.read_text())["templating"]["list"]:
            if var["type"] == "query":
                out.append(Expr(f"{path.name}: ${var['name']}", var["definition"]))
    return out


def rule_exprs() -> list[Expr]:
    import yaml

    out = []
    for path in rule_files():
        for group in yaml.safe_load(path.read_text())["groups"]:
            for rule in group["rules"]:
                name = rule.get("record") or rule.get("alert")
                out.append(Expr(f"{path.name}: {name}", rule["expr"]))
    return out


def recorded_names() -> set[str]:
    import yaml

    return {rule["record"] for path in rule_files() for g in yaml.safe_load(path.read_text())["groups"]
            for rule in g["rules"] if "record" in rule}


def _sample_names(text: str) -> set[str]:
    return {s.name for f in text_string_to_metric_families(text) for s in f.samples}


def exported_names() -> set[str]:
    """Sample names (with _bucket, _total, ...) of a goodput run's registry and the reference server's."""
    metrics = RunMetrics(LiveConfig(run_id="x", slo=parse_slo(["ttft=1s"]), offered_rps=1.0),
                         state=type("S", (), {"sent": 1, "in_flight": 0})())
    for r in [*random_records(20, error_every=4), *reasoning_records()]:  # and the reasoning families
        metrics.observe(r)
    stats = EngineStats(num_running=0, num_waiting=0, kv_usage=0.0, num_free_blocks=1, num_total_blocks=1,
                        prefix_queries_tokens=0, prefix_hit_tokens=0, num_preemptions=0)
    server = ServerMetrics(model_name="m", max_model_len=128, stats=lambda: stats)
    return _sample_names(generate_latest(metrics.registry).decode()) | _sample_names(server.exposition().decode())


def names_in(promql: str) -> set[str]:
    return set(METRIC.findall(promql))
