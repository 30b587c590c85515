"""The bucket engine must give exactly the blocks that plain per-subset percentiles give."""

from __future__ import annotations

import numpy as np
import pytest

from metrics.aggregate import Samples, block, blocks_by_label
from metrics.stats import stats_block


def _check(samples: Samples, include: np.ndarray, codes: np.ndarray, n_labels: int) -> None:
    whole = block(samples, include)
    got = blocks_by_label(samples, include, codes, n_labels, whole=whole)
    scale = 1e9 if samples.in_ns else 1.0
    for label in range(n_labels):
        chosen = include[samples.owner] & (codes[samples.owner] == label)
        expected = stats_block(samples.values[chosen] / scale)
        assert got[label].keys() == expected.keys()
        for key, value in expected.items():
            if value is None:
                assert got[label][key] is None
            else:
                assert got[label][key] == pytest.approx(value, rel=1e-12, abs=1e-15), (label, key)


@pytest.mark.parametrize("huge", [False, True])
def test_nanosecond_samples_by_label(huge: bool) -> None:
    rng = np.random.default_rng(11)
    owner = np.sort(rng.integers(0, 500, 20_000))
    values = rng.integers(0, 200_000_000, owner.size)
    if huge:  # a gap beyond the packed-key range takes the plain path
        values[5] = 2**50
    samples = Samples(values=values, owner=owner, in_ns=True)
    include = rng.random(500) < 0.8
    codes = rng.integers(0, 5, 500)
    codes[codes == 3] = 2  # label 3 stays empty
    _check(samples, include, codes, 5)


def test_float_samples_by_label_and_single_label_reuse() -> None:
    rng = np.random.default_rng(12)
    values = rng.normal(0.0, 1.0, 300)  # negative values too (e.g. client − server differences)
    samples = Samples.per_request(values)
    include = np.ones(300, dtype=bool)
    _check(samples, include, rng.integers(0, 3, 300), 3)
    one = blocks_by_label(samples, include, np.zeros(300, dtype=np.int64), 2, whole=block(samples, include))
    assert one[0] == block(samples, include) and one[1]["count"] == 0


def test_nothing_included() -> None:
    samples = Samples(values=np.array([5, 6]), owner=np.array([0, 1]), in_ns=True)
    got = blocks_by_label(samples, np.zeros(2, dtype=bool), np.array([0, 1]), 2)
    assert [b["count"] for b in got] == [0, 0] and got[0]["p50"] is None
