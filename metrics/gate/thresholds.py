"""Thresholds: k6-style pass conditions over a run's summary, parsed and checked before any request.

Grammar (spaces are free; the expression is the *pass* condition)::

    METRIC[{FILTER,...}]:AGG OP LIMIT [| nodata=pass]

    LIMIT  := NUMBER[UNIT] | baseline | baseline * NUMBER | baseline + NUMBER[UNIT] | baseline - NUMBER[UNIT]
    FILTER := KEY:LABEL     KEY = prompt_bucket | output_bucket | cache | turn | model | images
                            | any workload tag key
                            (or tag:KEY:LABEL for a tag named like a bucket dimension)

Examples: `ttft:p(99)<500ms`, `tpot:avg<40ms`, `ttfo:p(95)<2s`, `reasoning_tokens:p(99)<4000`,
`goodput:attainment>=0.95`, `errors:rate<1%`, `throughput:output_tokens_per_s>1000`,
`ttft{prompt_bucket:2k-8k,cache:none}:p(95)<2s`, `ttft{model:lora-a}:p(99)<1s`,
`ttft:p(99) < baseline * 1.10`, `goodput:attainment >= baseline - 0.02`.

`capacity:*` thresholds (`capacity:rate >= 6`, `capacity:rate >= baseline * 0.95`) judge the result of a
capacity search (`goodput capacity`, its capacity.json), not a run: a run refuses them (`check_labels`).

Units: durations take `us`, `ms` or `s`; a bare number on a duration is **seconds**, as everywhere in
goodput (`--slo ttft=0.5` is 500 ms) — not k6's milliseconds. Fractions (attainment, error rate,
fluidity) take a bare number or `%`. Rates and counts take bare numbers only.

No data: a threshold over an empty metric (no samples, no measured request, a bucket nobody fell in)
**fails** — k6 passes `p(95)<500` when nothing succeeded, because a percentile of nothing reads as 0.
A threshold that may legitimately see nothing opts out with the suffix `| nodata=pass`.

Everything a user can get wrong is rejected by `parse_threshold` with a message naming the mistake;
bucket labels are checked against the run's bucket edges by `check_labels`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from metrics.summary import CACHE_CLASSES, IMAGE_LABELS, TURN_LABELS, range_labels
from metrics.units import parse_duration

Kind = Literal["duration", "fraction", "rate", "count"]
Op = Literal["<", "<=", ">", ">=", "==", "!="]
OPS: tuple[Op, ...] = ("<=", ">=", "==", "!=", "<", ">")

# Latency metrics: threshold name → summary["latency"] key. Aggregations over their latency block.
LATENCY_METRICS: dict[str, str] = {
    "ttft": "ttft_s",
    "ttft_from_schedule": "ttft_from_schedule_s",
    "itl": "itl_s",
    "itl_token": "itl_token_s",
    "tpot": "tpot_s",
    "e2e": "e2e_s",
    "e2e_close": "e2e_close_s",
    "e2e_from_schedule": "e2e_from_schedule_s",
    "dispatch_lag": "dispatch_lag_s",
    "max_itl": "max_itl_s",
    "fluidity": "fluidity",
}
# Reasoning and tool-call metrics (docs/metrics.md#reasoning-and-tool-calls): threshold name → (summary
# section, block key, kind). summary.json holds them only when some request reasoned or called a tool (or
# with a TTFO SLO); otherwise they are computed from the records, where every request may still have a TTFO.
ANSWER_METRICS: dict[str, tuple[str, str, Kind]] = {
    "ttfo": ("latency", "ttfo_s", "duration"),
    "reasoning_time": ("latency", "reasoning_time_s", "duration"),
    "tool_call": ("latency", "tool_call_s", "duration"),
    "tool_call_done": ("latency", "tool_call_done_s", "duration"),
    "reasoning_tokens": ("reasoning", "reasoning_tokens", "count"),
    "answer_tokens": ("reasoning", "answer_tokens", "count"),
    "tool_calls": ("tool_calls", "calls_per_request", "count"),
}
BLOCK_AGGS: dict[str, str] = {"avg": "mean", "mean": "mean", "min": "min", "max": "max", "med": "p50",
                              "std": "std", "count": "count"}
# Request-level metrics: metric → {aggregation: kind of number}.
REQUEST_METRICS: dict[str, dict[str, Kind]] = {
    "goodput": {"attainment": "fraction", "rate": "rate", "count": "count"},
    "errors": {"rate": "fraction", "count": "count"},
    "requests": {"count": "count"},
    "throughput": {"requests_per_s": "rate", "output_tokens_per_s": "rate", "total_tokens_per_s": "rate",
                   "offered_rps": "rate", "achieved_rps": "rate"},
}
UNFILTERABLE = frozenset({"throughput"})  # the summary has no per-bucket throughput
# A capacity search's result (capacity.json `capacity`): the capacity (highest rate shown to pass), the
# bracket's upper end (lowest rate not shown to pass), the attainment measured at the capacity, and what
# the search spent.
CAPACITY_METRICS: dict[str, dict[str, Kind]] = {
    "capacity": {"rate": "rate", "upper": "rate", "attainment": "fraction", "points": "count", "requests": "count"},
}
# Filter key → summary bucket dimension; any other key is a workload tag (`tag:<key>`).
FILTER_KEYS: dict[str, str] = {
    "prompt_bucket": "prompt_tokens", "prompt_tokens": "prompt_tokens", "prompt": "prompt_tokens",
    "output_bucket": "output_tokens", "output_tokens": "output_tokens", "output": "output_tokens",
    "cache": "cache",
    "turn": "turn",
    "model": "model",
    "images": "images",
}

_EXPR = re.compile(
    r"^(?P<metric>[A-Za-z_][A-Za-z0-9_]*)\s*(?:\{(?P<filters>[^{}]*)\})?\s*:\s*"
    r"(?P<agg>p\s*\([^)]*\)|[A-Za-z_][A-Za-z0-9_]*)\s*(?P<op><=|>=|==|!=|<|>)\s*(?P<rhs>.*?)\s*$"
)
_NUMBER = re.compile(r"^([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(us|µs|ms|s|%)?$")
_BASELINE = re.compile(r"^baseline\s*(?:(?P<op>[*+-])\s*(?P<value>.+))?$")
_UNIT_SCALE = {"us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "%": 0.01}


class ThresholdError(ValueError):
    """An expression that cannot be a threshold; the message names the expression and the mistake."""


@dataclass(frozen=True, slots=True)
class Query:
    """What to measure: one number of one run."""

    metric: str
    agg: str  # a latency-block key ("mean", "max", ...), "p" with `percentile`, or a request aggregation
    percentile: float | None  # p(N) and med
    filters: tuple[tuple[str, str], ...]  # (summary dimension, label), sorted
    kind: Kind

    @property
    def latency_key(self) -> str | None:
        """The key of the metric's block (and of its per-request samples), for the block metrics."""
        if self.metric in ANSWER_METRICS:
            return ANSWER_METRICS[self.metric][1]
        return LATENCY_METRICS.get(self.metric)

    @property
    def section(self) -> str:
        """The summary.json section (and bucket section) holding the block of a block metric."""
        return ANSWER_METRICS[self.metric][0] if self.metric in ANSWER_METRICS else "latency"

    @property
    def of_capacity(self) -> bool:
        """Measured on a capacity search (capacity.json), not on a run."""
        return self.metric in CAPACITY_METRICS

    def describe(self) -> str:
        where = "{" + ",".join(f"{_filter_key(d)}:{lab}" for d, lab in self.filters) + "}" if self.filters else ""
        agg = f"p({self.percentile:g})" if self.percentile is not None else {"mean": "avg"}.get(self.agg, self.agg)
        return f"{self.metric}{where}:{agg}"


