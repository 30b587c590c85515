"""Evaluating thresholds (metrics.gate.thresholds) against a run, and against a baseline run.

A capacity search is judged the same way: its capacity.json stands where a summary would (`RunView`
with `summary` = that document, no records), and `capacity:*` queries read its `capacity` object.

Numbers come from `summary.json` whenever it holds them, so a gate reads exactly what the report shows.
Two kinds of question the summary cannot answer — a percentile other than p50/p90/p95/p99/p99.9, and a
filter on two bucket dimensions at once (the summary's buckets are one dimension each) — are answered
from the run's records (`metrics.gate.run_samples.RunSamples`, built lazily, same window and derivations).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from metrics.gate.thresholds import ANSWER_METRICS, CAPACITY_METRICS, Kind, Query, Threshold, compare
from metrics.results import float_or_none

if TYPE_CHECKING:  # the summary's view is imported when a run is judged, not with a gate planned at start-up
    from metrics.results import Bucket, Json, SummaryView

SUMMARY_PERCENTILES: dict[float, str] = {50.0: "p50", 90.0: "p90", 95.0: "p95", 99.0: "p99", 99.9: "p999"}


class NeedsRecords(LookupError):
    """The summary does not hold this number; the run's records do."""


class Measurer(Protocol):
    def value(self, query: Query) -> float | None: ...


@dataclass(slots=True)
class RunView:
    """One run as thresholds see it: its summary, and (lazily) its records for what the summary lacks."""

    summary: Mapping[str, Json]  # summary.json, or capacity.json (loadgen.sweep.gate: its TypedDict, checked)
    records: Callable[[], Measurer] | None = None
    _measurer: Measurer | None = field(default=None, repr=False)
    _view: SummaryView | None = field(default=None, repr=False)  # `summary` parsed once, on first use

    def value(self, query: Query) -> float | None:
        try:
            if query.metric in CAPACITY_METRICS:
                return summary_value(self.summary, query)
            if self._view is None:
                from metrics.results import SummaryView

                self._view = SummaryView.from_json(self.summary)
            return view_value(self._view, query)
        except NeedsRecords as exc:
            if self.records is None:
                raise NeedsRecords(f"{query.describe()}: {exc}, and this run's records are not available") from None
            if self._measurer is None:
                self._measurer = self.records()
            return self._measurer.value(query)


@dataclass(frozen=True, slots=True)
class Verdict:
    threshold: Threshold
    passed: bool
    value: float | None  # None: no data
    limit: float | None  # None: the baseline had no data
    baseline: float | None = None
    note: str = ""

    def line(self) -> str:
        """The console verdict, one shape for every threshold: what was measured and what it was held to.

        `PASS ttft:p(99)<500ms  measured 412.3 ms, limit 500 ms`
        `FAIL ttft:p(99) < baseline * 1.10  measured 612.3 ms, limit 550 ms (baseline 500 ms)`
        `FAIL ttft{cache:full}:p(95) < 200ms  measured no data, limit 200 ms  <why no data fails>`
        """
        t = self.threshold
        kind = t.query.kind
        measured = "no data" if self.value is None else format_value(kind, self.value)
        limit = "-" if self.limit is None else format_value(kind, self.limit)
        text = f"{'PASS' if self.passed else 'FAIL'} {t.text}  measured {measured}, limit {limit}"
        if t.needs_baseline:
            text += f" (baseline {'no data' if self.baseline is None else format_value(kind, self.baseline)})"
        return text + (f"  {self.note}" if self.note else "")


def format_value(kind: Kind, value: float) -> str:
    if kind == "duration":
        return f"{value * 1e3:.4g} ms" if abs(value) < 10 else f"{value:.4g} s"
    if kind == "fraction":
        return f"{value:.4g} ({value * 100:.2f}%)"
    if kind == "rate":
        return f"{value:.4g}/s"
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.4g}"


