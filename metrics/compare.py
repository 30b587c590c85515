"""`goodput compare`: candidate vs baseline, per metric and bucket, with bootstrap confidence intervals.

The question a compare answers is "did this change, or is it noise?". For each row (a statistic such as
`ttft:p(99)` over the whole run or one bucket) it reports baseline, candidate, the change, and a
confidence interval for the change from a bootstrap over *requests*: each resample draws the run's
measured requests with replacement (a multinomial count per request) and recomputes the statistic over
their samples — all of a request's ITL gaps travel with it, so pooled metrics keep their within-request
correlation. Baseline and candidate are resampled independently; the interval is the percentile
interval of candidate − baseline. Seeded: the same inputs give the same table.

A row is flagged only when its interval excludes zero (and the relative change is at least
`min_change`). Rows get no interval (and are never flagged) where a bootstrap says nothing: min and max,
fewer than MIN_REQUESTS requests, or a percentile with fewer than MIN_TAIL samples beyond it (p99 needs
500 samples). With many rows, some intervals would exclude zero by chance alone, so the confidence is
Bonferroni-adjusted: each of m rows gets 1 − (1 − confidence)/m, keeping the chance of any false flag
in the whole table at most 1 − confidence. Rates over the window (goodput:rate, throughput) are not
per-request statistics: they are shown without an interval and never flagged.

Cost: O(resamples × samples) per row; ITL rows of very large runs are the expensive ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from metrics.run_samples import RunSamples, Selection, latency_stat, query_percentiles
from metrics.thresholds import LATENCY_METRICS, Query, parse_threshold

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

DEFAULT_STATS: tuple[str, ...] = (
    "ttft:p(50)", "ttft:p(99)", "itl:p(50)", "itl:p(99)", "tpot:p(50)", "tpot:p(99)", "e2e:p(99)",
    "goodput:attainment", "errors:rate", "throughput:output_tokens_per_s",
)
Flag = Literal["", "regression", "improvement"]
MIN_REQUESTS = 10
MIN_TAIL = 5


@dataclass(frozen=True, slots=True)
class Row:
    query: Query
    scope: str  # "all" or "dimension=label"
    base: float | None
    cand: float | None
    base_n: int  # measured requests in scope
    cand_n: int
    ci: tuple[float, float] | None  # of cand − base
    confidence: float | None  # the per-row (adjusted) confidence of `ci`
    flag: Flag
    note: str = ""  # why there is no interval

    @property
    def delta(self) -> float | None:
        return None if self.base is None or self.cand is None else self.cand - self.base

    @property
    def relative(self) -> float | None:
        d = self.delta
        return None if d is None or not self.base else d / abs(self.base)


def parse_stat(text: str) -> Query:
    """`ttft:p(99)` → Query (the threshold grammar without a condition). No filter: compare already
    makes one row per bucket, and a filter here would be silently replaced by each bucket's."""
    query = parse_threshold(f"{text} > 0").query
    if query.filters:
        raise ValueError(f"--stat {text!r}: compare takes no {{filter}}; it reports every bucket itself")
    return query


def higher_is_worse(query: Query) -> bool:
    if query.metric in LATENCY_METRICS:
        return query.metric != "fluidity"
    return query.metric == "errors"


def bootstrappable(query: Query) -> bool:
    """Per-request statistics; min and max are not (a bootstrap cannot see past the sample's extremes)."""
    if query.metric in LATENCY_METRICS:
        return query.agg not in ("min", "max", "count")
    return (query.metric, query.agg) in {("goodput", "attainment"), ("errors", "rate")}


def enough_for_interval(query: Query, samples: int, requests: int) -> bool:
    """Whether a bootstrap interval means anything here: at least MIN_REQUESTS requests, and for a
    percentile at least MIN_TAIL samples beyond it on either side. The bootstrap of p99 over 40 samples
    only ever reshuffles the two largest values, so its interval is far too narrow and would flag noise."""
    if requests < MIN_REQUESTS or samples < MIN_REQUESTS:
        return False
    if query.percentile is None:
        return True
    q = query.percentile / 100.0
    return min(q, 1.0 - q) * samples >= MIN_TAIL


