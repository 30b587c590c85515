"""`goodput compare`: candidate vs one or several baseline runs, per metric and bucket, with bootstrap
confidence intervals and, given repeated baseline runs, their run-to-run spread.

The question a compare answers is "did this change, or is it noise?". For each row (a statistic such as
`ttft:p(99)` over the whole run or one bucket) it reports baseline, candidate, the change, and a
confidence interval for the change from a bootstrap over *requests*: each resample draws the run's
measured requests with replacement (a multinomial count per request) and recomputes the statistic over
their samples — all of a request's ITL gaps travel with it, so pooled metrics keep their within-request
correlation. Every run is resampled independently; with several baseline runs (repeats of one
configuration) the baseline is the mean of their statistics, in every resample too. The interval is the
percentile interval of candidate − baseline. Seeded: the same inputs give the same table.

That interval covers sampling noise within the runs, not a whole run shifted by a busy machine; the
rule that decides a flag (metrics.gate.compare_rule) adds the baselines' run-to-run spread and a minimum
practical change. Rows get no interval (and are never flagged) where a bootstrap says nothing: min and
max, fewer than MIN_REQUESTS requests, or a percentile with fewer than MIN_TAIL samples beyond it (p99
needs 500 samples). With many rows, some intervals would exclude zero by chance alone, so the confidence
is Bonferroni-adjusted: each of m rows gets 1 − (1 − confidence)/m, keeping the chance of any false
flag from sampling noise in the whole table at most 1 − confidence. Rates over the window
(goodput:rate, throughput) are not per-request statistics: they are shown without an interval and never
flagged.

Cost: O(resamples × samples) per row and run; ITL rows of very large runs are the expensive ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from metrics.gate.compare_rule import (
    DEFAULT_MIN_CHANGE,
    DEFAULT_MIN_CHANGE_ABS_S,
    Flag,
    judge_change,
    practical_floor,
    run_spread_half_width,
)
from metrics.gate.run_samples import RunSamples, Selection, latency_stat, query_percentiles
from metrics.gate.thresholds import Query, parse_threshold

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

DEFAULT_STATS: tuple[str, ...] = (
    "ttft:p(50)", "ttft:p(99)", "itl:p(50)", "itl:p(99)", "tpot:p(50)", "tpot:p(99)", "e2e:p(99)",
    "goodput:attainment", "errors:rate", "throughput:output_tokens_per_s",
)
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
    why: str = ""  # why a row with an interval is not flagged (metrics.gate.compare_rule)
    spread: float | None = None  # half-width of the baselines' run-to-run band (>= 2 baseline runs)
    base_runs: tuple[float, ...] = ()  # the statistic of each baseline run (base is their mean)

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
    if query.latency_key is not None:
        return query.metric != "fluidity"
    return query.metric == "errors"


def bootstrappable(query: Query) -> bool:
    """Per-request statistics; min and max are not (a bootstrap cannot see past the sample's extremes)."""
    if query.latency_key is not None:
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
    if query.latency_key is not None:
        samples = run.samples[query.latency_key]
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
    if query.latency_key is not None:
        stats = run.latency_stats(query.latency_key, sel, query_percentiles(query))
        return latency_stat(stats, query), stats.count
    return run.value(query), int(sel.measured.sum())


def _scopes(runs: Sequence[RunSamples]) -> list[tuple[str, tuple[tuple[str, str], ...]]]:
    """The whole run, then every bucket measured in every run that is not simply the whole run again."""
    scopes: list[tuple[str, tuple[tuple[str, str], ...]]] = [("all", ())]
    first = runs[0]
    for name, dim in first.dimensions.items():
        if any(name not in run.dimensions for run in runs[1:]):
            continue
        for label in dim.labels:
            flt = ((name, label),)
            measured = [run.select(flt).measured for run in runs]
            if not all(m.any() for m in measured):
                continue
            if all(np.array_equal(m, run.window.measured) for m, run in zip(measured, runs, strict=True)):
                continue
            scopes.append((f"{name}={label}", flt))
    return scopes


@dataclass(slots=True)
class _Pending:
    """A row before the Bonferroni adjustment is known (it depends on how many rows have intervals)."""

    scope: str
    query: Query
    base_runs: list[float | None]
    cand: float | None
    base_n: int
    cand_n: int
    deltas: FloatArray | None
    note: str

    @property
    def base(self) -> float | None:
        if not self.base_runs or any(v is None for v in self.base_runs):
            return None
        return float(np.mean([v for v in self.base_runs if v is not None]))


def compare_runs(
    base: RunSamples | Sequence[RunSamples],
    cand: RunSamples,
    stats: Sequence[str] = DEFAULT_STATS,
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
    min_change: float = DEFAULT_MIN_CHANGE,
    min_change_abs: float = DEFAULT_MIN_CHANGE_ABS_S,
    seed: int = 0,
    buckets: bool = True,
) -> list[Row]:
    """Every (scope, statistic) row; `base` is one baseline run or several runs of one configuration.
    See the module docstring for the interval and metrics.gate.compare_rule for the flags."""
    bases = [base] if isinstance(base, RunSamples) else list(base)
    if not bases:
        raise ValueError("compare needs at least one baseline run")
    if resamples < 100:
        raise ValueError(f"resamples must be >= 100, got {resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if min_change < 0 or min_change_abs < 0:
        raise ValueError("the minimum change must not be negative")
    queries = [parse_stat(s) for s in stats]
    rng = np.random.default_rng(seed)
    pending: list[_Pending] = []
    for scope, flt in _scopes([*bases, cand]) if buckets else [("all", ())]:
        for q in queries:
            if flt and q.metric == "throughput":
                continue
            q = Query(q.metric, q.agg, q.percentile, flt, q.kind)
            bsels, csel = [b.select(flt) for b in bases], cand.select(flt)
            bpoints = [_point(b, q, sel) for b, sel in zip(bases, bsels, strict=True)]
            c, c_samples = _point(cand, q, csel)
            bns = [int(sel.measured.sum()) for sel in bsels]
            cn = int(csel.measured.sum())
            deltas, note = None, ""
            if not bootstrappable(q):
                note = "no interval for this statistic"
            elif not (enough_for_interval(q, c_samples, cn)
                      and all(enough_for_interval(q, bs, bn) for (_, bs), bn in zip(bpoints, bns, strict=True))):
                note = "too few samples for an interval"
            else:
                resampled_cand = resample_stat(cand, q, csel, resamples, rng)
                resampled_base = np.mean([resample_stat(b, q, sel, resamples, rng)
                                          for b, sel in zip(bases, bsels, strict=True)], axis=0)
                deltas = resampled_cand - resampled_base
            pending.append(_Pending(scope, q, [v for v, _ in bpoints], c, sum(bns), cn, deltas, note))
    tests = sum(1 for p in pending if p.deltas is not None)
    alpha = (1.0 - confidence) / max(tests, 1)
    rows = []
    for p in pending:
        ci = None
        if p.deltas is not None and np.count_nonzero(~np.isnan(p.deltas)) >= resamples // 2:
            lo, hi = np.nanpercentile(p.deltas, [100 * alpha / 2, 100 * (1 - alpha / 2)])
            ci = (float(lo), float(hi))
        rows.append(_row(p, ci, 1.0 - alpha if ci is not None else None, confidence, min_change, min_change_abs))
    return rows


def _row(p: _Pending, ci: tuple[float, float] | None, conf: float | None, confidence: float,
         min_change: float, min_change_abs: float) -> Row:
    b, c = p.base, p.cand
    runs = tuple(v for v in p.base_runs if v is not None) if b is not None else ()
    spread = run_spread_half_width(runs, confidence)
    flag: Flag = ""
    why = ""
    note = p.note or ("" if b is not None else "no data in a baseline run")
    if ci is not None and b is not None and c is not None:
        floor = practical_floor(b, duration=p.query.kind == "duration", min_change=min_change,
                                min_change_abs_s=min_change_abs)
        flag, why = judge_change(c - b, ci, spread=spread, floor=floor, worse_when_higher=higher_is_worse(p.query))
    return Row(p.query, p.scope, b, c, p.base_n, p.cand_n, ci, conf, flag, note, why, spread, runs)
