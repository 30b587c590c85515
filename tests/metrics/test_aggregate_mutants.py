"""Latency blocks by hand where the fast paths end: many label dimensions (past 2^53 and 2^63
combinations), the many-labels reader with its own percentiles, more than one 2^20-sample slice of the
block table, labels with no request, and a block's percentile keys."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from metrics.latency import aggregate
from metrics.latency.aggregate import Stats, blocks_by_label, selection_stats, stats_by_dimension
from metrics.latency.samples import Samples


def test_a_block_refuses_quantiles_that_are_not_the_summary_percentiles() -> None:
    assert Stats(1, 1.0, 0.0, 1.0, 1.0, (1.0,) * 5).block().to_json()["p999"] == 1.0
    with pytest.raises(ValueError):
        Stats(1, 1.0, 0.0, 1.0, 1.0, (1.0,)).block()  # only p(75), say: not a summary block


def _two_requests(dims: int, second: list[int]) -> list[list[Stats]]:
    """Request 0 (1 s) has label 0 in every dimension; request 1 (3 s) has the labels `second`."""
    s = Samples.per_request(np.array([1.0, 3.0]))
    codes = [np.array([0, label], dtype=np.int64) for label in second]
    assert len(codes) == dims
    return stats_by_dimension(s, np.array([True, True]), [(c, 2) for c in codes])


def test_65_two_label_dimensions_keep_two_requests_apart() -> None:
    # 2^65 combinations: mixed-radix packing would wrap (1·2^64 ≡ 0), so the rows are compared whole.
    rows = _two_requests(65, [1] + [0] * 64)
    first = rows[0]
    assert (first[0].count, first[0].min, first[1].count, first[1].min) == (1, 1.0, 1, 3.0)
    for row in rows[1:]:  # both requests share label 0 there: 1 s and 3 s, mean 2, std 1
        assert (row[0].count, row[0].mean, row[0].std, row[1].count) == (2, 2.0, 1.0, 0)


def test_54_two_label_dimensions_pack_exactly() -> None:
    # 2^54 combinations fit an int64 but not a float64's 53-bit mantissa: 2^53 and 2^53 + 1 differ.
    s = Samples.per_request(np.array([1.0, 3.0]))
    codes = [np.array([1, 1], dtype=np.int64)] + [np.zeros(2, dtype=np.int64)] * 52 + [np.array([0, 1])]
    rows = stats_by_dimension(s, np.array([True, True]), [(c, 2) for c in codes])
    last = rows[-1]
    assert (last[0].count, last[0].max, last[1].count, last[1].min) == (1, 1.0, 1, 3.0)
    assert (rows[0][0].count, rows[0][1].count, rows[0][1].mean) == (0, 2, 2.0)


def test_the_many_labels_path_reads_the_percentiles_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    # A table limit of one cell sends every block of more than 4 × 4096 samples to the per-label order.
    monkeypatch.setattr(aggregate, "_TABLE_CELLS", 1)
    n = 20_000
    s = Samples.per_request(np.arange(n, dtype=np.float64))
    parity = (np.arange(n) % 2).astype(np.int64)
    quarter = (np.arange(n) // 5000).astype(np.int64)  # 0..3, 5000 consecutive values each
    by_parity, by_quarter = stats_by_dimension(s, np.ones(n, dtype=bool), [(parity, 2), (quarter, 4)], (50.0, 25.0))
    # evens 0..19998 (10,000 of them): p50 at position 4999.5 → (9998 + 10000)/2; p25 at 2499.75 → 4999.5
    assert by_parity[0].quantiles == (9999.0, 4999.5)
    assert by_parity[1].quantiles == (10000.0, 5000.5)  # the odds, one more
    # quarter 2: 10000..14999, p50 at 2499.5 → 12499.5, p25 at 1249.75 → 11249.75
    assert by_quarter[2].quantiles == (12499.5, 11249.75)
    assert (by_quarter[3].count, by_quarter[3].min, by_quarter[3].max) == (5000, 15000.0, 19999.0)


def test_a_block_table_of_more_than_one_slice() -> None:
    # request 0: gaps 0..N−1 ns (N = 2^20 + 5, over one slice of table rows); request 1: N + 10, N + 20 ns.
    n = (1 << 20) + 5
    ns = np.concatenate([np.arange(n, dtype=np.int64), np.array([n + 10, n + 20], dtype=np.int64)])
    s = Samples.from_gaps(ns, np.array([0, n, n + 2]))
    late = selection_stats(s, np.array([False, True]), (50.0,))
    assert (late.count, late.min, late.max) == (2, (n + 10) / 1e9, (n + 20) / 1e9)
    assert len(late.quantiles) == 1 and late.quantiles[0] == pytest.approx((n + 15) / 1e9, rel=1e-12)
    early = selection_stats(s, np.array([True, False]), (50.0,))
    # 0..N−1: median at position (N − 1)/2 = 2^19 + 2 exactly
    assert (early.count, early.max, early.quantiles) == (n, (n - 1) / 1e9, (((1 << 19) + 2) / 1e9,))


def test_a_label_without_requests_raises_no_numpy_warning() -> None:
    s = Samples.per_request(np.array([2.0, 4.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        blocks = [b.to_json() for b in blocks_by_label(s, np.array([True, True]), np.array([0, 0], dtype=np.int64), 2)]
    assert (blocks[0]["count"], blocks[0]["mean"], blocks[0]["std"]) == (2, 3.0, 1.0)
    assert blocks[1]["count"] == 0 and blocks[1]["mean"] is None
