"""The seam between the HTTP layer (refserver.api) and the engine (scheduler, KV blocks, model runner).

The HTTP layer tokenizes, calls `AsyncEngine.generate(...)`, and turns each `TokenEvent` into a
streamed chunk; it applies stop strings itself (they need detokenization) and calls `abort` then.
The engine runs its step loop off the event loop (a thread) and never blocks it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Literal, Protocol

FinishReason = Literal["stop", "length", "abort", "error"]


class QueueFullError(Exception):
    """The bounded waiting queue is full: the HTTP layer answers 429."""


@dataclass(slots=True)
class SamplingParams:
    max_tokens: int = 16
    temperature: float = 1.0  # 0 = greedy
    top_p: float = 1.0
    top_k: int = 0  # 0 or -1: off
    seed: int | None = None
    ignore_eos: bool = False
    min_tokens: int = 0
    stop_token_ids: list[int] = field(default_factory=list)


@dataclass(slots=True)
class TokenEvent:
    """What one engine step produced for one request. Times are `time.perf_counter()` seconds."""

    new_token_ids: list[int]
    finished: bool
    finish_reason: FinishReason | None
    num_prompt_tokens: int
    num_cached_tokens: int  # prompt tokens served from the prefix cache (final once prefill starts)
    arrival_s: float  # request handed to the engine
    scheduled_s: float | None  # first time the scheduler gave it a step (end of queueing)
    first_token_s: float | None  # end of the step that produced the first output token
    now_s: float  # end of the step that produced this event
    # Several new tokens, one per step (the virtual engine's fast decode): the longest gap before or between them.
    gap_max_s: float | None = None


@dataclass(slots=True)
class EngineStats:
    num_running: int
    num_waiting: int
    kv_usage: float  # fraction of KV blocks in use, 0..1
    num_free_blocks: int
    num_total_blocks: int
    prefix_queries_tokens: int  # cumulative prompt tokens looked up in the prefix cache
    prefix_hit_tokens: int  # cumulative prompt tokens found there
    num_preemptions: int  # cumulative
    block_size: int | None = None  # tokens per KV block (published as vllm:cache_config_info); None: unknown
    prefix_caching: bool | None = None


class AsyncEngine(Protocol):
    def generate(
        self, request_id: str, prompt_token_ids: list[int], params: SamplingParams
    ) -> AsyncIterator[TokenEvent]:
        """Yield events until one has `finished=True`. Raises QueueFullError before the first one."""
        ...

    def abort(self, request_id: str) -> None:
        """Stop the request and free its blocks (idempotent; unknown ids are ignored)."""
        ...

    def stats(self) -> EngineStats: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


# What an engine step yields per request: its id and its token event.
RequestEvent = tuple[str, TokenEvent]