def evaluate(thresholds: Sequence[Threshold], run: RunView, baseline: RunView | None = None) -> list[Verdict]:
    """One verdict per threshold, in order. Raises NeedsRecords / ValueError when one cannot be judged
    at all (a relative threshold with no baseline run), which the CLI reports as a usage error."""
    return [evaluate_one(t, run, baseline) for t in thresholds]


def evaluate_one(t: Threshold, run: RunView, baseline: RunView | None) -> Verdict:
    value = run.value(t.query)
    base_value = None
    if t.needs_baseline:
        if baseline is None:
            raise ValueError(f"threshold {t.text!r} is relative to a baseline: pass --baseline DIR")
        base_value = baseline.value(t.query)
    limit = t.limit(base_value)
    if value is None:
        return Verdict(t, t.nodata_pass, None, limit, base_value,
                       "no data (nodata=pass)" if t.nodata_pass
                       else "no data: nothing was measured for this metric (append '| nodata=pass' to allow that)")
    if limit is None:
        return Verdict(t, t.nodata_pass, value, None, None,
                       "baseline has no data" + (" (nodata=pass)" if t.nodata_pass else ""))
    return Verdict(t, compare(value, t.op, limit), value, limit, base_value)


def _scope(view: SummaryView, query: Query) -> Bucket | SummaryView | None:
    """The part of the summary a query reads: the whole run, or its one bucket (None: nobody in it)."""
    if not query.filters:
        return view
    if len(query.filters) > 1:
        raise NeedsRecords("a filter on two bucket dimensions at once is not in summary.json")
    dim, label = query.filters[0]
    for bucket in view.buckets:
        if bucket.dimension == dim and bucket.label == label:
            return bucket
    return None


def summary_value(summary: Mapping[str, Json], query: Query) -> float | None:
    """The queried number from a summary.json dict (or a capacity.json for `capacity:*`); None when there
    is no data for it."""
    if query.metric in CAPACITY_METRICS:
        section = summary.get(query.metric)
        return float_or_none(section.get(query.agg)) if isinstance(section, dict) else None
    from metrics.results import SummaryView

    return view_value(SummaryView.from_json(summary), query)


def view_value(view: SummaryView, query: Query) -> float | None:
    """The queried number from a run's summary (its typed view); None when there is no data for it."""
    from metrics.results import Stats, SummaryView

    scope = _scope(view, query)
    if scope is None:
        return None
    if query.latency_key is not None:
        holder = scope.blocks(query.section) or {}
        if query.metric in ANSWER_METRICS and query.latency_key not in holder:  # a run without reasoning or
            # tool calls: its requests still have a TTFO (and zero tool calls), which the records give
            raise NeedsRecords(f"{query.metric} is in summary.json only when a request reasoned or called a tool")
        block = holder.get(query.latency_key) or Stats()
        key = query.agg
        if query.percentile is not None:
            if query.percentile not in SUMMARY_PERCENTILES:
                raise NeedsRecords(f"p({query.percentile:g}) is not in summary.json")
            key = SUMMARY_PERCENTILES[query.percentile]
        if key == "count":
            return float(block.count or 0)
        return float_or_none(block.stat(key)) if block.count else None
    if query.metric == "throughput":
        return float_or_none(view.throughput.figure(query.agg))
    if isinstance(scope, SummaryView):
        goodput = scope.goodput
        measured, failed = float(view.requests.in_window), float(view.requests.in_window_failed)
    else:
        goodput = scope.goodput
        measured, failed = float(scope.measured or 0), float(scope.failed or 0)
    if query.metric == "goodput":
        if goodput is None:
            return None
        if query.agg == "count":
            return float_or_none(goodput.good)
        return float_or_none(goodput.attainment if query.agg == "attainment" else goodput.requests_per_s)
    if query.metric == "errors":
        if query.agg == "count":
            return failed
        return failed / measured if measured else None
    return measured  # requests:count


def failed(verdicts: Sequence[Verdict]) -> list[Verdict]:
    return [v for v in verdicts if not v.passed]
