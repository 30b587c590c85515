"""The bucket engine must give exactly the blocks that plain per-subset percentiles give."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.latency import aggregate
from metrics.latency.aggregate import block, blocks_by_label, selection_stats, stats_by_dimension
from metrics.latency.samples import Samples
from metrics.latency.stats import stats_block


def _gaps(rng: np.random.Generator, n: int, high: int) -> tuple[np.ndarray, np.ndarray]:
    counts = rng.integers(0, 60, n)
    off = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return rng.integers(0, high, int(off[-1])), off


def _expanded(ns: np.ndarray, off: np.ndarray, tokens: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The plain samples (seconds) and owners the weighted set stands for."""
    owner = np.repeat(np.arange(off.size - 1), np.diff(off))
    if tokens is None:
        return ns / 1e9, owner
    k = np.maximum(tokens, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        per = ns / k / 1e9
    return np.repeat(per, k), np.repeat(owner, k)


def _check(samples: Samples, plain: np.ndarray, owner: np.ndarray, include: np.ndarray, codes: np.ndarray,
           n_labels: int) -> None:
    got = [b.to_json() for b in blocks_by_label(samples, include, codes, n_labels)]
    for label in range(n_labels):
        expected = stats_block(plain[include[owner] & (codes[owner] == label)]).to_json()
        assert got[label].keys() == expected.keys()
        for key, value in expected.items():
            if value is None:
                assert got[label][key] is None
            elif key in ("mean", "std"):  # combined from per-request moments: equal to rounding
                assert got[label][key] == pytest.approx(value, rel=1e-9, abs=1e-15), (label, key)
            else:  # order statistics and their interpolation: exactly numpy's
                assert got[label][key] == value, (label, key)


@pytest.mark.parametrize("block_size", [4096, 16])  # 16: ranks fall in many different blocks
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("huge", [False, True])  # a gap of 13 days: the argsort path
def test_gap_samples_by_label(monkeypatch: pytest.MonkeyPatch, block_size: int, weighted: bool, huge: bool) -> None:
    monkeypatch.setattr(aggregate, "_BLOCK", block_size)
    rng = np.random.default_rng(11)
    ns, off = _gaps(rng, 500, 200_000_000)
    if huge:
        ns[5] = 2**60
    tokens = rng.choice([0, 1, 1, 1, 2, 3, 7], ns.size) if weighted else None
    samples = Samples.from_gaps(ns, off, tokens)
    plain, owner = _expanded(ns, off, tokens)
    include = rng.random(500) < 0.8
    codes = rng.integers(0, 5, 500)
    codes[codes == 3] = 2  # label 3 stays empty
    _check(samples, plain, owner, include, codes, 5)


def test_float_samples_by_label_and_whole_run() -> None:
    rng = np.random.default_rng(12)
    values = rng.normal(0.0, 1.0, 300)  # negative values too (e.g. client − server differences)
    values[::17] = np.nan  # no sample
    samples = Samples.per_request(values)
    owner = np.arange(300)
    include = rng.random(300) < 0.9
    _check(samples, values, owner, include, rng.integers(0, 3, 300), 3)
    assert block(samples, include) == blocks_by_label(samples, include, np.zeros(300, dtype=np.int64), 1)[0]
    assert block(samples, include).count == int((include & ~np.isnan(values)).sum())


def test_several_dimensions_in_one_pass_equal_one_at_a_time() -> None:
    rng = np.random.default_rng(13)
    ns, off = _gaps(rng, 300, 50_000_000)
    samples = Samples.from_gaps(ns, off, rng.integers(1, 4, ns.size))
    include = rng.random(300) < 0.7
    dims = [(rng.integers(0, 4, 300), 4), (rng.integers(0, 2, 300), 2), (np.zeros(300, dtype=np.int64), 1)]
    together = stats_by_dimension(samples, include, dims)
    for (codes, n_labels), row in zip(dims, together, strict=True):
        assert [s.block() for s in row] == blocks_by_label(samples, include, codes, n_labels)


def test_many_label_combinations_fall_back_to_one_dimension_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aggregate, "_TABLE_CELLS", 1 << 10)  # as if a tag had thousands of values
    rng = np.random.default_rng(15)
    ns, off = _gaps(rng, 3000, 50_000_000)
    samples = Samples.from_gaps(ns, off)
    include = np.ones(3000, dtype=bool)
    dims = [(rng.integers(0, 50, 3000), 50), (rng.integers(0, 40, 3000), 40)]
    calls: list[int] = []
    inner = aggregate._block_counts
    monkeypatch.setattr(aggregate, "_block_counts", lambda *a: calls.append(a[2]) or inner(*a))
    together = stats_by_dimension(samples, include, dims)
    assert calls == [51, 41]  # one table per dimension, not one over ~1,800 combinations
    for (codes, n_labels), row in zip(dims, together, strict=True):
        assert [s.block() for s in row] == blocks_by_label(samples, include, codes, n_labels)


