from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.latency.stats import BLOCK_KEYS, quantiles_of_sorted, sort_samples, stats_block


def test_golden_block() -> None:
    block = stats_block([0.4, 0.1, 0.3, 0.2]).to_json()
    assert block == {
        "count": 4,
        "mean": pytest.approx(0.25),
        "std": pytest.approx(0.111803398875),  # population std
        "min": 0.1,
        "p50": pytest.approx(0.25),
        "p90": pytest.approx(0.37),  # index 2.7: 0.3 + 0.7 × 0.1
        "p95": pytest.approx(0.385),
        "p99": pytest.approx(0.397),
        "p999": pytest.approx(0.3997),
        "max": 0.4,
    }
    assert tuple(block) == BLOCK_KEYS


def test_empty_distribution_is_null_not_zero() -> None:
    block = stats_block([]).to_json()
    assert block["count"] == 0
    assert all(block[key] is None for key in BLOCK_KEYS if key != "count")


def test_nan_means_no_sample() -> None:
    assert stats_block([np.nan, 2.0]).to_json()["count"] == 1
    assert stats_block([np.nan]).to_json()["p50"] is None


def test_single_sample() -> None:
    block = stats_block([0.5]).to_json()
    assert block["p999"] == 0.5 and block["std"] == 0.0


def test_values_are_plain_python_numbers() -> None:
    for value in stats_block(np.array([1, 2, 3], dtype=np.int64)).to_json().values():
        assert type(value) in (int, float)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), min_size=1, max_size=300))
def test_quantiles_equal_numpy_linear(values: list[float]) -> None:
    array = np.array(values)
    ps = [0, 50, 90, 95, 99, 99.9, 100]
    ours = quantiles_of_sorted(sort_samples(array), ps)
    assert ours.tolist() == np.percentile(array, ps, method="linear").tolist()


def test_fast_sort_of_non_negative_floats() -> None:
    values = np.random.default_rng(1).gamma(2.0, 0.01, 10_000)
    values[::7] = 0.0
    assert (sort_samples(values) == np.sort(values)).all()


def test_sorting_integer_samples_gives_floats() -> None:
    # Nanosecond gaps arrive as int64: the sorted copy holds their values as floats, not reinterpreted bits.
    out = sort_samples(np.array([3_000_000, 1_000_000, 2_000_000], dtype=np.int64))
    assert out.dtype == np.float64 and out.tolist() == [1e6, 2e6, 3e6]
    assert stats_block(np.array([3, 1, 2], dtype=np.int64)).to_json()["max"] == 3.0