def resample_stat(run: RunSamples, query: Query, sel: Selection, resamples: int, rng: np.random.Generator) -> FloatArray:
    """The statistic over `resamples` bootstrap resamples of the selected requests (NaN: empty resample)."""
    units = np.flatnonzero(sel.measured)
    m = units.size
    out = np.full(resamples, np.nan)
    if m == 0:
        return out
    local = np.full(run.frame.n, -1, dtype=np.int64)
    local[units] = np.arange(m)
    if query.metric in LATENCY_METRICS:
        samples = run.samples[LATENCY_METRICS[query.metric]]
        keep = sel.sampled[samples.owner]
        values = samples.values[keep]  # already ascending
        owner = local[samples.owner[keep]]
        repeats = None if samples.weights is None else samples.weights[keep]
    else:
        owner = np.arange(m)
        hit = run.good if query.metric == "goodput" else run.failed
        values = hit[units].astype(np.float64)
        repeats = None
    if values.size == 0:
        return out
    batch = max(1, min(resamples, 4_000_000 // max(values.size, m)))
    uniform = np.full(m, 1.0 / m)
    for start in range(0, resamples, batch):
        b = min(batch, resamples - start)
        weights = rng.multinomial(m, uniform, size=b)[:, owner]
        if repeats is not None:  # an ITL-per-token entry stands for k samples of its request
            weights *= repeats
        out[start : start + b] = weighted_stat(values, weights, query)
    return out


def weighted_stat(sorted_values: FloatArray, weights: IntArray, query: Query) -> FloatArray:
    """Per row of `weights`: the statistic of the sample that repeats sorted_values[j] weights[r, j] times
    (numpy 'linear' percentiles, as the summary), without materialising the repeats."""
    total: FloatArray = weights.sum(axis=1).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        if query.agg == "count":
            return total
        if query.percentile is None and query.agg in ("mean", "attainment", "rate", "std"):
            mean = (weights @ sorted_values) / total
            if query.agg != "std":
                return np.asarray(mean, dtype=np.float64)
            return np.asarray(np.sqrt(np.maximum((weights @ sorted_values**2) / total - mean**2, 0.0)))
        cum = np.cumsum(weights, axis=1)
        last = sorted_values.size - 1
        if query.agg == "min":
            pos_lo, frac, pos_hi = np.zeros_like(total), np.zeros_like(total), np.zeros_like(total)
        elif query.agg == "max":
            pos_lo = pos_hi = np.maximum(total - 1, 0)
            frac = np.zeros_like(total)
        else:
            h = (total - 1) * (query.percentile or 0.0) / 100.0
            pos_lo = np.floor(h)
            frac = h - pos_lo
            pos_hi = np.minimum(pos_lo + 1, total - 1)
        lo = np.minimum((cum <= pos_lo[:, None]).sum(axis=1), last)
        hi = np.minimum((cum <= pos_hi[:, None]).sum(axis=1), last)
        result = sorted_values[lo] + frac * (sorted_values[hi] - sorted_values[lo])
    return np.asarray(np.where(total > 0, result, np.nan), dtype=np.float64)


def _point(run: RunSamples, query: Query, sel: Selection) -> tuple[float | None, int]:
    """The statistic over the selection and the number of samples behind it."""
    if query.metric in LATENCY_METRICS:
        stats = run.latency_stats(LATENCY_METRICS[query.metric], sel, query_percentiles(query))
        return latency_stat(stats, query), stats.count
    return run.value(query), int(sel.measured.sum())


def _scopes(base: RunSamples, cand: RunSamples) -> list[tuple[str, tuple[tuple[str, str], ...]]]:
    """The whole run, then every bucket measured in both runs that is not simply the whole run again."""
    scopes: list[tuple[str, tuple[tuple[str, str], ...]]] = [("all", ())]
    for name, dim in base.dimensions.items():
        other = cand.dimensions.get(name)
        if other is None:
            continue
        for label in dim.labels:
            flt = ((name, label),)
            b, c = base.select(flt).measured, cand.select(flt).measured
            if not b.any() or not c.any():
                continue
            if np.array_equal(b, base.window.measured) and np.array_equal(c, cand.window.measured):
                continue
            scopes.append((f"{name}={label}", flt))
    return scopes


def compare_runs(
    base: RunSamples,
    cand: RunSamples,
    stats: Sequence[str] = DEFAULT_STATS,
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
    min_change: float = 0.0,
    seed: int = 0,
    buckets: bool = True,
) -> list[Row]:
    """Every (scope, statistic) row; see the module docstring for the interval and the flags."""
    if resamples < 100:
        raise ValueError(f"resamples must be >= 100, got {resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    queries = [parse_stat(s) for s in stats]
    rng = np.random.default_rng(seed)
    pending: list[tuple[str, Query, float | None, float | None, int, int, FloatArray | None, str]] = []
    for scope, flt in _scopes(base, cand) if buckets else [("all", ())]:
        for q in queries:
            if flt and q.metric == "throughput":
                continue
            q = Query(q.metric, q.agg, q.percentile, flt, q.kind)
            bs, cs = base.select(flt), cand.select(flt)
            (b, b_samples), (c, c_samples) = _point(base, q, bs), _point(cand, q, cs)
            bn, cn = int(bs.measured.sum()), int(cs.measured.sum())
            deltas, note = None, ""
            if not bootstrappable(q):
                note = "no interval for this statistic"
            elif not (enough_for_interval(q, b_samples, bn) and enough_for_interval(q, c_samples, cn)):
                note = "too few samples for an interval"
            else:
                deltas = resample_stat(cand, q, cs, resamples, rng) - resample_stat(base, q, bs, resamples, rng)
            pending.append((scope, q, b, c, bn, cn, deltas, note))
    tests = sum(1 for p in pending if p[6] is not None)
    alpha = (1.0 - confidence) / max(tests, 1)
    rows = []
    for scope, q, b, c, bn, cn, deltas, note in pending:
        ci = None
        if deltas is not None and np.count_nonzero(~np.isnan(deltas)) >= resamples // 2:
            lo, hi = np.nanpercentile(deltas, [100 * alpha / 2, 100 * (1 - alpha / 2)])
            ci = (float(lo), float(hi))
        rows.append(_row(q, scope, b, c, bn, cn, ci, 1.0 - alpha if ci is not None else None, min_change, note))
    return rows


def _row(q: Query, scope: str, b: float | None, c: float | None, bn: int, cn: int,
         ci: tuple[float, float] | None, conf: float | None, min_change: float, note: str) -> Row:
    flag: Flag = ""
    if ci is not None and b is not None and c is not None and (ci[0] > 0 or ci[1] < 0):
        rel = abs(c - b) / abs(b) if b else float("inf")
        if rel >= min_change:
            flag = "regression" if (c > b) == higher_is_worse(q) else "improvement"
    return Row(q, scope, b, c, bn, cn, ci, conf, flag, note)
