"""The server timing extension: per-chunk `goodput` fields and the final chunk's phase times.

Every time is `time.perf_counter()` seconds on the server. Phases of one request:
    arrival (HTTP request received) → scheduled (first engine step that includes it)
    → first token (end of the step that produced it) → last token.
`queue_s` = scheduled − arrival (parsing and tokenization included), `prefill_s` = first token −
scheduled, `decode_s` = last token − first token. A phase that never happened is null, never 0.
`timings` follows llama.cpp's server: prompt_* describe prefill of the uncached prompt tokens,
predicted_* the generation (`predicted_per_token_ms` = decode ms / output tokens, as llama.cpp does;
TPOT as docs/metrics.md defines it is decode_s / (N − 1)).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NotRequired, TypedDict

from refserver.engine import TokenEvent


class ChunkGoodput(TypedDict):
    """`goodput` of every streamed chunk or event."""

    t: float  # server seconds since arrival
    n: int  # tokens in this chunk


class FinalGoodput(ChunkGoodput):
    """`goodput` of the last chunk (and of a non-streamed body): the phase times, null when never reached."""

    queue_s: float | None
    prefill_s: float | None
    decode_s: float | None
    cached_tokens: int


class LlamaTimings(TypedDict):
    """llama.cpp's `timings` object; a rate or time of a phase that never happened is null."""

    prompt_n: int
    cache_n: int
    prompt_ms: float | None
    prompt_per_token_ms: float | None
    prompt_per_second: float | None
    predicted_n: int
    predicted_ms: float | None
    predicted_per_token_ms: float | None
    predicted_per_second: float | None


class Stamped(TypedDict):
    """The timing extension a body or event carries after its own fields (`timings` on the last one)."""

    goodput: NotRequired[ChunkGoodput | FinalGoodput]
    timings: NotRequired[LlamaTimings]


class PromptTokensDetails(TypedDict):
    cached_tokens: int


class CompletionTokensDetails(TypedDict):
    reasoning_tokens: int


class Usage(TypedDict):
    """OpenAI's `usage` (chat and completions)."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    prompt_tokens_details: PromptTokensDetails
    completion_tokens_details: NotRequired[CompletionTokensDetails]


@dataclass(slots=True)
class RequestTimes:
    arrival_s: float
    scheduled_s: float | None = None
    first_token_s: float | None = None
    last_token_s: float | None = None
    num_prompt_tokens: int = 0
    num_cached_tokens: int = 0
    num_output_tokens: int = 0
    num_reasoning_tokens: int = 0  # of the output tokens, those streamed as reasoning

    def update(self, event: TokenEvent) -> None:
        self.scheduled_s = event.scheduled_s
        self.first_token_s = event.first_token_s
        if event.new_token_ids:
            self.last_token_s = event.now_s
        self.num_prompt_tokens = event.num_prompt_tokens
        self.num_cached_tokens = event.num_cached_tokens


def _span(start: float | None, end: float | None) -> float | None:
    if start is None or end is None:
        return None
    return max(0.0, end - start)


def queue_s(times: RequestTimes) -> float | None:
    return _span(times.arrival_s, times.scheduled_s)


def prefill_s(times: RequestTimes) -> float | None:
    return _span(times.scheduled_s, times.first_token_s)


def decode_s(times: RequestTimes) -> float | None:
    return _span(times.first_token_s, times.last_token_s)


def e2e_s(times: RequestTimes, end_s: float) -> float:
    return max(0.0, end_s - times.arrival_s)


def per_token_ms(seconds: float | None, count: int) -> float | None:
    return None if seconds is None or count <= 0 else seconds * 1000.0 / count


def per_second(count: int, seconds: float | None) -> float | None:
    return None if seconds is None or seconds <= 0.0 else count / seconds


def chunk_goodput(times: RequestTimes, now_s: float, tokens: int) -> ChunkGoodput:
    """The `goodput` object every streamed chunk carries: server seconds since arrival, tokens in it."""
    return {"t": e2e_s(times, now_s), "n": tokens}


def final_goodput(times: RequestTimes, now_s: float, tokens: int) -> FinalGoodput:
    """The last chunk's `goodput`: the per-chunk fields plus the phase times and cached tokens."""
    return {
        **chunk_goodput(times, now_s, tokens),
        "queue_s": queue_s(times),
        "prefill_s": prefill_s(times),
        "decode_s": decode_s(times),
        "cached_tokens": times.num_cached_tokens,
    }


def llama_timings(times: RequestTimes) -> LlamaTimings:
    prompt_n = max(0, times.num_prompt_tokens - times.num_cached_tokens)
    prompt = prefill_s(times)
    decode = decode_s(times)
    return {
        "prompt_n": prompt_n,
        "cache_n": times.num_cached_tokens,
        "prompt_ms": None if prompt is None else prompt * 1000.0,
        "prompt_per_token_ms": per_token_ms(prompt, prompt_n),
        "prompt_per_second": per_second(prompt_n, prompt),
        "predicted_n": times.num_output_tokens,
        "predicted_ms": None if decode is None else decode * 1000.0,
        "predicted_per_token_ms": per_token_ms(decode, times.num_output_tokens),
        "predicted_per_second": per_second(times.num_output_tokens, decode),
    }


def usage(times: RequestTimes, *, reasoning: bool = False) -> Usage:
    """OpenAI usage; `cached_tokens` is always present, also when 0 (else 0 reads as "not reported");
    `completion_tokens_details.reasoning_tokens` when the server reasons (`--reasoning-tokens`)."""
    fields: Usage = {
        "prompt_tokens": times.num_prompt_tokens,
        "completion_tokens": times.num_output_tokens,
        "total_tokens": times.num_prompt_tokens + times.num_output_tokens,
        "prompt_tokens_details": {"cached_tokens": times.num_cached_tokens},
    }
    if reasoning:
        fields["completion_tokens_details"] = {"reasoning_tokens": times.num_reasoning_tokens}
    return fields
