"""The workload a run spec describes: synthetic prompts of a length distribution, a dataset file, a trace,
or conversations of either (`--turns`); optionally with a unique prefix on every request (`--cache-bust`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from loadgen.spec.sections import WorkloadSpec
from loadgen.workload.bust import BustedWorkload, CacheBuster
from loadgen.workload.cancel import with_cancellations
from loadgen.workload.conversations import load_jsonl_conversations, load_sharegpt_conversations
from loadgen.workload.counters import make_counter
from loadgen.workload.sessions import DatasetSessions, SessionWorkload, SyntheticSessions
from loadgen.workload.sources import DatasetWorkload, SyntheticWorkload, Workload, load_jsonl, load_sharegpt
from loadgen.workload.text import TokenCounter
from loadgen.workload.trace_workload import TraceWorkload
from loadgen.workload.traces import Trace

AnyWorkload = Workload | SessionWorkload


def dataset_format(spec: WorkloadSpec) -> str:
    """`auto` resolved by the file's extension."""
    if spec.dataset_format != "auto" or spec.dataset is None:
        return spec.dataset_format
    return "jsonl" if spec.dataset.endswith((".jsonl", ".ndjson")) else "sharegpt"


def is_sessions(workload: Any) -> bool:
    """Whether a workload is made of conversations (the runner then runs sessions, not single requests)."""
    return hasattr(workload, "session")


def build_workload(spec: WorkloadSpec, *, seed: int, embedded: bool, counter: TokenCounter | None = None,
                   trace: Trace | None = None, rows: np.ndarray | None = None) -> AnyWorkload:
    """Reads the dataset or the tokenizer when there is one: ValueError (a usage error) when it cannot.

    `counter` replaces the spec's token counter (prompts sized against the server, loadgen.run.sizing);
    `trace` and `rows` are the trace and the schedule's choice of its requests (loadgen.workload.schedule).
    """
    workload: AnyWorkload = with_cancellations(_workload(spec, seed=seed, embedded=embedded, counter=counter, trace=trace, rows=rows),
                              rate=spec.cancel_rate, after=spec.cancel_after, seed=seed, sessions=spec.turns is not None)
    return workload


def _workload(spec: WorkloadSpec, *, seed: int, embedded: bool, counter: TokenCounter | None,
              trace: Trace | None, rows: np.ndarray | None) -> AnyWorkload:
    if counter is None:
        counter = make_counter(spec.token_counter(embedded))[1]
    tags = dict(spec.tags)
    buster = CacheBuster(counter) if spec.cache_bust else None
    if spec.trace is not None:
        if trace is None or rows is None:
            raise ValueError("a trace workload needs the trace and its schedule")
        return _busted(TraceWorkload(trace, rows, seed, counter, tags), buster)
    if spec.turns is not None:
        if spec.dataset is not None:
            fmt = dataset_format(spec)
            loader = load_jsonl_conversations if fmt == "jsonl" else load_sharegpt_conversations
            return DatasetSessions(fmt, spec.dataset, loader(spec.dataset, counter, tags), seed, spec.turns,
                                   spec.think_time, spec.output_tokens, counter, buster=buster)
        return SyntheticSessions(_synthetic(spec, seed, counter, tags), spec.turns, spec.think_time, buster=buster)
    if spec.dataset is not None:
        fmt = dataset_format(spec)
        items = (load_jsonl if fmt == "jsonl" else load_sharegpt)(spec.dataset, counter, tags)
        return _busted(DatasetWorkload(fmt, spec.dataset, items, seed, spec.output_tokens), buster)
    return _busted(_synthetic(spec, seed, counter, tags), buster)


def _synthetic(spec: WorkloadSpec, seed: int, counter: TokenCounter, tags: dict[str, str]) -> SyntheticWorkload:
    return SyntheticWorkload(spec.prompt_tokens, spec.output_tokens, seed, counter.name, counter,
                             prefix_groups=spec.prefix_groups, prefix_tokens=spec.prefix_tokens,
                             prefix_weights=list(spec.prefix_weights) if spec.prefix_weights is not None else None,
                             tags=tags)


def _busted(workload: Workload, buster: CacheBuster | None) -> Workload:
    return BustedWorkload(workload, buster) if buster is not None else workload
