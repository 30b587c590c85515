"""Point budgets: how many points a chart draws when a run has more than a browser should hold.

Only what is drawn is thinned. Every percentile, rate and count shown on a chart or in a table is
computed from all samples first (exporters.html.cdf, exporters.html.timeline); a CDF is drawn through
exact quantiles at chosen levels, and a scatter plot of one point per request keeps, beyond its budget,
the extreme of each time slice plus an even random share of the rest.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

CDF_POINTS = 400  # vertices of a whole-run CDF
BUCKET_CDF_POINTS = 120  # vertices of one bucket's CDF line
SCATTER_POINTS = 4000  # points of a per-request scatter plot
SCATTER_SLICES = 200  # time slices whose extremes a thinned scatter plot always keeps
MARKED_PERCENTILES: tuple[float, ...] = (50.0, 90.0, 99.0)  # marked on every CDF
SUMMARY_PERCENTILES: tuple[float, ...] = (50.0, 90.0, 95.0, 99.0, 99.9)  # summary.json's; always vertices
_TAIL_SHARE = 0.25  # of a CDF's budget, spent on levels above p99 (where latency is read)


def cdf_levels(count: int, budget: int) -> FloatArray:
    """Percentile levels (0–100, ascending, distinct) at which to draw the CDF of `count` samples.

    Up to `budget` samples: every sample's own level 100·i/(count − 1), so the curve has a vertex at each
    sample. Beyond it: an even grid, a finer grid of the tail above p99 down to about one sample, and the
    summary's percentiles (so p50 … p99.9 are vertices of the curve)."""
    if count <= 0:
        return np.zeros(0)
    if count == 1:
        return np.array([0.0, 100.0])
    if count <= budget:
        return np.linspace(0.0, 100.0, count)
    tail = max(2, int(budget * _TAIL_SHARE))
    even = np.linspace(0.0, 100.0, budget - tail)
    # 99, 99.9, 99.99, ... evenly in log(1 − level), until one sample is left beyond the level.
    deepest = max(2.0, np.log10(count))
    tail_levels = 100.0 * (1.0 - np.logspace(-2.0, -deepest, tail))
    return np.unique(np.concatenate((even, tail_levels, SUMMARY_PERCENTILES, [0.0, 100.0])))


def thin_scatter(x: FloatArray, y: FloatArray, budget: int = SCATTER_POINTS, *, slices: int = SCATTER_SLICES,
                 seed: int = 0) -> IntArray:
    """Indices (ascending in x) of the points to draw of a scatter plot, at most `budget` of them.

    All points when they fit. Otherwise, per slice of the x range, the point of largest y (a spike of
    latency never disappears), then a seeded random share of the others up to the budget. NaN y values
    are never drawn."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    valid = np.flatnonzero(~np.isnan(y) & ~np.isnan(x))
    if valid.shape[0] <= budget:
        return valid[np.argsort(x[valid], kind="stable")].astype(np.int64)
    xs, ys = x[valid], y[valid]
    lo, hi = float(xs.min()), float(xs.max())
    n_slices = max(1, min(slices, budget // 2))
    width = (hi - lo) / n_slices or 1.0
    slice_of = np.minimum(((xs - lo) / width).astype(np.int64), n_slices - 1)
    # The largest y of each slice: order by (slice, y) and take each slice's last entry.
    order = np.lexsort((ys, slice_of))
    last_of_slice = np.flatnonzero(np.diff(slice_of[order], append=n_slices))
    peaks = order[last_of_slice]
    rest = np.setdiff1d(np.arange(valid.shape[0]), peaks, assume_unique=True)
    room = budget - peaks.shape[0]
    chosen = np.random.default_rng(seed).choice(rest, size=min(room, rest.shape[0]), replace=False)
    keep: IntArray = np.concatenate((peaks, chosen)).astype(np.int64)
    kept: IntArray = valid[keep[np.argsort(xs[keep], kind="stable")]].astype(np.int64)
    return kept
