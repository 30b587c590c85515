"""The workload a run spec describes: synthetic prompts of a length distribution, a dataset file, a trace,
or conversations of either (`--turns`); optionally with a unique prefix on every request (`--cache-bust`)."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from loadgen.workload.agent import AgentLoop
from loadgen.workload.bust import BustedWorkload, CacheBuster
from loadgen.workload.cancel import with_cancellations
from loadgen.workload.conversations import load_jsonl_conversations, load_sharegpt_conversations
from loadgen.workload.counters import make_counter
from loadgen.workload.images import ImageMaker, ImageSpec, ImageWorkload
from loadgen.workload.lengths import LengthDist
from loadgen.workload.models import MixedSessions, MixedWorkload, ModelMix
from loadgen.workload.sessions import DatasetSessions, SessionWorkload, SyntheticSessions
from loadgen.workload.sources import DatasetWorkload, SyntheticWorkload, Workload, load_jsonl, load_sharegpt
from loadgen.workload.text import TokenCounter
from loadgen.workload.think import ThinkTime
from loadgen.workload.trace_workload import TraceWorkload
from loadgen.workload.traces import Trace

AnyWorkload = Workload | SessionWorkload


class WorkloadSection(Protocol):
    """What the workload is built from: the run spec's workload section (loadgen.spec.sections.WorkloadSpec,
    which is made of this folder's types: the spec imports the workload, never the other way)."""

    @property
    def dataset(self) -> str | None: ...
    @property
    def dataset_format(self) -> str: ...
    @property
    def prompt_tokens(self) -> LengthDist: ...
    @property
    def output_tokens(self) -> LengthDist: ...
    @property
    def prefix_groups(self) -> int: ...
    @property
    def prefix_tokens(self) -> int: ...
    @property
    def prefix_weights(self) -> tuple[float, ...] | None: ...
    @property
    def tags(self) -> tuple[tuple[str, str], ...]: ...
    @property
    def turns(self) -> LengthDist | None: ...
    @property
    def think_time(self) -> ThinkTime: ...
    @property
    def trace(self) -> str | None: ...
    @property
    def cache_bust(self) -> bool: ...
    @property
    def images(self) -> ImageSpec: ...
    @property
    def tool_latency(self) -> ThinkTime: ...
    @property
    def tool_result_tokens(self) -> LengthDist: ...
    @property
    def max_tool_turns(self) -> int: ...
    @property
    def cancel_rate(self) -> float: ...
    @property
    def cancel_after(self) -> str | None: ...

    def token_counter(self, embedded: bool) -> str: ...


def dataset_format(spec: WorkloadSection) -> str:
    """`auto` resolved by the file's extension."""
    if spec.dataset_format != "auto" or spec.dataset is None:
        return spec.dataset_format
    return "jsonl" if spec.dataset.endswith((".jsonl", ".ndjson")) else "sharegpt"


def is_sessions(workload: Any) -> bool:
    """Whether a workload is made of conversations (the runner then runs sessions, not single requests)."""
    return hasattr(workload, "session")


def build_workload(spec: WorkloadSection, *, seed: int, embedded: bool, counter: TokenCounter | None = None,
                   trace: Trace | None = None, rows: np.ndarray | None = None,
                   models: ModelMix | None = None) -> AnyWorkload:
    """Reads the dataset or the tokenizer when there is one: ValueError (a usage error) when it cannot.

    `counter` replaces the spec's token counter (prompts sized against the server, loadgen.run.sizing);
    `trace` and `rows` are the trace and the schedule's choice of its requests (loadgen.workload.schedule);
    `models`: a `--model` mix of several models (loadgen.workload.models), drawn per request or session.
    """
    workload = _build(spec, seed=seed, embedded=embedded, counter=counter, trace=trace, rows=rows)
    workload = _inside_images(workload, lambda w: with_cancellations(
        w, rate=spec.cancel_rate, after=spec.cancel_after, seed=seed, sessions=spec.turns is not None))
    if models is None or len(models.names) < 2:
        return workload
    if is_sessions(workload):
        return MixedSessions(workload, models, seed)
    return _inside_images(workload, lambda w: MixedWorkload(w, models, seed))


def _inside_images(workload: AnyWorkload, wrap: Any) -> AnyWorkload:
    """`wrap(workload)`, applied inside the image wrapper when there is one: the image maker's prefetch and
    lost-request paths (found with `hasattr` on the outermost workload) stay reachable."""
    if isinstance(workload, ImageWorkload):
        workload.inner = wrap(workload.inner)
        return workload
    result: AnyWorkload = wrap(workload)
    return result


def _build(spec: WorkloadSection, *, seed: int, embedded: bool, counter: TokenCounter | None,
           trace: Trace | None, rows: np.ndarray | None) -> AnyWorkload:
    if counter is None:
        counter = make_counter(spec.token_counter(embedded))[1]
    tags = dict(spec.tags)
    buster = CacheBuster(counter) if spec.cache_bust else None
    if spec.trace is not None:
        if trace is None or rows is None:
            raise ValueError("a trace workload needs the trace and its schedule")
        return _imaged(_busted(TraceWorkload(trace, rows, seed, counter, tags), buster), spec, seed)
    if spec.turns is not None:
        if spec.dataset is not None:
            fmt = dataset_format(spec)
            loader = load_jsonl_conversations if fmt == "jsonl" else load_sharegpt_conversations
            return DatasetSessions(fmt, spec.dataset, loader(spec.dataset, counter, tags), seed, spec.turns,
                                   spec.think_time, spec.output_tokens, counter, buster=buster, agent=_agent(spec, seed))
        return SyntheticSessions(_synthetic(spec, seed, counter, tags), spec.turns, spec.think_time, buster=buster,
                                 agent=_agent(spec, seed))
    if spec.dataset is not None:
        fmt = dataset_format(spec)
        items = (load_jsonl if fmt == "jsonl" else load_sharegpt)(spec.dataset, counter, tags)
        return _imaged(_busted(DatasetWorkload(fmt, spec.dataset, items, seed, spec.output_tokens), buster), spec, seed)
    return _imaged(_busted(_synthetic(spec, seed, counter, tags), buster), spec, seed)


def _synthetic(spec: WorkloadSection, seed: int, counter: TokenCounter, tags: dict[str, str]) -> SyntheticWorkload:
    return SyntheticWorkload(spec.prompt_tokens, spec.output_tokens, seed, counter.name, counter,
                             prefix_groups=spec.prefix_groups, prefix_tokens=spec.prefix_tokens,
                             prefix_weights=list(spec.prefix_weights) if spec.prefix_weights is not None else None,
                             tags=tags)


def _imaged(workload: Workload, spec: WorkloadSection, seed: int) -> Workload:
    """Synthetic images on every request (`--images`)."""
    return ImageWorkload(workload, ImageMaker(spec.images, seed)) if spec.images.enabled else workload


def _agent(spec: WorkloadSection, seed: int) -> AgentLoop | None:
    """The agent loop of a conversation workload (None: a tool call ends its turn)."""
    if not spec.max_tool_turns:
        return None
    return AgentLoop(spec.tool_latency, spec.tool_result_tokens, spec.max_tool_turns, seed)


def _busted(workload: Workload, buster: CacheBuster | None) -> Workload:
    return BustedWorkload(workload, buster) if buster is not None else workload
