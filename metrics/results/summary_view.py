"""The typed, frozen view of summary.json: each section parsed once, at the boundary, into the views
of metrics.results.summary_{stats,requests,tokens,goodput,run}; the exporters read its fields instead of
walking the JSON. `SummaryView.from_json` takes the document as metrics.summary.build writes it (or an
older one: a section it lacks reads as its readers have always read it, absent or empty).

Not viewed yet: `input` (the records file as read, loadgen.run.outputs). The sections metrics.summary.build
writes are written back with each view's `to_json` (`summary_json` assembles the document).
"""

from __future__ import annotations

from dataclasses import field
from pathlib import Path
from typing import Any

from metrics.results.documents import read_summary
from metrics.results.frozen_view import frozen
from metrics.results.summary_goodput import BurstDelivered, Goodput, Reasoning, ToolCalls
from metrics.results.summary_gpu import Gpu
from metrics.results.summary_parse import JsonObject, int_or_none, number_or_none, text_or_none
from metrics.results.summary_requests import Requests, Throughput
from metrics.results.summary_run import Run
from metrics.results.summary_server import Server
from metrics.results.summary_sessions import Sessions, Stalls
from metrics.results.summary_stats import Stats, stats_map
from metrics.results.summary_tokens import PrefixCacheShare, Tokens


@frozen
class Bucket:
    """One entry of `buckets`: the requests of one label of one dimension (prompt_tokens=<64)."""

    dimension: str
    label: str
    measured: int | None  # None when the document does not say
    failed: int | None
    ok: int | None
    good: int | None
    latency: dict[str, Stats]
    goodput: Goodput | None
    sections: dict[str, dict[str, Stats]]  # `reasoning`, `tool_calls`: their blocks (when the run shows them)
    cancelled: int | None = None
    prefix_cache: PrefixCacheShare | None = None

    @classmethod
    def from_json(cls, value: Any) -> Bucket | None:
        if not isinstance(value, dict):
            return None
        counts = value.get("counts", value)  # older summaries nested the counts
        cache = value.get("prefix_cache")
        return cls(str(value.get("dimension")), str(value.get("label")), int_or_none(counts.get("measured")),
                   int_or_none(counts.get("failed")), int_or_none(counts.get("ok")), int_or_none(counts.get("good")),
                   stats_map(value.get("latency")), Goodput.from_json(value.get("goodput")),
                   {name: stats_map(value[name]) for name in ANSWER_SECTIONS if isinstance(value.get(name), dict)},
                   int_or_none(counts.get("cancelled")),
                   PrefixCacheShare.from_json(cache) if isinstance(cache, dict) else None)

    def to_json(self) -> JsonObject:
        """As metrics.summary.build writes a bucket."""
        out: JsonObject = {
            "dimension": self.dimension, "label": self.label, "measured": self.measured, "ok": self.ok,
            "failed": self.failed, "cancelled": self.cancelled, "good": self.good,
            "latency": {name: block.to_json() for name, block in self.latency.items()},
            "goodput": self.goodput.to_json() if self.goodput is not None else None,
            "prefix_cache": self.prefix_cache.to_json() if self.prefix_cache is not None else None,
        }
        out.update((name, {k: block.to_json() for k, block in blocks.items()}) for name, blocks in self.sections.items())
        return out

    @property
    def attainment(self) -> float | None:
        return self.goodput.attainment if self.goodput is not None else None

    def blocks(self, section: str) -> dict[str, Stats] | None:
        """The blocks of `latency`, `reasoning` or `tool_calls`; None when the bucket has no such section."""
        return self.latency if section == "latency" else self.sections.get(section)


ANSWER_SECTIONS = ("reasoning", "tool_calls")


@frozen
class RooflineRow:
    """The measured median beside its floor (metrics.model.roofline)."""

    measured_p50: float | None
    floor: float | None
    ratio: float | None

    @classmethod
    def from_json(cls, value: Any) -> RooflineRow | None:
        if not isinstance(value, dict):
            return None
        return cls(*(number_or_none(value.get(k)) for k in ("measured_p50", "floor", "ratio")))