@dataclass(frozen=True, slots=True)
class Threshold:
    """A parsed pass condition. With `relative`, the limit is `baseline <relative> operand`."""

    text: str
    query: Query
    op: Op
    operand: float  # the limit (absolute), or the factor / offset of a baseline-relative limit
    relative: Literal["", "=", "*", "+", "-"]  # "" absolute; "=" exactly the baseline
    nodata_pass: bool = False

    @property
    def needs_baseline(self) -> bool:
        return self.relative != ""

    def limit(self, baseline_value: float | None) -> float | None:
        """The number the measured value is compared with (None: baseline had no data)."""
        if not self.relative:
            return self.operand
        if baseline_value is None:
            return None
        if self.relative == "*":
            return baseline_value * self.operand
        if self.relative == "+":
            return baseline_value + self.operand
        if self.relative == "-":
            return baseline_value - self.operand
        return baseline_value


def _filter_key(dimension: str) -> str:
    tag = dimension.removeprefix("tag:")
    return dimension if tag != dimension and tag.lower() in FILTER_KEYS else tag


def compare(value: float, op: Op, limit: float) -> bool:
    """The pass condition `value OP limit`."""
    if op == "<":
        return value < limit
    if op == "<=":
        return value <= limit
    if op == ">":
        return value > limit
    if op == ">=":
        return value >= limit
    if op == "==":
        return value == limit
    return value != limit


