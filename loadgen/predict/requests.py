"""The predictor's requests: the same workload and schedule `goodput run` builds, as token ids.

A prompt's length is the run's count of it (what the workload sized it to) plus the chat template's estimated
tokens; its ids are read from its text, one per `stride` bytes (the
workload's bytes per token, one stride for every prompt), so prompts that share a text prefix (a shared
system prompt, a trace's reused blocks) share a token prefix and hit the prefix cache as on a server.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from loadgen.spec import RunSpec
from loadgen.sweep import PointLength, exact_rate_offsets, plan_point, point_load
from loadgen.workload import Messages, build_workload, is_sessions, load_trace, run_schedule, trace_window

DEFAULT_OUTPUT_TOKENS = 128  # a dataset row without max_tokens: what the predictor assumes it generates


@dataclass(frozen=True, slots=True)
class Requests:
    prompts: list[list[int]]
    max_tokens: list[int]
    offsets: np.ndarray  # seconds from the schedule's start
    warmup_s: float = 0.0  # those sent before are run but not measured (a capacity point's warm-up)

    def measured(self) -> np.ndarray:
        """Which requests the figures are of: sent at or after the warm-up (metrics.summary.window's rule)."""
        return self.offsets >= self.warmup_s if self.warmup_s > 0 else np.ones(self.offsets.size, dtype=bool)


def text_token_ids(text: str, n: int, stride: int = 1) -> list[int]:
    """n ids, id i from the first (up to 3) bytes of [i·stride, (i+1)·stride) of the text, 0 past its end:
    a text prefix of k·stride bytes gives the same k ids in every prompt that has it."""
    raw = np.frombuffer(text.encode("utf-8"), dtype=np.uint8).astype(np.int64)
    padded = np.zeros(n * stride, dtype=np.int64)
    padded[: min(raw.size, padded.size)] = raw[: padded.size]
    idx = np.arange(n, dtype=np.int64) * stride
    ids = padded[idx]
    for j in range(1, min(stride, 3)):
        ids = ids | (padded[idx + j] << (8 * j))
    return ids.tolist()  # type: ignore[no-any-return]


def _text(item_messages: Messages | None, prompt: str | None) -> str:
    if item_messages is not None:
        return "\n".join(str(m.get("content", "")) for m in item_messages)
    return prompt or ""


def at_rate(spec: RunSpec, rate: float | None) -> RunSpec:
    """The spec with its arrival rate set (a trace is rescaled to that mean rate)."""
    if rate is None:
        return spec
    load = dataclasses.replace(spec.load, arrival=dataclasses.replace(spec.load.arrival, rate=rate))
    return dataclasses.replace(spec, load=load)


class RequestSource:
    """A workload's requests at any rate: the items are built once (item i does not depend on the rate,
    and a trace's rows at any rate are a prefix of its window's), the schedule per rate."""

    def __init__(self, spec: RunSpec) -> None:
        """ValueError (a usage error) for a workload the predictor cannot replay."""
        if not spec.load.arrival.open_loop:
            raise ValueError("predict needs an open-loop arrival (constant, poisson, gamma, ramp or a trace)")
        w, load = spec.workload, spec.load
        self.spec = spec
        self.trace = load_trace(w.trace, w.trace_format) if w.trace is not None else None
        rows = trace_window(self.trace, start_s=load.trace_start_s, duration_s=load.trace_duration_s) \
            if self.trace is not None else None
        self.workload = build_workload(w, seed=load.seed, embedded=True, trace=self.trace, rows=rows)
        if is_sessions(self.workload):
            raise ValueError("predict does not replay conversations (--turns) yet")
        self.prompts: list[list[int]] = []
        self.max_tokens: list[int] = []
        self._stride = 0

    def _extend(self, n: int) -> None:
        for i in range(len(self.prompts), n):
            item = self.workload.item(i)  # type: ignore[union-attr]
            text = _text(item.messages, item.prompt)
            size = len(text.encode("utf-8"))
            counted = item.prompt_tokens_counted or item.prompt_tokens_target or max(1, size)
            self._stride = self._stride or max(1, round(size / counted))
            tokens = counted + (item.template_tokens or 0)  # the chat template, as the server counts the prompt
            self.prompts.append(text_token_ids(text, max(1, tokens), self._stride))
            self.max_tokens.append(item.max_tokens or DEFAULT_OUTPUT_TOKENS)

    def warm(self, rates: list[float], point: PointLength | None = None) -> None:
        """Build the items every rate's schedule needs now, once (a rate's schedule alone is cheap), so that
        processes forked afterwards share them (loadgen.predict.parallel); a rate whose schedule is refused
        raises where it is predicted."""
        for rate in rates:
            try:
                self.at(rate, point)
            except ValueError:
                continue

    def at(self, rate: float | None, point: PointLength | None = None) -> Requests:
        """The requests and their send offsets at `rate` (None: the spec's own). `point`: as one point of
        `goodput capacity` or `sweep` of that length sends them (its load, its exact-rate send times, its
        warm-up left out of the figures: loadgen.sweep's own functions)."""
        if point is None or rate is None:
            load, offsets, warmup = at_rate(self.spec, rate).load, None, 0.0
        else:
            plan = plan_point(0, "rate", rate, point, seed=self.spec.load.seed)
            load = point_load(self.spec.load, plan)
            offsets, warmup = exact_rate_offsets(plan, load.arrival), plan.warmup_s
        schedule = run_schedule(load, self.trace, offsets=offsets)
        if schedule is None or schedule.offsets.size == 0:
            raise ValueError("the workload's schedule holds no request")
        n = int(schedule.offsets.size)
        self._extend(n)
        return Requests(self.prompts[:n], self.max_tokens[:n], schedule.offsets.astype(np.float64), warmup)


def build_requests(spec: RunSpec) -> Requests:
    """The spec's requests at its own rate (ValueError for a workload the predictor cannot replay)."""
    return RequestSource(spec).at(None)
