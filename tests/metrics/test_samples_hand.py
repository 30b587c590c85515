"""The packed-key sort's helpers, by hand: which token counts fit a 63-bit key, and the merge of two
sorted weighted runs keeping the first run's entries before equal ones of the second."""

from __future__ import annotations

import numpy as np
import pytest

from metrics.latency.samples import _largest_k, _merge


@pytest.mark.parametrize(("value_bits", "owner_bits", "expected"), [
    # The key needs value_bits + 3·k_bits + owner_bits ≤ 63; K is then 2^k_bits − 1.
    (30, 12, 127),  # 3k ≤ 21 → k = 7
    (33, 0, 1023),  # 3k ≤ 30 → k = 10, exactly 63 bits
    (34, 0, 511),  # 3k ≤ 29 → k = 9
    (40, 20, 1),  # 3k ≤ 3 → k = 1
    (41, 20, 0),  # 3k ≤ 2: no k fits
    (50, 20, 0),
    (0, 0, 2**21 - 1),  # 3k ≤ 63 → k = 21
])
def test_largest_token_count_that_fits_the_key(value_bits: int, owner_bits: int, expected: int) -> None:
    assert _largest_k(value_bits, owner_bits) == expected


def test_merge_puts_the_second_runs_ties_after_the_first_runs() -> None:
    a = (np.array([1.0, 2.0, 4.0]), np.array([0, 1, 2], dtype=np.int64), np.array([1, 1, 1], dtype=np.int64))
    b = (np.array([2.0, 3.0, 5.0]), np.array([7, 8, 9], dtype=np.int64), np.array([2, 2, 2], dtype=np.int64))
    values, owners, weights = _merge(a, b)
    assert values.tolist() == [1.0, 2.0, 2.0, 3.0, 4.0, 5.0]
    assert owners.tolist() == [0, 1, 7, 8, 2, 9]
    assert weights is not None and weights.tolist() == [1, 1, 2, 2, 1, 2]