def parse_threshold(text: str) -> Threshold:
    """A Threshold from its expression; ThresholdError (a ValueError) on any mistake."""
    body, _, option = text.partition("|")
    nodata_pass = _parse_option(text, option) if _ else False
    match = _EXPR.match(body.strip())
    if match is None:
        raise ThresholdError(
            f"invalid threshold {text!r}: expected METRIC[{{FILTERS}}]:AGGREGATION OP VALUE, e.g. ttft:p(99)<500ms"
        )
    query = _parse_query(text, match["metric"].lower(), match["agg"].lower().replace(" ", ""), match["filters"])
    op: Op = match["op"]  # type: ignore[assignment]  # the regex admits only OPS
    rhs = match["rhs"]
    if not rhs:
        raise ThresholdError(f"invalid threshold {text!r}: nothing after {op!r}")
    base = _BASELINE.match(rhs.lower())
    if base is None:
        return Threshold(text.strip(), query, op, _parse_value(text, rhs, query.kind), "", nodata_pass)
    if base["op"] is None:
        return Threshold(text.strip(), query, op, 0.0, "=", nodata_pass)
    relative: Literal["*", "+", "-"] = base["op"]  # type: ignore[assignment]
    kind: Kind = "count" if relative == "*" else query.kind  # a factor is a plain number
    operand = _parse_value(text, base["value"].strip(), kind, what="baseline factor" if relative == "*" else "")
    return Threshold(text.strip(), query, op, operand, relative, nodata_pass)


def parse_thresholds(texts: Sequence[str]) -> list[Threshold]:
    return [parse_threshold(t) for t in texts]


def _parse_option(text: str, option: str) -> bool:
    key, _, value = option.strip().partition("=")
    if key.strip().lower() != "nodata" or value.strip().lower() not in ("pass", "fail"):
        raise ThresholdError(f"invalid threshold {text!r}: the only option is '| nodata=pass' (or nodata=fail)")
    return value.strip().lower() == "pass"


def _parse_query(text: str, metric: str, agg: str, filters: str | None) -> Query:
    parsed_filters = _parse_filters(text, filters) if filters is not None else ()
    if metric in LATENCY_METRICS or metric in ANSWER_METRICS:
        kind: Kind = ANSWER_METRICS[metric][2] if metric in ANSWER_METRICS else (
            "fraction" if metric == "fluidity" else "duration")
        if agg.startswith("p("):
            pct = _parse_percentile(text, agg[2:-1])
            return Query(metric, "p", pct, parsed_filters, kind)
        if agg not in BLOCK_AGGS:
            raise ThresholdError(
                f"invalid threshold {text!r}: unknown aggregation {agg!r} for {metric}; "
                f"expected one of {', '.join(BLOCK_AGGS)} or p(N)"
            )
        if agg == "med":
            return Query(metric, "p", 50.0, parsed_filters, kind)
        return Query(metric, BLOCK_AGGS[agg], None, parsed_filters, "count" if agg == "count" else kind)
    if metric in REQUEST_METRICS:
        aggs = REQUEST_METRICS[metric]
        if agg not in aggs:
            raise ThresholdError(
                f"invalid threshold {text!r}: unknown aggregation {agg!r} for {metric}; expected one of {', '.join(aggs)}"
            )
        if parsed_filters and metric in UNFILTERABLE:
            raise ThresholdError(f"invalid threshold {text!r}: {metric} is measured over the whole run, not per bucket")
        return Query(metric, agg, None, parsed_filters, aggs[agg])
    if metric in CAPACITY_METRICS:
        caps = CAPACITY_METRICS[metric]
        if agg not in caps:
            raise ThresholdError(
                f"invalid threshold {text!r}: unknown aggregation {agg!r} for {metric}; expected one of {', '.join(caps)}"
            )
        if parsed_filters:
            raise ThresholdError(f"invalid threshold {text!r}: {metric} is measured over the whole search, not per bucket")
        return Query(metric, agg, None, (), caps[agg])
    known = [*LATENCY_METRICS, *ANSWER_METRICS, *REQUEST_METRICS, *CAPACITY_METRICS]
    raise ThresholdError(f"invalid threshold {text!r}: unknown metric {metric!r}; expected one of {', '.join(known)}")


