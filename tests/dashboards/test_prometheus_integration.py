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
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from loadgen.run.embedded import embedded_server
from metrics.records.record import RequestRecord, read_records
from tests.dashboards._names import DASHBOARDS, Expr, dashboard_exprs, rule_exprs, variable_queries
from tests.exporters._prom_procs import ATTEMPTS, free_port, need, prometheus
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
    # Some injected HTTP 500s, so the error panels have errors to show; a reasoning model that calls a
    # tool now and then, so the reasoning and tool-call panels do.
    tools = tmp / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {
        "name": "lookup", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}]))
    server_args = ["--fault-500", "0.15", "--fault-seed", "1", "--reasoning-tokens", "4", "--tool-call-rate", "0.3"]
    with embedded_server(server_args) as server, prometheus(_config(tmp, port, server), tmp) as prom_url:
        for attempt in range(ATTEMPTS):
            out = tmp / f"run-{attempt}"
            cmd = [sys.executable, "-c", "from loadgen.cli import main; main()", "run", "--url", server,
                   "--tools", str(tools), "--duration", f"{RUN_S}s", "--rate", "5", "--prompt-tokens", "uniform:16:600", "--output-tokens",
                   "16", "--tag", "scenario=integration", "--slo", "ttft=1ms", "--slo", "tpot=1s", "--quiet",
                   "--metrics-port", str(port), "--metrics-linger", "5s", "--server-metrics-interval", "1s",
                   "--max-failed", "100%", "--output", str(out)]  # the injected 500s may exceed the default limit
            started = time.time()
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)
            ended = time.time()
            # Prometheus must know the run's port before the run starts, so the run cannot bind port 0: a
            # port taken since free_port() chose it is replaced, and Prometheus reloads its targets.
            if "cannot serve metrics" not in proc.stderr or attempt == ATTEMPTS - 1:
                break
            port = free_port()
            _config(tmp, port, server)
            assert httpx.post(f"{prom_url}/-/reload", timeout=30).status_code == 200
        assert proc.returncode == 0, proc.stdout + proc.stderr
        yield Stack(prom_url, _last_scraped(prom_url, started, ended), out)


def _last_scraped(prom_url: str, start: float, end: float) -> float:
    """The last moment at which the run's endpoint was up: inside its linger, every final value scraped.
    Read from Prometheus itself, not guessed from the wall clock (the run may spend a while writing its
    files after the endpoint closed, and a failed scrape marks every series stale at once)."""
    resp = httpx.get(f"{prom_url}/api/v1/query_range", timeout=30,
                     params={"query": 'up{job="goodput"}', "start": start, "end": end, "step": "0.25"})
    (series,) = resp.json()["data"]["result"]
    return max(float(t) for t, v in series["values"] if v == "1")


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


def _by(stack: Stack, promql: str, label: str) -> dict[str, float]:
    return {r["metric"].get(label, ""): float(r["value"][1]) for r in _query(stack, promql)}


def _one(stack: Stack, promql: str) -> float:
    (row,) = _query(stack, promql)
    return float(row["value"][1])


def _ok_with_content(records: list[RequestRecord]) -> list[RequestRecord]:
    return [r for r in records if r.status == "ok" and r.chunk_ns and r.sent_ns is not None]


def test_counters_are_the_counts_of_the_runs_records(stack: Stack) -> None:
    """What Prometheus holds is what records.jsonl holds, counted here from the records themselves (no
    warm-up or cool-down: every record is measured)."""
    records = read_records(str(stack.out / "records.jsonl"))
    assert _one(stack, "sum(goodput_requests_total)") == len(records) > 0
    statuses = Counter(r.status for r in records)
    assert _by(stack, "sum by (status) (goodput_requests_total)", "status") == {k: float(v) for k, v in statuses.items()}
    errors = Counter(r.error_kind or "" for r in records if r.status != "ok")
    assert errors, "the server injects HTTP 500s"
    assert _by(stack, 'sum by (error_kind) (goodput_requests_total{status!="ok"})', "error_kind") == {
        k: float(v) for k, v in errors.items()}
    assert _one(stack, "sum(goodput_evaluated_requests_total)") == len(records)
    # Good: ok with content, TTFT = c_1 − d ≤ 1 ms and (N < 2 or TPOT = (c_K − c_1)/(N − 1) ≤ 1 s).
    good = sum(1 for r in _ok_with_content(records) if r.chunk_ns[0] - r.sent_ns <= 1_000_000  # type: ignore[operator]
               and ((r.output_tokens or 0) < 2 or (r.chunk_ns[-1] - r.chunk_ns[0]) / ((r.output_tokens or 2) - 1) <= 1e9))
    assert _one(stack, "sum(goodput_good_requests_total)") == good
    ok = [r for r in records if r.status == "ok"]
    assert _one(stack, "sum(goodput_output_tokens_total)") == sum(r.output_tokens or 0 for r in ok) > 0


def test_histogram_counts_and_sums_are_the_records_own(stack: Stack) -> None:
    """Each histogram's count and sum against the samples computed here from the timestamps: TTFT = c_1 − d,
    E2E = c_K − d, one ITL per gap c_j − c_{j−1} (docs/metrics.md)."""
    done = _ok_with_content(read_records(str(stack.out / "records.jsonl")))
    ttft = [(r.chunk_ns[0] - r.sent_ns) / 1e9 for r in done]  # type: ignore[operator]
    e2e = [(r.chunk_ns[-1] - r.sent_ns) / 1e9 for r in done]  # type: ignore[operator]
    itl = [(b - a) / 1e9 for r in done for a, b in zip(r.chunk_ns, r.chunk_ns[1:], strict=False)]
    for family, samples in (("goodput_ttft_seconds", ttft), ("goodput_e2e_seconds", e2e), ("goodput_itl_seconds", itl)):
        assert _one(stack, f"sum({family}_count)") == len(samples) > 0, family
        assert _one(stack, f"sum({family}_sum)") == pytest.approx(sum(samples), rel=1e-6), family
