"""A run's per-request samples, selectable by any combination of bucket filters.

`summary.json` holds one latency block per single bucket dimension and a fixed set of percentiles;
thresholds that ask for more (`ttft{prompt_bucket:2k-8k,cache:none}:p(95)`, `ttft:p(75)`) and the
bootstrap of `goodput compare` need the samples themselves. They come from the same derivation as the
summary (`metrics.summary.build`'s per-request pass over a RequestFrame, the same measurement window and
bucket dimensions), so a number read here equals the one in summary.json wherever both exist.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from metrics.gate.thresholds import Query
from metrics.latency import Samples, Stats, selection_stats
from metrics.records import ERROR, OK, RequestFrame
from metrics.results import float_or_none
from metrics.summary import (
    SummaryConfig,
    bucket_dimensions,
    derive_per_request,
    measurement_window,
    throughput,
)

BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]


@dataclass(slots=True)
class Selection:
    """The requests a query covers: measured ones in the filtered buckets."""

    measured: BoolArray
    sampled: BoolArray  # measured and status ok: the ones that contribute latency samples


class RunSamples:
    """Per-request values of one run (see the module docstring). Implements threshold_eval.Measurer."""

    def __init__(self, frame: RequestFrame, config: SummaryConfig) -> None:
        self.frame = frame
        self.window = measurement_window(
            frame, warmup_s=config.warmup_s, cooldown_s=config.cooldown_s, schedule_end_s=config.schedule_end_s
        )
        self.ok = frame.status == OK
        self.failed = frame.status == ERROR
        per = derive_per_request(frame, config, self.window.measured & self.ok, answers=True)
        self.samples: dict[str, Samples] = per.samples
        self.good: BoolArray = per.good
        self.dimensions = {d.name: d for d in bucket_dimensions(frame, config)}

    def select(self, filters: tuple[tuple[str, str], ...]) -> Selection:
        """Measured requests in every filtered bucket; an unknown dimension or label selects nobody."""
        mask = self.window.measured.copy()
        for dim_name, label in filters:
            dim = self.dimensions.get(dim_name)
            if dim is None or label not in dim.labels:
                mask[:] = False
                break
            mask &= dim.codes == dim.labels.index(label)
        return Selection(measured=mask, sampled=mask & self.ok)

    def latency_stats(self, metric_key: str, selection: Selection, percentiles: tuple[float, ...] = ()) -> Stats:
        """Statistics of one latency metric (seconds or unitless) over the selection."""
        return selection_stats(self.samples[metric_key], selection.sampled, percentiles)

    def value(self, query: Query) -> float | None:
        sel = self.select(query.filters)
        if query.latency_key is not None:
            return latency_stat(self.latency_stats(query.latency_key, sel, query_percentiles(query)), query)
        measured = int(sel.measured.sum())
        if query.metric == "throughput":
            return float_or_none(throughput(self.frame, self.window).figure(query.agg))
        if query.metric == "requests":
            return float(measured)
        if query.metric == "errors":
            failed = int((sel.measured & self.failed).sum())
            if query.agg == "count":
                return float(failed)
            return failed / measured if measured else None
        good = int((sel.measured & self.good).sum())
        if query.agg == "count":
            return float(good)
        if query.agg == "attainment":
            return good / measured if measured else None
        duration = self.window.duration_s
        return good / duration if duration and measured else None


def query_percentiles(query: Query) -> tuple[float, ...]:
    return () if query.percentile is None else (query.percentile,)


def latency_stat(stats: Stats, query: Query) -> float | None:
    """One aggregation of a latency metric's statistics, as the summary computes it (None: no samples);
    `stats` must hold the query's percentile (query_percentiles)."""
    if query.agg == "count":
        return float(stats.count)
    if stats.count == 0:
        return None
    if query.percentile is not None:
        return stats.quantiles[0]
    if query.agg in ("mean", "std", "min", "max"):
        value: float | None = getattr(stats, query.agg)
        return value
    raise ValueError(f"unknown latency aggregation {query.agg!r}")