def _parse_percentile(text: str, raw: str) -> float:
    try:
        pct = float(raw)
    except ValueError:
        raise ThresholdError(f"invalid threshold {text!r}: p({raw}) needs a number, e.g. p(99)") from None
    if not 0.0 <= pct <= 100.0:
        raise ThresholdError(f"invalid threshold {text!r}: percentile {raw} is outside 0-100")
    return pct


def _parse_filters(text: str, raw: str) -> tuple[tuple[str, str], ...]:
    out: dict[str, str] = {}
    for item in raw.split(","):
        key, sep, label = item.strip().partition(":")
        key, label = key.strip(), label.strip()
        explicit_tag = key.lower() == "tag"  # `tag:KEY:LABEL`, for a tag named like a bucket dimension
        if explicit_tag:
            key, sep, label = label.partition(":")
            key, label = key.strip(), label.strip()
        if not sep or not key or not label:
            raise ThresholdError(f"invalid threshold {text!r}: filter {item.strip()!r} must be KEY:LABEL, e.g. cache:none")
        dim = f"tag:{key}" if explicit_tag else FILTER_KEYS.get(key.lower(), f"tag:{key}")
        if dim in out:
            raise ThresholdError(f"invalid threshold {text!r}: filter {key!r} given twice")
        out[dim] = label
    return tuple(sorted(out.items()))


def _parse_value(text: str, raw: str, kind: Kind, what: str = "") -> float:
    match = _NUMBER.match(raw.strip())
    if match is None:
        raise ThresholdError(f"invalid threshold {text!r}: {raw!r} is not a number (units: ms, s, us, %)")
    value, unit = float(match[1]), match[2]
    allowed = {"duration": ("us", "µs", "ms", "s"), "fraction": ("%",), "rate": (), "count": ()}[kind]
    if unit is not None and unit not in allowed:
        noun = what or f"a {kind} limit"
        raise ThresholdError(f"invalid threshold {text!r}: unit {unit!r} does not fit {noun}")
    if kind == "duration":  # exactly as --slo parses it (Decimal), so `<= 700ms` admits a measured 0.7 s
        return parse_duration(f"{match[1]}{'us' if unit == 'µs' else (unit or '')}")
    return value * _UNIT_SCALE[unit] if unit else value


def check_labels(
    thresholds: Sequence[Threshold], *, prompt_edges: Sequence[int], output_edges: Sequence[int]
) -> None:
    """Reject what no run can answer: bucket labels that no request could have under these edges (tags
    cannot be known), and capacity thresholds (a capacity search answers those)."""
    for t in thresholds:
        if t.query.of_capacity:
            raise ThresholdError(
                f"invalid threshold {t.text!r}: {t.query.metric}:* is the result of a capacity search, not of a "
                "run; judge it with `goodput capacity --threshold` or `goodput gate CAPACITY_DIR`"
            )
    valid = {"prompt_tokens": range_labels(prompt_edges), "output_tokens": range_labels(output_edges),
             "cache": list(CACHE_CLASSES), "turn": list(TURN_LABELS), "images": list(IMAGE_LABELS)}
    for t in thresholds:
        for dim, label in t.query.filters:
            if dim in valid and label not in valid[dim]:
                raise ThresholdError(
                    f"invalid threshold {t.text!r}: no {dim} bucket {label!r}; buckets are {', '.join(valid[dim])}"
                )
