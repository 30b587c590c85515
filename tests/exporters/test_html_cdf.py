"""The CDF data of the HTML report: drawn through exact quantiles of every sample, so its marked p50 / p90 /
p99 are summary.json's, whatever the point budget; a small run has a vertex at every sample."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from exporters.html.cdf import cdf_by_label, cdf_curve
from exporters.html.downsample import SUMMARY_PERCENTILES, cdf_levels
from exporters.html.run_data import RunData
from tests.exporters._html_runs import sample_run

METRICS = ("ttft_s", "itl_s", "itl_token_s", "tpot_s", "e2e_s")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunData, dict[str, Any]]:
    return sample_run(tmp_path_factory.mktemp("cdf") / "run")


@pytest.mark.parametrize("metric", METRICS)
def test_marked_percentiles_are_summary_json_percentiles(run: tuple[RunData, dict[str, Any]], metric: str) -> None:
    data, summary = run
    curve = cdf_curve(data.samples[metric], data.sampled)
    assert curve is not None
    block = summary["latency"][metric]
    assert curve.count == block["count"]
    assert curve.marks == {50.0: block["p50"], 90.0: block["p90"], 99.0: block["p99"]}
    # The marks are vertices of the drawn curve, at their own levels.
    for p, value in curve.marks.items():
        assert value in curve.x[np.isclose(curve.y, p / 100, rtol=0, atol=1e-12)]


@pytest.mark.parametrize("metric", METRICS)
def test_percentiles_stay_exact_with_a_tiny_point_budget(run: tuple[RunData, dict[str, Any]], metric: str) -> None:
    data, summary = run
    curve = cdf_curve(data.samples[metric], data.sampled, budget=12)
    assert curve is not None
    assert len(curve.x) <= 12 + len(SUMMARY_PERCENTILES) + 3  # the budget plus the summary's percentiles
    block = summary["latency"][metric]
    assert (curve.marks[50.0], curve.marks[99.0]) == (block["p50"], block["p99"])
    assert curve.x[0] == block["min"] and curve.x[-1] == block["max"]


def test_bucket_lines_carry_each_buckets_exact_percentiles(run: tuple[RunData, dict[str, Any]]) -> None:
    data, summary = run
    curves = {c.name: c for c in cdf_by_label(data.samples["ttft_s"], data.sampled, data.dimensions)}
    buckets = [b for b in summary["buckets"] if b["latency"]["ttft_s"]["count"]]
    assert len(curves) == len(buckets) >= 4
    for b in buckets:
        curve = curves[f"{b['dimension']}: {b['label']}"]
        block = b["latency"]["ttft_s"]
        assert curve.count == block["count"]
        assert curve.marks[50.0] == block["p50"] and curve.marks[99.0] == block["p99"]


def test_a_small_run_has_a_vertex_at_every_sample(tmp_path: Path) -> None:
    data, _ = sample_run(tmp_path / "small", n=25, error_every=0)
    curve = cdf_curve(data.samples["ttft_s"], data.sampled)
    assert curve is not None
    values = np.sort(data.values["ttft_s"][data.sampled])
    own_levels = np.arange(values.size) / (values.size - 1)
    at = np.searchsorted(curve.y, own_levels - 1e-12)
    assert np.allclose(curve.y[at], own_levels) and np.allclose(curve.x[at], values, rtol=1e-12, atol=0)
    assert len(curve.x) <= values.size + 3  # and the marked percentiles between them


def test_no_sample_no_curve(run: tuple[RunData, dict[str, Any]]) -> None:
    data, _ = run
    assert cdf_curve(data.samples["ttft_s"], np.zeros(data.frame.n, dtype=np.bool_)) is None
    assert cdf_by_label(data.samples["ttft_s"], np.zeros(data.frame.n, dtype=np.bool_), data.dimensions) == []


def test_levels_beyond_the_budget_reach_into_the_tail() -> None:
    levels = cdf_levels(1_000_000, 400)
    assert levels.size <= 400 + len(SUMMARY_PERCENTILES) + 2
    assert levels[0] == 0 and levels[-1] == 100
    assert set(SUMMARY_PERCENTILES) <= set(levels.tolist())
    assert (levels > 99.99).sum() >= 20  # the tail gets its share, down to about one sample
    assert np.all(np.diff(levels) > 0)
    assert cdf_levels(0, 400).size == 0 and cdf_levels(1, 400).tolist() == [0.0, 100.0]
