"""The typed views of summary.json's `goodput` (the SLOs and how many requests met them), `burst_delivered`
(metrics.burst) and the `reasoning` and `tool_calls` sections (metrics.summary.answers)."""

from __future__ import annotations

from dataclasses import field
from typing import Any

from metrics.results.frozen_view import frozen
from metrics.results.summary_parse import JsonObject, count, counts, int_or_none, number_or_none
from metrics.results.summary_stats import Stats

SloBound = float | list[float] | None  # a bound in seconds (or a ratio); the fluidity deadlines are a list


def slo_bounds(value: Any) -> dict[str, SloBound] | None:
    """`goodput.slo` read: each bound a number, a list (the fluidity deadlines) or None; None when not an object."""
    if not isinstance(value, dict):
        return None
    out: dict[str, SloBound] = {}
    for key, bound in value.items():
        if bound is None or isinstance(bound, list):
            out[str(key)] = bound
        elif (number := number_or_none(bound)) is not None:
            out[str(key)] = number
    return out


@frozen
class Goodput:
    slo: dict[str, SloBound] | None  # goodput.slo: every bound, set (a number) or not (None); a bucket's has none
    good: int | None = None  # None when the document does not say
    measured: int | None = None
    attainment: float | None = None
    requests_per_s: float | None = None
    excluded_planned_cancels: int | None = None  # None: not said (a bucket's goodput)

    @classmethod
    def from_json(cls, good: Any) -> Goodput | None:
        """None when the section is absent or empty (a summary without one prints no goodput line)."""
        if not isinstance(good, dict) or not good:
            return None
        return cls(slo_bounds(good.get("slo")), int_or_none(good.get("good")), int_or_none(good.get("measured")),
                   number_or_none(good.get("attainment")), number_or_none(good.get("requests_per_s")),
                   int_or_none(good.get("excluded_planned_cancels")))

    def to_json(self) -> JsonObject:
        """The run's `goodput` (with `slo` and `excluded_planned_cancels`) or a bucket's (without)."""
        out: JsonObject = {} if self.slo is None else {"slo": self.slo}
        out.update(good=self.good, measured=self.measured, attainment=self.attainment,
                   requests_per_s=self.requests_per_s)
        if self.excluded_planned_cancels is not None:
            out["excluded_planned_cancels"] = self.excluded_planned_cancels
        return out

    def bound(self, key: str) -> SloBound:
        return (self.slo or {}).get(key)


@frozen
class BurstDelivered:
    requests: int | None
    of: int | None
    share: float | None
    tpot_below_s: float | None

    @classmethod
    def from_json(cls, value: Any) -> BurstDelivered | None:
        if not isinstance(value, dict):
            return None
        return cls(int_or_none(value.get("requests")), int_or_none(value.get("of")),
                   number_or_none(value.get("share")), number_or_none(value.get("tpot_below_s")))

    def to_json(self) -> JsonObject:
        return {"requests": self.requests, "of": self.of, "share": self.share, "tpot_below_s": self.tpot_below_s}


@frozen
class Reasoning:
    requests: int = 0
    reasoned: int = 0
    reasoning_tokens_known: int = 0
    reasoning_tokens_total: int | None = None
    answer_tokens_total: int | None = None
    reasoning_tokens_source: dict[str, int] = field(default_factory=dict)
    reasoning_tokens: Stats | None = None
    answer_tokens: Stats | None = None

    @classmethod
    def from_json(cls, value: Any) -> Reasoning | None:
        if not isinstance(value, dict):
            return None
        return cls(count(value.get("requests")), count(value.get("reasoned")),
                   count(value.get("reasoning_tokens_known")), int_or_none(value.get("reasoning_tokens_total")),
                   int_or_none(value.get("answer_tokens_total")), counts(value.get("reasoning_tokens_source")),
                   Stats.from_json(value.get("reasoning_tokens")), Stats.from_json(value.get("answer_tokens")))

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "requests": self.requests, "reasoned": self.reasoned, "reasoning_tokens_known": self.reasoning_tokens_known,
            "reasoning_tokens_total": self.reasoning_tokens_total, "answer_tokens_total": self.answer_tokens_total,
            "reasoning_tokens_source": self.reasoning_tokens_source,
        }
        for name, block in (("reasoning_tokens", self.reasoning_tokens), ("answer_tokens", self.answer_tokens)):
            if block is not None:
                out[name] = block.to_json()
        return out


@frozen
class ToolCalls:
    requests: int = 0
    calls: int = 0
    ended_in_tool_call: int = 0
    calls_per_request: Stats | None = None

    @classmethod
    def from_json(cls, value: Any) -> ToolCalls | None:
        if not isinstance(value, dict):
            return None
        return cls(count(value.get("requests")), count(value.get("calls")),
                   count(value.get("ended_in_tool_call")), Stats.from_json(value.get("calls_per_request")))

    def to_json(self) -> JsonObject:
        out: JsonObject = {"requests": self.requests, "calls": self.calls, "ended_in_tool_call": self.ended_in_tool_call}
        if self.calls_per_request is not None:
            out["calls_per_request"] = self.calls_per_request.to_json()
        return out
