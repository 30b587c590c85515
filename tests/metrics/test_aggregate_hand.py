"""Per-label blocks on the many-labels path (one label at a time, as for a tag of very many values),
checked against values worked out by hand, with the highest label holding no sample."""

from __future__ import annotations

import numpy as np
import pytest

from metrics.latency import aggregate
from metrics.latency.aggregate import blocks_by_label
from metrics.latency.samples import Samples


@pytest.mark.parametrize("include_all", [True, False])
def test_many_labels_path_with_an_empty_top_label(monkeypatch: pytest.MonkeyPatch, include_all: bool) -> None:
    # Tiny block and table: the per-block count table would be too big, so labels are read one by one.
    monkeypatch.setattr(aggregate, "_BLOCK", 2)
    monkeypatch.setattr(aggregate, "_TABLE_CELLS", 4)
    monkeypatch.setattr(aggregate, "_block_counts", None)  # the block table must not be used
    # Request i (0..11) has one gap of (i + 1) ms and label i mod 3; label 3 has no request.
    ns = np.arange(1, 13, dtype=np.int64) * 1_000_000
    off = np.arange(13, dtype=np.int64)
    samples = Samples.from_gaps(ns, off, None)
    codes = np.arange(12) % 3
    include = np.ones(12, dtype=bool) if include_all else np.arange(12) != 11  # drop the 12 ms one
    got = [b.to_json() for b in blocks_by_label(samples, include, codes, 4)]
    # Label 0: 1, 4, 7, 10 ms. Linear percentiles at index q·3: p50 at 1.5 → 5.5 ms, p90 at 2.7 → 9.1 ms.
    assert (got[0]["count"], got[0]["min"], got[0]["max"]) == (4, 0.001, 0.010)
    assert got[0]["mean"] == pytest.approx(0.0055)
    assert got[0]["p50"] == pytest.approx(0.0055) and got[0]["p90"] == pytest.approx(0.0091)
    # Label 1: 2, 5, 8, 11 ms; label 2: 3, 6, 9, 12 ms, or 3, 6, 9 when the last is left out (p50 6 ms).
    assert got[1]["p50"] == pytest.approx(0.0065) and got[1]["max"] == 0.011
    if include_all:
        assert (got[2]["count"], got[2]["max"], got[2]["p50"]) == (4, 0.012, pytest.approx(0.0075))
    else:
        assert (got[2]["count"], got[2]["max"], got[2]["p50"]) == (3, 0.009, pytest.approx(0.006))
    assert got[3]["count"] == 0
