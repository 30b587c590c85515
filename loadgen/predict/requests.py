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

from loadgen.spec.run_spec import RunSpec
from loadgen.workload.build import build_workload, is_sessions
from loadgen.workload.schedule import run_schedule
from loadgen.workload.traces import load_trace

DEFAULT_OUTPUT_TOKENS = 128  # a dataset row without max_tokens: what the predictor assumes it generates


@dataclass(frozen=True, slots=True)
class Requests:
    prompts: list[list[int]]
    max_tokens: list[int]
    offsets: np.ndarray  # seconds from the first send


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


def _text(item_messages: list[dict[str, object]] | None, prompt: str | None) -> str:
    if item_messages is not None:
        return "\n".join(str(m.get("content", "")) for m in item_messages)
    return prompt or ""


def at_rate(spec: RunSpec, rate: float | None) -> RunSpec:
    """The spec with its arrival rate set (a trace is rescaled to that mean rate)."""
    if rate is None:
        return spec
    load = dataclasses.replace(spec.load, arrival=dataclasses.replace(spec.load.arrival, rate=rate))
    return dataclasses.replace(spec, load=load)


def build_requests(spec: RunSpec) -> Requests:
    """ValueError (a usage error) for a workload the predictor cannot replay."""
    if not spec.load.arrival.open_loop:
        raise ValueError("predict needs an open-loop arrival (constant, poisson, gamma, ramp or a trace)")
    w = spec.workload
    trace = load_trace(w.trace, w.trace_format) if w.trace is not None else None
    schedule = run_schedule(spec.load, trace)
    if schedule is None or schedule.offsets.size == 0:
        raise ValueError("the workload's schedule holds no request")
    workload = build_workload(w, seed=spec.load.seed, embedded=True, trace=trace, rows=schedule.rows)
    if is_sessions(workload):
        raise ValueError("predict does not replay conversations (--turns) yet")
    prompts: list[list[int]] = []
    max_tokens: list[int] = []
    stride = 0
    for i in range(schedule.offsets.size):
        item = workload.item(i)  # type: ignore[union-attr]
        text = _text(item.messages, item.prompt)
        counted = item.prompt_tokens_counted or item.prompt_tokens_target or max(1, len(text.encode("utf-8")))
        stride = stride or max(1, round(len(text.encode("utf-8")) / counted))
        n = counted + (item.template_tokens or 0)  # the chat template, as the server counts the prompt
        prompts.append(text_token_ids(text, max(1, n), stride))
        max_tokens.append(item.max_tokens or DEFAULT_OUTPUT_TOKENS)
    return Requests(prompts, max_tokens, schedule.offsets.astype(np.float64))
