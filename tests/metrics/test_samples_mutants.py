"""Samples by hand: per-request moments, weighted gaps (k = 0, negative, huge gaps beside large k), the
no-copy sort, and runs longer than one 2^20-sample slice (values and moments counted by hand)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from metrics.latency.samples import Samples

SLICE = 1 << 20  # the module's slice length: one more sample makes a second slice


def test_per_request_values_are_float_and_an_undefined_request_sums_nothing() -> None:
    s = Samples.per_request(np.array([3, 1, 2]))  # integer input: values are still float seconds
    assert s.values.dtype == np.float64 and s.values.tolist() == [1.0, 2.0, 3.0]
    assert s.owner.tolist() == [1, 2, 0]
    s = Samples.per_request(np.array([np.nan, 2.0]))
    assert s.moments.weight.tolist() == [0.0, 1.0]
    assert s.moments.total.tolist() == [0.0, 2.0]  # no sample, sum 0
    assert s.moments.m2.tolist() == [0.0, 0.0]


def test_owners_are_int32_on_the_argsort_path() -> None:
    # a negative gap cannot be packed into the key: the float argsort orders them.
    s = Samples.from_gaps(np.array([5, -3, 2], dtype=np.int64), np.array([0, 2, 3]))
    assert s.values.tolist() == [-3e-9, 2e-9, 5e-9]
    assert s.owner.tolist() == [0, 1, 0] and s.owner.dtype == np.int32


def test_one_token_per_gap_is_the_unweighted_sample() -> None:
    s = Samples.from_gaps(np.array([7, 3], dtype=np.int64), np.array([0, 2]), np.array([1, 1], dtype=np.int32))
    assert s.weights is None  # None: one sample each
    assert s.values.tolist() == [3e-9, 7e-9]


def test_reuse_sorts_in_the_callers_array() -> None:
    ns = np.array([30, 10, 20], dtype=np.int64)
    s = Samples.from_gaps(ns, np.array([0, 3]), reuse=True)
    assert s.values.tolist() == [10e-9, 20e-9, 30e-9]
    assert np.shares_memory(s.values, ns)
    kept = np.array([30, 10, 20], dtype=np.int64)
    Samples.from_gaps(kept, np.array([0, 3]))
    assert kept.tolist() == [30, 10, 20]  # without reuse the caller's gaps are left alone


def test_a_request_without_gaps_raises_no_numpy_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = Samples.from_gaps(np.array([4, 6], dtype=np.int64), np.array([0, 0, 2]))
    assert s.moments.weight.tolist() == [0.0, 2.0]
    assert s.moments.total.tolist() == [0.0, pytest.approx(10e-9)]
    assert s.moments.m2[0] == 0.0 and s.moments.m2[1] == pytest.approx(2e-18)  # mean 5 ns, ±1 ns


def test_a_request_whose_gaps_carry_no_token_has_zero_moments() -> None:
    # request 0: one gap with k = 0 (no sample); request 1: 7 ns / 1 and 9 ns / 2 (4.5 ns twice).
    s = Samples.from_gaps(np.array([5, 7, 9], dtype=np.int64), np.array([0, 1, 3]),
                          np.array([0, 1, 2], dtype=np.int32))
    assert s.moments.weight.tolist() == [0.0, 3.0]
    assert s.moments.total[0] == 0.0 and s.moments.m2[0] == 0.0
    assert s.moments.total[1] == pytest.approx(16e-9)
    # mean 16/3 ns: (7 − 16/3)² + 2·(4.5 − 16/3)² = 25/9 + 50/36 = 25/6 ns²
    assert s.moments.m2[1] == pytest.approx(25 / 6 * 1e-18)
    assert s.values.tolist() == [4.5e-9, 7e-9]
    assert s.weights is not None and s.weights.tolist() == [2, 1]
    assert s.owner.tolist() == [1, 1]


def test_negative_weighted_gaps_are_sorted_by_gap_over_k() -> None:
    s = Samples.from_gaps(np.array([-4, 6, 3], dtype=np.int64), np.array([0, 2, 3]),
                          np.array([2, 1, 3], dtype=np.int32))
    assert s.values.tolist() == [-2e-9, 1e-9, 6e-9]
    assert s.owner.tolist() == [0, 1, 0]
    assert s.weights is not None and s.weights.tolist() == [2, 3, 1]


def test_a_huge_gap_beside_a_large_k_does_not_overflow_the_key() -> None:
    # 2^40 ns (18 min) in 1000 tokens beside 2^40 + 3 ns in 7: 41 value bits + 20 fraction bits for
    # K = 1000 + 10 bits of k + the owner bit is over 63, so the key must not be used for both.
    big = 2**40
    s = Samples.from_gaps(np.array([big, big + 3], dtype=np.int64), np.array([0, 2]),
                          np.array([1000, 7], dtype=np.int32))
    assert s.values.tolist() == [big / 1000 / 1e9, (big + 3) / 7 / 1e9]
    assert s.weights is not None and s.weights.tolist() == [1000, 7]


def test_moments_over_two_slices_with_one_request_larger_than_a_slice() -> None:
    # request 0: SLICE + 1 gaps of 6 ns in 2 tokens (3 ns, weight 2 each); request 1: 10 ns / 1, 4 ns / 2.
    big = SLICE + 1
    ns = np.concatenate([np.full(big, 6, dtype=np.int64), np.array([10, 4], dtype=np.int64)])
    tokens = np.concatenate([np.full(big, 2, dtype=np.int32), np.array([1, 2], dtype=np.int32)])
    s = Samples.from_gaps(ns, np.array([0, big, big + 2]), tokens)
    m = s.moments
    assert m.weight.tolist() == [2.0 * big, 3.0]
    assert m.total[0] == pytest.approx(6e-9 * big) and m.total[1] == pytest.approx(14e-9)
    assert m.m2[0] == pytest.approx(0.0, abs=1e-24)
    # mean 14/3 ns: (10 − 14/3)² + 2·(2 − 14/3)² = 256/9 + 128/9 = 128/3 ns²
    assert m.m2[1] == pytest.approx(128 / 3 * 1e-18)
    assert s.values[0] == 2e-9 and s.values[-1] == 10e-9
    assert int((s.values == 3e-9).sum()) == big
    assert s.owner[0] == 1 and s.owner[-1] == 1 and int((s.owner == 0).sum()) == big


def test_a_sort_longer_than_one_slice_converts_every_value_once() -> None:
    n = SLICE + 3
    s = Samples.from_gaps(np.arange(n, dtype=np.int64)[::-1].copy(), np.array([0, n]))
    assert np.array_equal(s.values, np.arange(n) / 1e9)
