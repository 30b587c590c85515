"""A real Prometheus scrapes a live `goodput run` and the reference server; every PromQL expression of
the shipped dashboards and rule files is then evaluated through its HTTP API and must return data, and
its histogram_quantile over the exported histogram must agree with summary.json.

The server injects some HTTP 500s (errors by kind need errors). The SLO of the run is impossible on purpose (TTFT ≤ 1 ms): every request is then not good, so the
burn-rate and goodput alert expressions, which only return series while their condition holds, have
something to return.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from loadgen.run.embedded import embedded_server
from metrics.records.record import read_records
from tests.dashboards._names import DASHBOARDS, Expr, dashboard_exprs, rule_exprs, variable_queries
from tests.exporters._prom_procs import free_port, need, prometheus
from tests.exporters._quantiles import check_quantile, latency_samples

pytestmark = pytest.mark.slow
RUN_S = 12
VARIABLES = {"$__rate_interval": "15s", "$job": ".*", "$scenario": ".*", "$prompt_bucket": ".*", "$cache": ".*",
             "$model_name": ".*"}


@dataclass
class Stack:
    prom_url: str
    at: float  # a moment inside the run's linger: every final value scraped, nothing stale yet
    out: Path


def _config(tmp: Path, goodput_port: int, server: str) -> Path:
    rules = []
    for src in sorted((DASHBOARDS / "prometheus").glob("*.rules.yml")):
        dst = tmp / src.name
        dst.write_text(src.read_text().replace("interval: 30s", "interval: 1s"))
        rules.append(str(dst))
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": rules,
        "scrape_configs": [
            {"job_name": "goodput", "static_configs": [{"targets": [f"127.0.0.1:{goodput_port}"]}]},
            {"job_name": "vllm", "static_configs": [{"targets": [server.removeprefix("http://")]}]},
        ],
    }
    path = tmp / "prometheus.yml"
    path.write_text(json.dumps(config))  # JSON is YAML
    return path


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    need("prometheus")
    tmp = tmp_path_factory.mktemp("prom")
    port = free_port()
    # Some injected HTTP 500s, so the error panels have errors to show.
    with embedded_server(["--fault-500", "0.15", "--fault-seed", "1"]) as server, prometheus(_config(tmp, port, server), tmp) as prom_url:
        out = tmp / "run"
        cmd = [sys.executable, "-c", "from loadgen.cli import main; main()", "run", "--url", server,
               "--duration", f"{RUN_S}s", "--rate", "5", "--prompt-tokens", "uniform:16:600", "--output-tokens", "16",
               "--tag", "scenario=integration", "--slo", "ttft=1ms", "--slo", "tpot=1s", "--quiet",
               "--metrics-port", str(port), "--metrics-linger", "5s", "--server-metrics-interval", "1s",
               "--max-failed", "100%", "--output", str(out)]  # the injected 500s may exceed the default limit
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stderr is not None
        lines: list[str] = []
        lingering = None  # when the final values began to be served: the 5 s linger runs from there
        for line in proc.stderr:
            lines.append(line)
            if lingering is None and "serving final values" in line:
                lingering = time.time()
        stdout = proc.stdout.read() if proc.stdout is not None else ""
        assert proc.wait(timeout=180) == 0, stdout + "".join(lines)
        assert lingering is not None, "".join(lines)
        # Inside the linger, two scrapes (1 s apart) after its start: every final value scraped, and not yet
        # the staleness that follows the end of the linger (the report is written after it, for as long as
        # that takes).
        yield Stack(prom_url, lingering + 3.0, out)


def _query(stack: Stack, promql: str) -> list[dict[str, Any]]:
    for key, value in VARIABLES.items():
        promql = promql.replace(key, value)
    resp = httpx.get(f"{stack.prom_url}/api/v1/query", params={"query": promql, "time": stack.at}, timeout=30)
    body = resp.json()
    assert resp.status_code == 200 and body["status"] == "success", (promql, body)
    return list(body["data"]["result"])


EXPRS = [*dashboard_exprs(), *rule_exprs()]


@pytest.mark.parametrize("expr", EXPRS, ids=[e.where for e in EXPRS])
def test_expression_returns_data(stack: Stack, expr: Expr) -> None:
    result = _query(stack, expr.promql)
    assert result, f"{expr.where}: no data for {expr.promql}"


@pytest.mark.parametrize("expr", variable_queries(), ids=[e.where for e in variable_queries()])
def test_variable_query_returns_values(stack: Stack, expr: Expr) -> None:
    inner = expr.promql.removeprefix("label_values(").removesuffix(")")
    selector, _, label = inner.rpartition(",")
    for key, value in VARIABLES.items():
        selector = selector.replace(key, value)
    resp = httpx.get(f"{stack.prom_url}/api/v1/label/{label.strip()}/values",
                     params={"match[]": selector.strip(), "start": stack.at - 60, "end": stack.at}, timeout=30)
    assert resp.json()["data"], expr


@pytest.mark.parametrize(("family", "key"), [("goodput_ttft_seconds", "ttft_s"), ("goodput_e2e_seconds", "e2e_s"),
                                             ("goodput_itl_seconds", "itl_s"), ("goodput_tpot_seconds", "tpot_s")])
def test_histogram_quantile_agrees_with_summary(stack: Stack, family: str, key: str) -> None:
    block = json.loads((stack.out / "summary.json").read_text())["latency"][key]
    count = _query(stack, f"sum({family}_count)")
    assert float(count[0]["value"][1]) == block["count"] > 0
    bounds = sorted({float(r["metric"]["le"]) for r in _query(stack, f"{family}_bucket") if r["metric"]["le"] != "+Inf"})
    samples = latency_samples(read_records(str(stack.out / "records.jsonl")), key)
    for p, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
        estimate = float(_query(stack, f"histogram_quantile({q}, sum by (le) ({family}_bucket))")[0]["value"][1])
        check_quantile(estimate, block[p], samples, q, bounds)


def test_alerts_went_pending_or_firing(stack: Stack) -> None:
    alerts = {r["metric"]["alertname"] for r in _query(stack, "ALERTS")}
    assert {"GoodputSLOBurnRateFast", "GoodputBelowOfferedRate"} <= alerts
