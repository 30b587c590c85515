"""Ground truth for the capacity search, small enough for CI: a fine grid of rates on sim-engine servers
(brute force) and `goodput capacity` on an identical one, side by side (bench/capacity_ground_truth.py
is the full-size version). The search's answer lies in the grid's bracket (within its own tolerance
below), costs at most a third of the grid's requests, and neither exceeds `goodput plan`'s roofline bound."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.capacity_ground_truth import (
    GridPoint,
    Workload,
    grid_bracket,
    grid_rates,
    measure,
    plan_bound,
    report,
)


def test_grid_bracket_rules() -> None:
    points = [GridPoint(10, 60, 60, 66, False), GridPoint(11, 57, 60, 66, False),  # 0.95: not shown by n=60
              GridPoint(12, 50, 60, 66, False),  # 0.83: too close to tell either
              GridPoint(13, 40, 60, 66, False),  # 0.67: shown to fall short
              GridPoint(14, 60, 60, 66, False)]  # a pass above a failure: not part of the bracket
    assert grid_bracket(points, 0.9) == (10, 13)
    assert grid_bracket(points[:2], 0.9) == (10, None)
    assert grid_rates(14, 16, 0.5) == [14, 14.5, 15, 15.5, 16]
    assert 30 < plan_bound(Workload()) < 35  # L4's compute bound at this shape


@pytest.mark.slow
def test_capacity_search_against_brute_force(tmp_path: Path) -> None:
    outcome = measure(Workload(), rates=grid_rates(10, 40, 1), grid_servers=4, point_duration="2.5s",
                      search=["--min-rate", "10", "--max-rate", "50"], tolerance=0.05, out=tmp_path, timeout_s=300)
    assert not outcome.problems, report(outcome)
    cap = outcome.capacity
    assert outcome.g_pass is not None and outcome.g_fail is not None
    assert outcome.g_pass / 1.05 <= cap["rate"] < outcome.g_fail
    assert cap["requests"] * 3 <= outcome.grid_requests
    assert cap["rate"] <= outcome.plan_bound_rps and outcome.g_pass <= outcome.plan_bound_rps
