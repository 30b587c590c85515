"""The Prometheus families of reasoning and tool calls (docs/prometheus.md#metric-families), folded with
the same formulas as summary.json (metrics.latency.answer) over the same requests: successful ones inside
the measurement window.

    goodput_{ttfo,reasoning_time,tool_call,tool_call_done}_seconds   histograms (the latency ladder)
    goodput_reasoning_tokens_per_request, goodput_tool_calls_per_request   histograms (counts)
    goodput_{reasoning,answer}_tokens_total, goodput_tool_calls_total   counters

Every request is observed, but the families are exposed only once a folded request reasoned or called a
tool (or with a TTFO SLO), as summary.json shows these figures: a run without them exposes exactly the
families it did before they existed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from prometheus_client.core import Metric

from exporters.prometheus.histogram_buckets import CALLS_LADDER, TOKEN_LADDER
from exporters.prometheus.instruments import BatchCounter, BatchHistogram, LabelValues
from metrics.latency import answer
from metrics.records import RequestFrame

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]

DURATIONS: tuple[tuple[str, str], ...] = (
    ("ttfo", "Time to the first answer token or tool call, from the actual send (reasoning not counted)."),
    ("reasoning_time", "From the first reasoning token to the first answer token."),
    ("tool_call", "Time to the first tool-call delta, from the actual send."),
    ("tool_call_done", "Time to the first tool call's arguments complete, from the actual send."),
)
COUNTERS: tuple[tuple[str, str], ...] = (
    ("reasoning_tokens", "Reasoning tokens of successful measured requests (where known)."),
    ("answer_tokens", "Output tokens that were not reasoning, of successful measured requests (where known)."),
    ("tool_calls", "Tool calls made by successful measured requests."),
)


class AnswerInstruments:
    """The families above for one run; `shown` from the start with a TTFO SLO."""

    def __init__(self, latency_bounds: Sequence[float], label_names: Sequence[str], *, shown: bool) -> None:
        self.shown = shown
        self.durations = {name: BatchHistogram(f"goodput_{name}_seconds", doc, label_names, latency_bounds)
                          for name, doc in DURATIONS}
        self.reasoning_tokens = BatchHistogram("goodput_reasoning_tokens_per_request", "Reasoning tokens per "
                                               "successful measured request (where known).", label_names, TOKEN_LADDER)
        self.calls = BatchHistogram("goodput_tool_calls_per_request", "Tool calls per successful measured "
                                    "request, 0 included.", label_names, CALLS_LADDER)
        self.counters = {name: BatchCounter(f"goodput_{name}", doc, label_names) for name, doc in COUNTERS}

    def fold(self, frame: RequestFrame, sampled: BoolArray, ttfo_s: npt.NDArray[np.float64], label_ids: IntArray,
             labels: list[LabelValues]) -> None:
        """Observe the sampled requests of `frame` (label_ids: each request's index into `labels`)."""
        self.shown = self.shown or answer.shows_answer_figures(frame)
        ids = label_ids[sampled]
        values = {"ttfo": ttfo_s, "reasoning_time": answer.reasoning_time_s(frame),
                  "tool_call": answer.tool_call_s(frame), "tool_call_done": answer.tool_call_done_s(frame)}
        for name, seconds in values.items():
            self.durations[name].observe_batch(ids, seconds[sampled], labels)
        reasoning, calls = answer.reasoning_tokens(frame), answer.tool_calls(frame)
        self.reasoning_tokens.observe_batch(ids, reasoning[sampled], labels)
        self.calls.observe_batch(ids, calls[sampled], labels)
        counts = {"reasoning_tokens": reasoning, "answer_tokens": answer.answer_tokens(frame), "tool_calls": calls}
        for name, amounts in counts.items():
            self.counters[name].inc_batch(ids, amounts[sampled], labels)

    def instruments(self) -> list[BatchHistogram | BatchCounter]:
        """What to expose now (nothing until the figures are shown)."""
        if not self.shown:
            return []
        return [*self.durations.values(), self.reasoning_tokens, self.calls, *self.counters.values()]

    def families(self) -> list[Metric]:
        return [inst.family() for inst in self.instruments()]
