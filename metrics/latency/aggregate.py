"""Latency blocks of any set of requests, read from samples sorted once (metrics.latency.samples).

For one sample set and several bucket dimensions at once:

1. every included request gets the index of its *combination* of labels (prompt bucket × cache class
   × ...; a run has few), every excluded one a last index;
2. one pass over the sorted samples counts, per block of B consecutive samples, how many samples (or
   how much weight) each combination has there: a small (blocks × combinations) table;
3. per dimension and label, summing that table's columns gives cumulative counts per block, so the
   sample of rank r of a label lies in the first block whose count exceeds r, and a scan of that one
   block (B samples) finds it. Percentiles need about a dozen ranks per label.

Mean and standard deviation combine the per-request moments (Chan's formula) instead of re-summing
samples. Percentiles are exact: the same order statistics and the same interpolation as numpy's
`linear` method over the label's samples (metrics.latency.stats).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from metrics.latency.samples import Samples
from metrics.latency.stats import PERCENTILES, empty_block, lerp, linear_positions

if TYPE_CHECKING:  # imported where a block is made (metrics.latency.stats says why)
    from metrics.results import Stats as Block

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

_BLOCK = 4096
_TABLE_CELLS = 1 << 22  # blocks × combinations kept below this (32 MiB of counts)


@dataclass(slots=True)
class Stats:
    """The statistics of one label's samples; `quantiles` follow the percentiles asked for."""

    count: int
    mean: float | None = None
    std: float | None = None
    min: float | None = None
    max: float | None = None
    quantiles: tuple[float, ...] = ()

    def block(self) -> Block:
        """As a summary.json latency block (the quantiles must be those of metrics.latency.stats.PERCENTILES)."""
        if self.count == 0:
            return empty_block()
        if len(self.quantiles) != len(PERCENTILES):
            raise ValueError(f"a latency block holds {len(PERCENTILES)} percentiles, got {len(self.quantiles)}")
        from metrics.results import Stats as Block

        p50, p90, p95, p99, p999 = self.quantiles
        return Block(self.count, self.mean, self.std, self.min, p50, p90, p95, p99, p999, self.max)


Dimension = tuple[IntArray, int]  # (label index per request, number of labels)
SUMMARY_PERCENTILES: tuple[float, ...] = tuple(p for _, p in PERCENTILES)


def stats_by_dimension(
    samples: Samples, include: BoolArray, dims: Sequence[Dimension], percentiles: Sequence[float] = SUMMARY_PERCENTILES
) -> list[list[Stats]]:
    """Per dimension, per label: the statistics of the samples of included requests with that label."""
    mom = samples.moments
    members = np.flatnonzero(include & (mom.weight > 0))
    if members.size == 0:
        return [[Stats(0) for _ in range(n_labels)] for _, n_labels in dims]
    combos, inverse = _combinations([np.asarray(codes)[members] for codes, _ in dims], [n for _, n in dims])
    n_combos = combos.shape[0]
    block = _block_size(samples.values.shape[0], n_combos + 1)
    if block > 4 * _BLOCK:  # labels combine into too many rows (a tag of many values)
        if len(dims) > 1:
            return [stats_by_dimension(samples, include, [dim], percentiles)[0] for dim in dims]
        codes, n_labels = dims[0]
        request_label = np.full(samples.n_requests, n_labels, dtype=np.int64)
        request_label[members] = np.asarray(codes)[members]
        order = _LabelOrder(samples, request_label, n_labels)
        return [_row(samples, request_label, n_labels, order.counts, order, percentiles)]
    combo = np.full(samples.n_requests, n_combos, dtype=np.int64)  # excluded: the last index
    combo[members] = inverse
    table = _block_counts(samples, combo, n_combos + 1, block)
    out = []
    for d, (_, n_labels) in enumerate(dims):
        cumulative = np.cumsum(_by_label(table[:, :n_combos], combos[:, d], n_labels), axis=0)
        request_label = np.append(combos[:, d], n_labels)[combo]
        reader = _RankReader(samples, request_label, cumulative, block)
        out.append(_row(samples, request_label, n_labels, cumulative[-1], reader, percentiles))
    return out


def _row(samples: Samples, request_label: IntArray, n_labels: int, counts: FloatArray, reader: _RankReader | _LabelOrder,
         percentiles: Sequence[float]) -> list[Stats]:
    """The statistics of each label of one dimension (request_label: n_labels for excluded requests)."""
    means, stds = _moments_by_label(samples, request_label, n_labels)
    row = []
    for label in range(n_labels):
        count = round(float(counts[label]))
        if count == 0:
            row.append(Stats(0))
            continue
        low, high, gamma = linear_positions(count, percentiles)
        value = reader.values(label, np.unique(np.concatenate(([0, count - 1], low, high))))
        quantiles = lerp(np.array([value[r] for r in low]), np.array([value[r] for r in high]), gamma)
        row.append(Stats(count, float(means[label]), float(stds[label]), value[0], value[count - 1],
                         tuple(float(q) for q in quantiles)))
    return row


def blocks_by_label(samples: Samples, include: BoolArray, codes: IntArray, n_labels: int) -> list[Block]:
    """One summary block per label (request i has label codes[i]) over the requests in `include`."""
    return [s.block() for s in stats_by_dimension(samples, include, [(codes, n_labels)])[0]]


def block(samples: Samples, include: BoolArray) -> Block:
    """The summary block of the samples of the requests in `include`."""
    return blocks_by_label(samples, include, np.zeros(include.shape[0], dtype=np.int64), 1)[0]


def selection_stats(samples: Samples, include: BoolArray, percentiles: Sequence[float] = ()) -> Stats:
    """Statistics of the requests in `include`, with any percentiles (thresholds ask for p(75) and such)."""
    return stats_by_dimension(samples, include, [(np.zeros(include.shape[0], dtype=np.int64), 1)], percentiles)[0][0]


