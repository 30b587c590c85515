"""One request's raw truth, as the load generator saw it: the `records.jsonl` line format.

Every time is an integer number of nanoseconds on one monotonic clock (`time.perf_counter_ns`),
relative to the run's anchor (the `anchor` of the run header), so records from one run compare
exactly and a record never depends on wall time. The wall-clock time of the anchor is kept once per run
in `summary.json` (`run.start_unix_s`) for correlating with servers.

Symbols follow docs/metrics.md: `a` = `intended_ns`, `d` = `sent_ns`, `c_j` = `chunk_ns[j]`,
`k_j` = `chunk_tokens[j]`, `N` = `output_tokens`, `P` = `prompt_tokens`, `C` = `cached_tokens`.
A conversation's turns (`goodput run --turns`) carry their `session` and 1-based `turn`; every other
record has null there.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import orjson

if TYPE_CHECKING:
    from metrics.results import JsonObject

RECORD_VERSION = 1

Status = Literal["ok", "error", "cancelled"]

# Where the per-chunk token counts k_j (and N when the server gave no usage) came from, best first.
# The client computes the split ones after the stream ends (loadgen.http.chunk_tokens).
TokenSource = Literal[
    "usage_delta",  # running usage (continuous_usage_stats): k_j = Δ completion_tokens
    "server",  # the server's own per-chunk token count (reference server timing extension)
    "final_split_by_tokenizer",  # final usage N, split by tokenizing each chunk's text with the run's tokenizer
    "final_split_by_text_length",  # final usage N, split in proportion to each chunk's text length
    "final_only",  # final usage N, no content chunk to split it over (older records: split unknown)
    "estimate_tokenizer",  # no usage: N and k_j from tokenizing the received text (N estimated)
    "estimate_token_events",  # no usage, no tokenizer: one token per event, empty-content ones included
    "estimate_token_events_tokenizer_low",  # no usage: one token per event, the tokenizer counted fewer
    "estimate_token_events_tokenizer_high",  # no usage: one token per event, the tokenizer counted far more
    "estimate",  # older records: nothing from the server, one token per content chunk
]


@dataclass(slots=True)
class RequestRecord:
    """Everything the metrics (docs/metrics.md) need about one request. Exactly one record per request sent."""

    id: int
    intended_ns: int  # a: scheduled send time (closed loop: the time the slot became free)
    sent_ns: int | None  # d: just before the request was written; None if it never left the client
    status: Status = "ok"
    error_kind: str | None = None  # a leaf name from loadgen.http.errors, e.g. "http_status", "timeout_between_chunks"
    error_message: str | None = None
    http_status: int | None = None
    # Content chunks only: deltas carrying content / reasoning_content / reasoning / tool_calls.
    chunk_ns: list[int] = field(default_factory=list)
    chunk_tokens: list[int] | None = None  # k_j per content chunk; None when the split is unknown
    token_source: TokenSource = "estimate"
    output_tokens: int | None = None  # N: final usage.completion_tokens, else the estimate of token_source
    output_tokens_estimated: bool = True
    # No usage and a tokenizer: both counts N was chosen between (token_source says which won and why).
    output_tokens_by_events: int | None = None  # one token per token event, empty-content ones included
    output_tokens_by_tokenizer: int | None = None  # the received text tokenized, each U+FFFD one token
    prompt_tokens: int | None = None  # P: usage.prompt_tokens, else the client's count of what it sent
    prompt_tokens_estimated: bool = True
    prompt_tokens_target: int | None = None  # what the workload aimed for
    cached_tokens: int | None = None  # C: None means the server did not say (never read as zero)
    finish_reason: str | None = None
    first_byte_ns: int | None = None  # response headers received
    closed_ns: int | None = None  # stream closed ([DONE], clean end, or failure)
    output_tokens_target: int | None = None  # max_tokens asked for
    tags: dict[str, str] = field(default_factory=dict)  # scenario, tenant, ...
    # Server-reported timing, when the server sends it (reference server extension, llama.cpp timings).
    server_chunk_s: list[float] | None = None  # server seconds since arrival, per content chunk
    server: JsonObject | None = None  # final-chunk figures: queue_s, prefill_s, decode_s, timings
    worker: int = 0
    session: int | None = None  # the conversation this request is a turn of (--turns); None: a lone request
    turn: int | None = None  # 1-based turn within that conversation
    # Reasoning models and tool calls (docs/metrics.md). chunk_ns holds every content chunk (answer text,
    # reasoning, tool-call deltas); these stamps say which came first of each kind, on the same clock.
    reasoning_ns: int | None = None  # first reasoning (thinking) delta; None: the request did not reason
    answer_ns: int | None = None  # first answer text or tool-call delta (TTFO = answer_ns - sent_ns)
    reasoning_tokens: int | None = None  # tokens spent reasoning; None: unknown (never read as zero)
    reasoning_tokens_source: str | None = None  # "usage" (the server's details) or the counter's basis
    tool_calls: int = 0  # tool calls the answer made
    tool_call_ns: int | None = None  # first tool-call delta
    tool_call_done_ns: int | None = None  # the first call's arguments complete (its block or item closed)
    model: str | None = None  # the model this request named (None in records written before model mixes)
    # Image inputs (--images): how many, their total pixels and encoded bytes as sent.
    images: int = 0
    image_pixels: int = 0
    image_bytes: int = 0
    # A planned client-side cancellation (--cancel-rate): when the client was to close the stream (ns since
    # the anchor; for `tokens:K` the stamp of the chunk that reached K). status "cancelled" when it did.
    cancel_at_ns: int | None = None

    def to_json(self) -> bytes:
        """One `records.jsonl` line, newline included."""
        return orjson.dumps(asdict(self), option=orjson.OPT_APPEND_NEWLINE)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RequestRecord:
        known = {k: v for k, v in data.items() if k in _FIELDS}
        return cls(**known)


_FIELDS = frozenset(RequestRecord.__dataclass_fields__)


def read_records(path: str) -> list[RequestRecord]:
    """Read a `records.jsonl`, skipping a torn last line (a run killed mid-write loses only that)."""
    records: list[RequestRecord] = []
    with open(path, "rb") as f:
        for line in f:
            if not line.strip():
                continue
            try:
                data = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(data, dict) and "id" in data:
                records.append(RequestRecord.from_dict(data))
    return records