@frozen
class Roofline:
    """`roofline`: the floors of a model on a GPU (metrics.model.roofline), or why they were not computed.
    Names are kept as the text the document's values print as."""

    has_floors: bool
    floors_model: str  # floors.model, floors.gpu, floors.tp: the shape the floors were computed for
    floors_gpu: str
    floors_tp: int | None
    batch: int | None
    spec_model: str  # spec.model, spec.gpu, spec.tp (1 when absent): what was asked for
    spec_gpu: str
    spec_tp: str
    source: str | None  # spec.source: where the roofline's figures came from
    rows: dict[str, RooflineRow]  # ttft_s, tpot_s, e2e_s: those the document has
    mean_in_flight: float | None
    error: str | None

    @classmethod
    def from_json(cls, value: Any) -> Roofline | None:
        if not isinstance(value, dict):
            return None
        floors, spec = value.get("floors"), value.get("spec")
        has_floors = bool(floors)
        floors = floors if isinstance(floors, dict) else {}
        spec = spec if isinstance(spec, dict) else {}
        rows = {key: row for key in ("ttft_s", "tpot_s", "e2e_s")
                if (row := RooflineRow.from_json(value.get(key))) is not None}
        error = value.get("error")
        return cls(has_floors, str(floors.get("model")), str(floors.get("gpu")), int_or_none(floors.get("tp")),
                   int_or_none(floors.get("batch")), str(spec.get("model")), str(spec.get("gpu")),
                   str(spec.get("tp", 1)), text_or_none(spec.get("source")) or None, rows,
                   number_or_none(value.get("mean_in_flight")), str(error) if error else None)


@frozen
class SummaryView:
    run: Run = field(default_factory=Run)
    requests: Requests = field(default_factory=lambda: Requests(None, None))
    throughput: Throughput = field(default_factory=Throughput)
    latency: dict[str, Stats] = field(default_factory=dict)
    tokens: Tokens = field(default_factory=Tokens)
    burst_delivered: BurstDelivered | None = None
    goodput: Goodput | None = None
    buckets: tuple[Bucket, ...] = ()
    reasoning: Reasoning | None = None
    tool_calls: ToolCalls | None = None
    roofline: Roofline | None = None
    gpu: Gpu | None = None
    server: Server = field(default_factory=lambda: Server({}, None))
    stalls: Stalls | None = None
    sessions: Sessions | None = None

    @classmethod
    def from_json(cls, summary: Any) -> SummaryView:
        """The view of a parsed summary.json (every section empty when it is not a JSON object)."""
        if not isinstance(summary, dict):
            return cls()
        buckets = summary.get("buckets")
        return cls(
            run=Run.from_json(summary.get("run")),
            requests=Requests.from_json(summary.get("requests")),
            throughput=Throughput.from_json(summary.get("throughput")),
            latency=stats_map(summary.get("latency")),
            tokens=Tokens.from_json(summary.get("tokens")),
            burst_delivered=BurstDelivered.from_json(summary.get("burst_delivered")),
            goodput=Goodput.from_json(summary.get("goodput")),
            buckets=tuple(b for b in map(Bucket.from_json, buckets if isinstance(buckets, list) else [])
                          if b is not None),
            reasoning=Reasoning.from_json(summary.get("reasoning")),
            tool_calls=ToolCalls.from_json(summary.get("tool_calls")),
            roofline=Roofline.from_json(summary.get("roofline")),
            gpu=Gpu.from_json(summary.get("gpu")),
            server=Server.from_json(summary.get("server")),
            stalls=Stalls.from_json(summary.get("stalls")),
            sessions=Sessions.from_json(summary.get("sessions")),
        )

    def stats(self, metric: str) -> Stats | None:
        """The whole run's block of a latency metric (ttft_s, itl_s, ...); None when there is none."""
        return self.latency.get(metric)

    def blocks(self, section: str) -> dict[str, Stats] | None:
        """The whole run's blocks of `latency`, `reasoning` (reasoning_tokens, answer_tokens) or `tool_calls`
        (calls_per_request); None when the summary has no such section."""
        if section == "latency":
            return self.latency
        pairs: tuple[tuple[str, Stats | None], ...]
        if section == "reasoning" and self.reasoning is not None:
            pairs = (("reasoning_tokens", self.reasoning.reasoning_tokens),
                     ("answer_tokens", self.reasoning.answer_tokens))
        elif section == "tool_calls" and self.tool_calls is not None:
            pairs = (("calls_per_request", self.tool_calls.calls_per_request),)
        else:
            return None
        return {name: block for name, block in pairs if block is not None}


def read_summary_view(directory: Path) -> SummaryView:
    """summary.json of a run directory, viewed (ValueError, one line, when it is missing or not an object:
    metrics.results.documents.read_summary)."""
    return SummaryView.from_json(read_summary(directory))
