"""The data of a CDF chart: exact quantiles of all samples at a few hundred levels.

A run's samples are sorted once (metrics.latency.samples); the curve is read from that order at the
levels of exporters.html.downsample.cdf_levels with the summary's own machinery
(metrics.latency.aggregate), so the drawn curve is the inverse of numpy's `linear` quantile function over
every sample and passes exactly through the p50 / p90 / p99 that summary.json reports. ITL per token is
weighted (each gap stands for k_j samples): its curve is that of the repeated sample, as its percentiles are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from exporters.html.downsample import BUCKET_CDF_POINTS, CDF_POINTS, MARKED_PERCENTILES, cdf_levels
from metrics.latency import Samples, selection_stats, stats_by_dimension
from metrics.summary import Dimension

BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]


@dataclass(slots=True)
class Curve:
    """One CDF line: `x` sample values (seconds, or unitless), `y` the fraction of samples ≤ x, and the
    marked percentiles (percentile → exact value over every sample)."""

    name: str
    x: FloatArray
    y: FloatArray
    count: int
    marks: dict[float, float] = field(default_factory=dict)


def sample_count(samples: Samples, include: BoolArray) -> int:
    """How many samples (Σ weights) the requests in `include` contribute."""
    return round(float(samples.moments.weight[include].sum()))


def cdf_curve(samples: Samples, include: BoolArray, *, name: str = "", budget: int = CDF_POINTS,
              marked: Sequence[float] = MARKED_PERCENTILES) -> Curve | None:
    """The CDF of the samples of the requests in `include` (None when there are none)."""
    count = sample_count(samples, include)
    if count == 0:
        return None
    levels = np.unique(np.concatenate((cdf_levels(count, budget), marked)))
    stats = selection_stats(samples, include, tuple(levels.tolist()))
    x = np.asarray(stats.quantiles, dtype=np.float64)
    at = {float(level): float(value) for level, value in zip(levels, x, strict=True)}
    return Curve(name, x, levels / 100.0, stats.count, {p: at[float(p)] for p in marked})


def cdf_by_label(samples: Samples, include: BoolArray, dims: Sequence[Dimension], *, budget: int = BUCKET_CDF_POINTS,
                 marked: Sequence[float] = MARKED_PERCENTILES) -> list[Curve]:
    """One CDF per label of each bucket dimension (labels with no sample are left out), named `dim: label`.
    Every dimension is read in one pass over the sorted samples (tens of millions for ITL)."""
    count = sample_count(samples, include)
    if count == 0 or not dims:
        return []
    levels = np.unique(np.concatenate((cdf_levels(max(count, budget + 1), budget), marked)))
    rows = stats_by_dimension(samples, include, [(d.codes, len(d.labels)) for d in dims], tuple(levels.tolist()))
    curves = []
    for dim, row in zip(dims, rows, strict=True):
        for label, stats in zip(dim.labels, row, strict=True):
            if stats.count == 0:
                continue
            x = np.asarray(stats.quantiles, dtype=np.float64)
            at = {float(level): float(value) for level, value in zip(levels, x, strict=True)}
            curves.append(Curve(f"{dim.name}: {label}", x, levels / 100.0, stats.count,
                                {p: at[float(p)] for p in marked}))
    return curves