def test_any_percentile_for_thresholds() -> None:
    values = np.array([0.4, 0.1, 0.3, 0.2])
    stats = selection_stats(Samples.per_request(values), np.ones(4, dtype=bool), (75.0, 0.0, 100.0))
    assert stats.quantiles == tuple(np.percentile(values, [75, 0, 100]).tolist())
    assert stats.count == 4 and stats.min == 0.1 and stats.max == 0.4


def test_nothing_included() -> None:
    samples = Samples.from_gaps(np.array([5, 6]), np.array([0, 1, 2]))
    got = [b.to_json() for b in blocks_by_label(samples, np.zeros(2, dtype=bool), np.array([0, 1]), 2)]
    assert [b["count"] for b in got] == [0, 0] and got[0]["p50"] is None


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10**12), st.integers(0, 9)), min_size=1, max_size=80), st.integers(1, 5))
def test_weighted_sort_is_exact(pairs: list[tuple[int, int]], n_requests: int) -> None:
    ns = np.array([g for g, _ in pairs], dtype=np.int64)
    tokens = np.array([k for _, k in pairs], dtype=np.int64)
    cuts = np.sort(np.random.default_rng(len(pairs)).integers(0, ns.size + 1, n_requests - 1))
    off = np.concatenate(([0], cuts, [ns.size])).astype(np.int64)
    samples = Samples.from_gaps(ns, off, tokens)
    plain, owner = _expanded(ns, off, tokens)
    expanded = np.repeat(samples.values, samples.weights) if samples.weights is not None else samples.values
    assert expanded.tolist() == np.sort(plain).tolist()  # same values, bit for bit, in order
    got_owner = np.repeat(samples.owner, samples.weights) if samples.weights is not None else samples.owner
    mine = sorted(zip(expanded.tolist(), got_owner.tolist(), strict=True))
    assert mine == sorted(zip(plain.tolist(), owner.tolist(), strict=True))


def test_sorting_in_the_gaps_own_memory_gives_the_same_samples() -> None:
    rng = np.random.default_rng(14)
    ns, off = _gaps(rng, 50, 10**9)
    copy = Samples.from_gaps(ns, off)
    reused = Samples.from_gaps(ns.copy(), off, reuse=True)
    assert reused.values.tolist() == copy.values.tolist() and reused.owner.tolist() == copy.owner.tolist()


def test_a_gap_too_long_for_the_packed_key_in_the_gaps_own_memory() -> None:
    ns = np.array([2**62 + 5, 3, 7, 2**61], dtype=np.int64)  # no room left for the owner bits
    off = np.array([0, 2, 4])
    reused = Samples.from_gaps(ns.copy(), off, reuse=True)
    assert reused.values.tolist() == sorted((ns / 1e9).tolist())
    assert reused.owner.tolist() == [0, 1, 1, 0]


@pytest.mark.parametrize("big_k", [300, 70_000])
def test_a_few_chunks_with_many_tokens_are_sorted_apart_and_merged(big_k: int) -> None:
    rng = np.random.default_rng(16)
    ns, off = _gaps(rng, 200, 2**50)
    tokens = rng.integers(0, 4, ns.size)
    tokens[::97] = big_k  # K² no longer fits beside 50-bit gaps: these go through the slow sort
    samples = Samples.from_gaps(ns, off, tokens)
    plain, owner = _expanded(ns, off, tokens)
    assert samples.weights is not None
    assert np.repeat(samples.values, samples.weights).tolist() == np.sort(plain).tolist()
    pairs = sorted(zip(np.repeat(samples.values, samples.weights).tolist(),
                       np.repeat(samples.owner, samples.weights).tolist(), strict=True))
    assert pairs == sorted(zip(plain.tolist(), owner.tolist(), strict=True))


@pytest.mark.parametrize("weighted", [False, True])
def test_a_tag_of_very_many_values_is_read_label_by_label(monkeypatch: pytest.MonkeyPatch, weighted: bool) -> None:
    monkeypatch.setattr(aggregate, "_TABLE_CELLS", 1 << 10)  # as if the tag had 100,000s of values
    rng = np.random.default_rng(17)
    ns, off = _gaps(rng, 3000, 50_000_000)
    tokens = rng.integers(0, 4, ns.size) if weighted else None
    samples = Samples.from_gaps(ns, off, tokens)
    plain, owner = _expanded(ns, off, tokens)
    include = rng.random(3000) < 0.9
    codes = rng.integers(0, 900, 3000)
    monkeypatch.setattr(aggregate, "_block_counts", None)  # the block table must not be used
    _check(samples, plain, owner, include, codes, 900)
