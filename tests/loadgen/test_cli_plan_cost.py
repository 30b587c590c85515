"""`goodput plan --gpu-hour-cost`: the cost at the roofline's requests/s bound, labelled as a floor."""

from __future__ import annotations

import json
import math

import pytest
import typer
from typer.testing import CliRunner

from loadgen.cli.plan import plan

runner = CliRunner()


def _run(*args: str) -> tuple[int, str, str]:
    app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)
    app.command("plan")(plan)
    app.command("noop")(lambda: None)
    result = runner.invoke(app, ["plan", *args])
    return result.exit_code, result.stdout, result.stderr


def test_plan_cost_from_the_bound() -> None:
    code, out, _ = _run("--tp", "2", "--gpu-hour-cost", "3", "--target-rate", "100", "--json")
    assert code == 0
    result = json.loads(out)
    rate, cost = result["throughput_bound"]["requests_per_s"], result["cost"]
    # Two GPUs (the TP size) at $3: $6 an hour; a million requests take 1e6 / rate seconds.
    assert cost["gpus_per_replica"] == 2 and cost["cost_per_hour_per_replica"] == pytest.approx(6.0)
    assert cost["per_million_requests"] == pytest.approx(6.0 * 1e6 / (rate * 3600))
    assert cost["per_million_output_tokens"] == pytest.approx(6.0 * 1e6 / (rate * 3600) / 256)
    assert cost["target"]["replicas"] == math.ceil(100 / rate)
    assert "floors" in cost["basis"]


def test_plan_cost_table_says_bound() -> None:
    code, out, _ = _run("--gpu-hour-cost", "2", "--gpus-per-replica", "8")
    assert code == 0
    assert "cost: $2/GPU-hour x 8 GPU(s) per replica = $16.00/hour per replica" in out
    assert "at the throughput bound" in out and "at least $" in out


def test_plan_without_cost_has_no_cost() -> None:
    code, out, _ = _run("--json")
    assert code == 0 and "cost" not in json.loads(out)


@pytest.mark.parametrize(("args", "message"), [
    (("--gpu-hour-cost", "0"), "--gpu-hour-cost must be a finite number > 0, got 0"),
    (("--gpu-hour-cost", "nan"), "--gpu-hour-cost must be a finite number > 0, got nan"),
    (("--gpu-hour-cost", "2", "--target-rate", "-3"), "--target-rate must be a finite number > 0, got -3"),
    (("--gpu-hour-cost", "2", "--gpus-per-replica", "0"), "--gpus-per-replica must be >= 1, got 0"),
    (("--target-rate", "5",), "--target-rate needs --gpu-hour-cost USD"),
])
def test_plan_cost_validation(args: tuple[str, ...], message: str) -> None:
    code, out, err = _run(*args)
    assert code == 2 and out == ""
    assert err.strip() == f"goodput plan: error: {message}"
