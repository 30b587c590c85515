"""Labelled histograms and counters that take whole numpy batches, and the families they expose.

prometheus_client's `Histogram.observe` takes one value at a time under a lock (a few µs each); a run
produces one ITL sample per streamed chunk, so the live exporter bins whole batches with one
`searchsorted` + `bincount` instead and yields the families from a snapshot at scrape time (the
custom-collector pattern). Thread safety is the caller's: `RunMetrics` holds one lock around both.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric

LabelValues = tuple[str, ...]
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def _le(bound: float) -> str:
    return "+Inf" if bound == float("inf") else repr(float(bound))


class BatchHistogram:
    """One histogram family: per label set, a count per bucket (not cumulative) and the sum."""

    def __init__(self, name: str, doc: str, label_names: Sequence[str], bounds: Sequence[float]) -> None:
        self.name = name
        self.doc = doc
        self.label_names = tuple(label_names)
        self.bounds = np.asarray(bounds, dtype=np.float64)
        if self.bounds.size == 0 or np.any(np.diff(self.bounds) <= 0):
            raise ValueError(f"{name}: bucket bounds must be non-empty and strictly increasing")
        self._counts: dict[LabelValues, IntArray] = {}
        self._sums: dict[LabelValues, float] = {}

    def observe_batch(self, label_ids: IntArray, values: FloatArray, labels: Sequence[LabelValues],
                      weights: IntArray | None = None) -> None:
        """Add `values[i]` under `labels[label_ids[i]]`, `weights[i]` times (default once); NaN values
        and weight 0 are skipped (no sample)."""
        keep = ~np.isnan(values)
        if weights is not None:
            keep &= weights > 0
        if not keep.all():
            values, label_ids = values[keep], label_ids[keep]
            weights = None if weights is None else weights[keep]
        if values.size == 0:
            return
        n_buckets = self.bounds.size + 1
        # side="left": a value equal to a bound belongs to that bound's bucket (le means <=).
        bucket = np.searchsorted(self.bounds, values, side="left")
        grid = np.bincount(label_ids * n_buckets + bucket, weights=weights, minlength=len(labels) * n_buckets)
        sums = np.bincount(label_ids, weights=values if weights is None else values * weights, minlength=len(labels))
        self._add(grid.reshape(len(labels), n_buckets), sums, labels)

    def observe_sorted(self, values: FloatArray, label_ids: IntArray, labels: Sequence[LabelValues],
                       weights: npt.NDArray[np.integer[Any]] | None = None) -> None:
        """`observe_batch` for ascending values (metrics.latency.samples.Samples): each bucket is one run of
        positions, so no per-sample search. Label ids run to len(labels) inclusive; that last one means
        "not observed"."""
        n_labels = len(labels)
        cuts = [0, *np.searchsorted(values, self.bounds, side="right").tolist(), values.shape[0]]
        grid = np.zeros((n_labels + 1, self.bounds.size + 1))
        ids = label_ids
        for b, (lo, hi) in enumerate(itertools.pairwise(cuts)):  # bucket b: bounds[b-1] < v <= bounds[b]
            if hi > lo:
                w = None if weights is None else weights[lo:hi]
                grid[:, b] = np.bincount(ids[lo:hi], weights=w, minlength=n_labels + 1)
        sums = np.bincount(ids, weights=values if weights is None else values * weights, minlength=n_labels + 1)
        self._add(grid[:n_labels], sums[:n_labels], labels)

    def _add(self, grid: npt.NDArray[Any], sums: npt.NDArray[Any], labels: Sequence[LabelValues]) -> None:
        """Add per-label bucket counts (labels × buckets, not cumulative) and sums; empty labels are skipped."""
        for i in np.flatnonzero(grid.sum(axis=1) > 0).tolist():
            key = labels[i]
            row = np.rint(grid[i]).astype(np.int64)
            if key in self._counts:
                self._counts[key] += row
                self._sums[key] += float(sums[i])
            else:
                self._counts[key] = row
                self._sums[key] = float(sums[i])

    def family(self) -> HistogramMetricFamily:
        fam = HistogramMetricFamily(self.name, self.doc, labels=self.label_names)
        edges = [*self.bounds.tolist(), float("inf")]
        for key in sorted(self._counts):
            cumulative = np.cumsum(self._counts[key]).tolist()
            buckets = [(_le(b), float(c)) for b, c in zip(edges, cumulative, strict=True)]
            fam.add_metric(list(key), buckets, self._sums[key])
        return fam


class BatchCounter:
    """One counter family (`name` without `_total`; the exposition adds it)."""

    def __init__(self, name: str, doc: str, label_names: Sequence[str]) -> None:
        self.name = name
        self.doc = doc
        self.label_names = tuple(label_names)
        self._values: dict[LabelValues, float] = {}

    def ensure(self, key: LabelValues) -> None:
        """Expose the series at 0 before its first increment, so rate() has a starting point."""
        self._values.setdefault(key, 0.0)

    def inc(self, key: LabelValues, amount: float = 1.0) -> None:
        if amount < 0:
            raise ValueError(f"{self.name}: a counter only goes up, got {amount}")
        self._values[key] = self._values.get(key, 0.0) + amount

    def inc_batch(self, label_ids: IntArray, amounts: FloatArray, labels: Sequence[LabelValues]) -> None:
        """Add `amounts[i]` under `labels[label_ids[i]]`; NaN amounts (unknown) are skipped."""
        keep = ~np.isnan(amounts)
        totals = np.bincount(label_ids[keep], weights=amounts[keep], minlength=len(labels))
        present = np.bincount(label_ids[keep], minlength=len(labels))
        for i in np.flatnonzero(present).tolist():
            self.inc(labels[i], float(totals[i]))

    def value(self, key: LabelValues) -> float:
        return self._values.get(key, 0.0)

    def family(self) -> CounterMetricFamily:
        fam = CounterMetricFamily(self.name, self.doc, labels=self.label_names)
        for key in sorted(self._values):
            fam.add_metric(list(key), self._values[key])
        return fam


def families(instruments: Sequence[BatchHistogram | BatchCounter]) -> Iterator[Metric]:
    for instrument in instruments:
        yield instrument.family()
