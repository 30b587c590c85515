"""The one latency block: `{count, mean, std, min, p50, p90, p95, p99, p999, max}`.

Percentiles are exact over every sample, by numpy's default `linear` method (Hyndman & Fan type 7):
for a sorted sample x of size n, the q-th percentile sits at virtual index (n − 1)·q/100 and is
interpolated between its two neighbours. `quantiles_of_sorted` reproduces numpy's arithmetic
bit for bit (its `_lerp` included) so that the summary can sort a large sample once and then read the
percentiles of many subsets without numpy re-partitioning each one; the tests hold it to
`np.percentile`.

An empty distribution is `count: 0` and `None` everywhere else — never 0, which would read as
"perfect latency" (k6's no-data trap).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:  # the block's type is imported where a block is made: a run imports this before its last request
    from metrics.results import Stats

PERCENTILE_METHOD = "linear"
# (summary key, percentile)
PERCENTILES: tuple[tuple[str, float], ...] = (
    ("p50", 50.0),
    ("p90", 90.0),
    ("p95", 95.0),
    ("p99", 99.0),
    ("p999", 99.9),
)
BLOCK_KEYS: tuple[str, ...] = ("count", "mean", "std", "min", *(k for k, _ in PERCENTILES), "max")

FloatArray = npt.NDArray[np.float64]


def empty_block() -> Stats:
    """The block of a distribution with no samples."""
    from metrics.results import Stats

    return Stats.empty()


def linear_positions(n: int, percentiles: npt.ArrayLike) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], FloatArray]:
    """Where numpy's `linear` percentiles of n ascending samples sit: the ranks of the two neighbours
    (0-based; both n − 1 at the top) and the weight of the upper one."""
    q = np.true_divide(np.asarray(percentiles, dtype=np.float64), 100)
    virtual = (n - 1) * q
    previous = np.floor(virtual)
    gamma = virtual - previous
    following = previous + 1
    at_top = virtual >= n - 1
    previous[at_top] = n - 1
    following[at_top] = n - 1  # low == high there, so gamma no longer matters
    return previous.astype(np.intp), following.astype(np.intp), gamma


def lerp(low: FloatArray, high: FloatArray, gamma: FloatArray) -> FloatArray:
    """numpy's two-sided interpolation (its `_lerp`): exact at both ends."""
    diff = high - low
    result = np.add(low, diff * gamma)
    np.subtract(high, diff * (1 - gamma), out=result, where=gamma >= 0.5)
    return np.asarray(result, dtype=np.float64)


def quantiles_of_sorted(sorted_values: FloatArray, percentiles: npt.ArrayLike) -> FloatArray:
    """numpy's `linear` percentiles of an ascending, non-empty, NaN-free array, without re-sorting."""
    previous, following, gamma = linear_positions(sorted_values.shape[0], percentiles)
    return lerp(sorted_values[previous], sorted_values[following], gamma)


def block_of_sorted(sorted_values: FloatArray) -> Stats:
    """The latency block of an ascending array of samples (seconds, or a unitless index)."""
    n = int(sorted_values.shape[0])
    if n == 0:
        return empty_block()
    qs = quantiles_of_sorted(sorted_values, [p for _, p in PERCENTILES])
    mean = float(np.mean(sorted_values))
    centred = sorted_values - mean
    std = float(np.sqrt(np.dot(centred, centred) / n))  # population std, as np.std
    from metrics.results import Stats

    p50, p90, p95, p99, p999 = (float(value) for value in qs)
    return Stats(n, mean, std, float(sorted_values[0]), p50, p90, p95, p99, p999, float(sorted_values[-1]))


def sort_samples(values: npt.NDArray[Any]) -> FloatArray:
    """Ascending float64 copy of `values`, quickly.

    Non-negative float64 values sort in the same order as their bit patterns read as int64, and numpy
    sorts int64 several times faster than float64 (radix sort), which matters for 20 M ITL samples.
    """
    floats = np.asarray(values, dtype=np.float64)
    if floats.size and float(floats.min()) >= 0.0:
        return np.sort(floats.view(np.int64)).view(np.float64)
    return np.sort(floats)


def stats_block(values: npt.ArrayLike) -> Stats:
    """The latency block of unsorted samples; NaN entries are treated as 'no sample'."""
    floats = np.asarray(values, dtype=np.float64)
    floats = floats[~np.isnan(floats)]
    return block_of_sorted(sort_samples(floats))
