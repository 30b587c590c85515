"""Cost and energy formulas (metrics.model.cost), each against figures worked out by hand."""

from __future__ import annotations

import math

import pytest

from metrics.model.cost import (
    check_positive,
    cost_block,
    cost_per_million_output_tokens,
    cost_per_million_requests,
    deployment_cost_per_hour,
    energy_joules,
    joules_per_output_token,
    replicas_needed,
)


def test_deployment_cost_per_hour() -> None:
    # $2.50 per GPU-hour, 4 GPUs per replica, 3 replicas: 2.5 * 4 * 3 = $30 an hour.
    assert deployment_cost_per_hour(gpu_hour_cost=2.5, gpus_per_replica=4, replicas=3) == pytest.approx(30.0)


def test_cost_per_million_requests() -> None:
    # $3/hour serving 5 req/s: 18,000 requests an hour, so a million cost 3 / 18,000 * 1e6 = $166.67.
    assert cost_per_million_requests(5.0, gpu_hour_cost=1.5, gpus_per_replica=2) == pytest.approx(166.6666667)
    # Two replicas serving 10 req/s together cost the same per request.
    assert cost_per_million_requests(10.0, gpu_hour_cost=1.5, gpus_per_replica=2, replicas=2) \
        == pytest.approx(166.6666667)


def test_cost_per_million_output_tokens() -> None:
    # $166.67 per million requests of 250 output tokens: 250 million tokens, so $0.6667 per million tokens.
    assert cost_per_million_output_tokens(5.0, 250.0, gpu_hour_cost=1.5, gpus_per_replica=2) \
        == pytest.approx(0.6666667)


def test_replicas_needed() -> None:
    assert replicas_needed(20.0, 6.0) == 4  # 3.33 → 4
    assert replicas_needed(18.0, 6.0) == 3  # exactly three
    assert replicas_needed(0.3, 0.1) == 3  # 2.9999999999999996 in floats, still three
    assert replicas_needed(1.0, 6.0) == 1


@pytest.mark.parametrize("capacity", [0.0, -1.0, math.nan])
def test_replicas_refuse_no_capacity(capacity: float) -> None:
    with pytest.raises(ValueError, match="no number of replicas"):
        replicas_needed(10.0, capacity)


@pytest.mark.parametrize("value", [0.0, -2.0, math.inf, math.nan])
def test_check_positive_refuses(value: float) -> None:
    with pytest.raises(ValueError, match="--gpu-hour-cost must be a finite number > 0"):
        check_positive(value, "--gpu-hour-cost")


def test_energy_trapezoid() -> None:
    # 100 W at 0 s, 200 W at 2 s, 200 W at 4 s: 300 J + 400 J.
    assert energy_joules([0.0, 2.0, 4.0], [100.0, 200.0, 200.0]) == pytest.approx(700.0)


def test_energy_cut_to_window() -> None:
    # From 1 s (150 W, interpolated) to 3 s: (150 + 200) / 2 * 1 + 200 * 1 = 375 J.
    assert energy_joules([0.0, 2.0, 4.0], [100.0, 200.0, 200.0], start_s=1.0, end_s=3.0) == pytest.approx(375.0)
    # A window reaching past the samples is not extrapolated: 0..4 s only.
    assert energy_joules([0.0, 2.0, 4.0], [100.0, 200.0, 200.0], start_s=-5.0, end_s=9.0) == pytest.approx(700.0)
    assert energy_joules([0.0], [100.0]) is None
    assert energy_joules([0.0, 2.0], [100.0, 100.0], start_s=3.0, end_s=5.0) is None


def test_joules_per_output_token() -> None:
    assert joules_per_output_token(700.0, 350) == pytest.approx(2.0)
    assert joules_per_output_token(700.0, 0) is None
    assert joules_per_output_token(None, 10) is None


def test_cost_block_with_target() -> None:
    block = cost_block(6.0, 200.0, gpu_hour_cost=2.0, gpus_per_replica=2, target_rps=20.0)
    # $4/hour per replica; 6 req/s = 21,600 req/h → $185.19 per million requests, / 200 → $0.926 per M tokens.
    assert block["per_million_requests"] == pytest.approx(185.185185)
    assert block["per_million_output_tokens"] == pytest.approx(0.9259259)
    # 20 / 6 → 4 replicas, 8 GPUs, $16/hour; 72,000 req/h → $222.22 per million requests.
    assert block["target"] == pytest.approx({"rate": 20.0, "replicas": 4, "gpus": 8, "cost_per_hour": 16.0,
                                             "per_million_requests": 222.2222222})


def test_cost_block_without_capacity() -> None:
    block = cost_block(None, None, gpu_hour_cost=2.0, gpus_per_replica=1, target_rps=5.0)
    assert block["per_million_requests"] is None and "no capacity" in block["reason"]
    assert block["target"]["replicas"] is None


def test_a_cost_entry_read_back_is_checked() -> None:
    import json

    from metrics.model.cost import cost_block, read_cost

    for capacity, target in ((4.0, 10.0), (None, 10.0), (4.0, None)):
        block = cost_block(capacity, 100.0, gpu_hour_cost=2.0, gpus_per_replica=1, target_rps=target)
        back = read_cost(json.loads(json.dumps(block)))
        assert back is not None and json.dumps(back) == json.dumps(block)  # same keys, same order
    assert read_cost({"gpu_hour_cost": "2", "gpus_per_replica": 1, "cost_per_hour_per_replica": 2.0}) is None
    assert read_cost(["cost"]) is None