def _combinations(codes: list[IntArray], sizes: list[int]) -> tuple[IntArray, IntArray]:
    """The distinct label combinations (rows: one label per dimension) and each request's row."""
    if float(np.prod([max(size, 1) for size in sizes], dtype=np.float64)) < 2.0**62:
        packed = np.zeros(codes[0].shape[0], dtype=np.int64)
        for column, size in zip(codes, sizes, strict=True):  # mixed radix: one integer per combination
            packed *= size
            packed += column
        distinct, inverse = np.unique(packed, return_inverse=True)
        rows = np.empty((distinct.shape[0], len(sizes)), dtype=np.int64)
        for d in range(len(sizes) - 1, -1, -1):
            rows[:, d] = distinct % sizes[d]
            distinct //= sizes[d]
        return rows, inverse.reshape(-1)
    rows, inverse = np.unique(np.stack(codes, axis=1), axis=0, return_inverse=True)
    return rows, inverse.reshape(-1)


def _block_size(n_samples: int, width: int) -> int:
    block = _BLOCK
    while block < n_samples and (n_samples // block + 1) * width > _TABLE_CELLS:
        block *= 2
    return block


def _by_label(table: FloatArray, labels: IntArray, n_labels: int) -> FloatArray:
    """(blocks × labels): the columns of a (blocks × combinations) table summed by each combination's label."""
    order = np.argsort(labels, kind="stable")
    present, starts = np.unique(labels[order], return_index=True)
    out = np.zeros((table.shape[0], n_labels))
    if present.size:
        out[:, present] = np.add.reduceat(table[:, order], starts, axis=1)
    return out


def _block_counts(samples: Samples, combo: IntArray, width: int, block: int) -> FloatArray:
    """(blocks × width): the weight of each combination inside each block of `block` sorted samples,
    counted a slice of blocks at a time (small temporaries)."""
    n = samples.values.shape[0]
    n_blocks = -(-n // block)
    out = np.zeros((n_blocks, width))
    step = max(1, (1 << 20) // block)  # blocks per slice
    offset = np.arange(step * block, dtype=np.int64) // block * width  # the block's place in the table
    for first in range(0, n_blocks, step):
        last = min(first + step, n_blocks)
        lo, hi = first * block, min(last * block, n)
        key = np.take(combo, samples.owner[lo:hi])
        key += offset[: hi - lo]
        weights = None if samples.weights is None else samples.weights[lo:hi]
        counts = np.bincount(key, weights=weights, minlength=(last - first) * width)
        out[first:last] = counts.reshape(last - first, width)
    return out


def _moments_by_label(samples: Samples, request_label: IntArray, n_labels: int) -> tuple[FloatArray, FloatArray]:
    """Mean and population std per label from per-request moments (Chan et al.'s pairwise combination)."""
    mom = samples.moments
    use = (request_label < n_labels) & (mom.weight > 0)
    lab = request_label[use]
    weight, total, m2 = mom.weight[use], mom.total[use], mom.m2[use]
    w = np.bincount(lab, weights=weight, minlength=n_labels)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(lab, weights=total, minlength=n_labels) / w
        dev = total / weight - mean[lab]
        spread = np.bincount(lab, weights=m2 + weight * dev * dev, minlength=n_labels)
        std = np.sqrt(np.maximum(spread / w, 0.0))
    return mean, std


class _RankReader:
    """Values of given ranks within one label's sorted samples (see the module docstring)."""

    def __init__(self, samples: Samples, request_label: IntArray, cumulative: FloatArray, block: int) -> None:
        self.samples = samples
        self.request_label = request_label
        self.cumulative = cumulative
        self.block = block

    def values(self, label: int, ranks: IntArray) -> dict[int, float]:
        s = self.samples
        cum = self.cumulative[:, label]
        where = np.searchsorted(cum, ranks, side="right")
        out: dict[int, float] = {}
        for b in np.unique(where).tolist():
            lo = b * self.block
            hi = min(lo + self.block, s.values.shape[0])
            hits = np.flatnonzero(self.request_label[s.owner[lo:hi]] == label)
            before = cum[b - 1] if b else 0.0
            mine = ranks[where == b]
            if s.weights is None:
                at = hits[(mine - round(float(before))).astype(np.intp)]
            else:
                reach = before + np.cumsum(s.weights[lo:hi][hits])
                at = hits[np.searchsorted(reach, mine, side="right")]
            for rank, j in zip(mine.tolist(), at.tolist(), strict=True):
                out[rank] = float(s.values[lo + j])
        return out


class _LabelOrder:
    """Rank reader for a dimension of very many labels: each label's positions in the sorted order,
    gathered by one stable argsort of the per-sample label (ascending within each label)."""

    def __init__(self, samples: Samples, request_label: IntArray, n_labels: int) -> None:
        self.samples = samples
        label = request_label[samples.owner]
        self.order = np.argsort(label, kind="stable")
        self.starts = np.concatenate(([0], np.cumsum(np.bincount(label, minlength=n_labels + 1))))
        self.counts = np.bincount(label, weights=samples.weights, minlength=n_labels + 1)[:n_labels].astype(np.float64)

    def values(self, label: int, ranks: IntArray) -> dict[int, float]:
        s = self.samples
        mine = self.order[self.starts[label] : self.starts[label + 1]]
        if s.weights is None:
            at = mine[ranks]
        else:
            at = mine[np.searchsorted(np.cumsum(s.weights[mine]), ranks, side="right")]
        return {rank: float(s.values[j]) for rank, j in zip(ranks.tolist(), at.tolist(), strict=True)}
