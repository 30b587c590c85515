"""`goodput capacity --gpu-hour-cost`: the cost at the measured SLO capacity, in capacity.json, the console
and the page; its usage errors send nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from exporters.html.capacity_page import capacity_page
from exporters.html.page import Table
from loadgen.cli import run_cli
from loadgen.sweep.capacity_cost import cost_console_lines, mean_output_tokens_at, with_cost
from metrics.model.cost import CostOptions
from metrics.results import CapacityView

SIM = ["--server-arg=--engine=sim", "--server-arg=--sim-gpu=L4", "--prompt-tokens", "32", "--output-tokens", "4",
       "--server-metrics", "none", "--lag-threshold", "200ms", "--slo", "ttft=1s"]


ROWS = [{"rate": 4.0, "requests_per_s": 4.0, "output_tokens_per_s": 400.0},
        {"rate": 4.0, "requests_per_s": 2.0, "output_tokens_per_s": 320.0},
        {"rate": 8.0, "requests_per_s": 7.0, "output_tokens_per_s": 9999.0}]


def _doc(rate: float | None, **more: object) -> CapacityView:
    """capacity.json with these runs and this capacity (`more`: other entries of `capacity`, or `complete`)."""
    complete = more.pop("complete", None)
    return CapacityView.from_json({"capacity": {"rate": rate, **more}, "points": ROWS,
                                   **({"complete": complete} if complete is not None else {})})


def test_mean_output_tokens_over_the_runs_at_the_capacity() -> None:
    # (400 + 320) tokens/s over (4 + 2) req/s: 120 tokens a request; the 8 req/s run is not at the capacity.
    assert mean_output_tokens_at(_doc(4.0).points, 4.0) == pytest.approx(120.0)
    assert mean_output_tokens_at([], 4.0) is None


def test_cost_at_the_capacity() -> None:
    doc = with_cost(_doc(4.0, upper=5.0), CostOptions(gpu_hour_cost=3.0, gpus_per_replica=2, target_rate=10.0))
    cost = doc.cost
    assert cost is not None
    # $6/hour at 4 req/s = 14,400 req/h: $416.67 per million requests; / 120 tokens: $3.47 per million tokens.
    assert cost["per_million_requests"] == pytest.approx(416.666667)
    assert cost["per_million_output_tokens"] == pytest.approx(3.4722222)
    # 10 / 4 → 3 replicas, 6 GPUs, $18/hour, 36,000 req/h: $500 per million requests.
    assert cost["target"] == pytest.approx({"rate": 10.0, "replicas": 3, "gpus": 6, "cost_per_hour": 18.0,
                                            "per_million_requests": 500.0})
    lines = cost_console_lines(doc)
    assert lines[0] == "cost: $3/GPU-hour x 2 GPU(s) per replica = $6.00/hour per replica"
    assert lines[1] == "  at the SLO capacity 4 req/s: $416.67 per million requests, $3.47 per million output tokens"
    assert lines[2] == "  target 10 req/s: 3 replica(s) (6 GPUs), $18.00/hour, $500.00 per million requests"
    assert with_cost(_doc(4.0), None) == _doc(4.0)


def test_no_capacity_no_cost() -> None:
    doc = with_cost(_doc(None), CostOptions(gpu_hour_cost=3.0, gpus_per_replica=1, target_rate=10.0))
    assert doc.cost is not None
    assert doc.cost["per_million_requests"] is None and doc.cost["target"]["replicas"] is None
    assert "unknown (no capacity: no rate was shown to meet the SLO)" in "\n".join(cost_console_lines(doc))


def test_capacity_page_shows_the_cost() -> None:
    doc = with_cost(_doc(4.0, status="bracketed", complete=True), CostOptions(gpu_hour_cost=3.0, gpus_per_replica=2))
    page = capacity_page(doc, "cap", "capacity 4 req/s")
    tables = [b for s in page.sections for b in s.items if isinstance(b, Table) and b.caption.startswith("Cost")]
    assert tables, [s.title for s in page.sections]
    assert any("$416.67" in str(cell) for row in tables[0].rows for cell in row)


@pytest.mark.parametrize(("args", "needle"), [
    (["--gpu-hour-cost", "0"], "--gpu-hour-cost must be a finite number > 0, got 0"),
    (["--gpu-hour-cost", "inf"], "--gpu-hour-cost must be a finite number > 0, got inf"),
    (["--gpu-hour-cost", "2", "--gpus-per-replica", "0"], "--gpus-per-replica must be >= 1, got 0"),
    (["--gpu-hour-cost", "2", "--target-rate", "0"], "--target-rate must be a finite number > 0, got 0"),
    (["--gpus-per-replica", "2"], "--gpus-per-replica needs --gpu-hour-cost USD"),
])
def test_cost_usage_errors(args: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = run_cli(["capacity", "--url", "http://127.0.0.1:9", "--slo", "ttft=1s", "--output",
                    str(tmp_path / "cap"), *args])
    assert code == 2
    assert needle in capsys.readouterr().err
    assert not (tmp_path / "cap").exists()


def test_capacity_with_cost(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cap"
    code = run_cli(["capacity", "--min-rate", "10", "--max-rate", "20", "--point-duration", "1.5s",
                    "--max-points", "2", "--output", str(out), *SIM, "--gpu-hour-cost", "2",
                    "--target-rate", "50", "--no-html"])
    printed = capsys.readouterr().out
    assert code == 0
    doc = json.loads((out / "capacity.json").read_text())
    rate, cost = doc["capacity"]["rate"], doc["cost"]
    assert cost["gpus_per_replica"] == 1 and "measured" in cost["basis"]
    if rate is None:
        assert cost["per_million_requests"] is None and "unknown" in printed
        return
    # Every request asks for 4 output tokens; the sim engine gives them all.
    assert cost["mean_output_tokens"] == pytest.approx(4.0)
    assert cost["per_million_requests"] == pytest.approx(2.0 * 1e6 / (rate * 3600))
    assert cost["per_million_output_tokens"] == pytest.approx(2.0 * 1e6 / (rate * 3600) / 4)
    assert cost["target"]["replicas"] * rate >= 50 > (cost["target"]["replicas"] - 1) * rate
    at_most = "at most " if doc["capacity"]["upper"] is None else ""  # a capacity known only from below
    assert f"at the SLO capacity {rate:.3g} req/s: {at_most}${cost['per_million_requests']:,.2f} per million" in printed


def test_a_capacity_known_only_from_below_gives_costs_at_most() -> None:
    # Nothing above 4 req/s failed: the capacity is at least 4, so the costs and replicas are at most these.
    doc = with_cost(_doc(4.0, upper=None), CostOptions(gpu_hour_cost=3.0, gpus_per_replica=2, target_rate=10.0))
    lines = cost_console_lines(doc)
    assert lines[1] == ("  at the SLO capacity 4 req/s: at most $416.67 per million requests, "
                        "at most $3.47 per million output tokens")
    assert lines[2].startswith("  target 10 req/s: at most 3 replica(s)")
