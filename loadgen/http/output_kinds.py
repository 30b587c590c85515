"""Which kind of output each content chunk was, on the record: reasoning, answer, tool calls
(docs/metrics.md, reasoning and tool calls).

The stream's content chunks (`chunk_ns`) hold every kind; the accumulators note which chunks were
reasoning (`reasoning_at`) and which were tool-call deltas (`tool_at`). From those:

- `reasoning_ns` the first reasoning chunk, `answer_ns` the first chunk that is not reasoning (answer
  text or a tool call): TTFO counts to it;
- `tool_call_ns` the first tool-call chunk, `tool_call_done_ns` when its arguments were complete;
- `reasoning_tokens`: the server's `completion_tokens_details.reasoning_tokens` (source `usage`), else
  the reasoning chunks' share of the per-chunk tokens (source: the basis of those, the record's
  `token_source`). A server's count below the number of reasoning chunks streamed (each carried at least
  one token; 0 beside streamed reasoning is the plainest case) contradicts its own stream and is not
  taken: vLLM's `deepseek_r1` parser counts only tokens after a `<think>` the model itself generated, so a
  model whose prompt opened the thinking gets 0 or a fraction of its reasoning counted. Nor is a count
  below the stream's own in a request that streamed no answer (its every content chunk reasoning): the
  server's count would leave answer tokens that never appeared. And where the per-chunk counts are the
  server's own for every chunk (running usage, `usage_delta`; its per-chunk count, `server`), their sum
  over the reasoning chunks wins over a final detail that disagrees: vLLM's count was seen both above and
  below what its own running usage showed before the first answer delta (86 against ~190, 147 against ~100).
  None when neither is known (a request that streamed no reasoning and whose server said nothing).
"""

from __future__ import annotations

from loadgen.http.usage import Usage
from metrics.records import RequestRecord

# Per-chunk token counts the server itself gave for every chunk (running usage, its own per-chunk count):
# their sum over the reasoning chunks is what it spent reasoning, whatever its final detail says.
EXACT_PER_CHUNK = frozenset({"usage_delta", "server"})


def fill_output_kinds(record: RequestRecord, reasoning_at: list[int], tool_at: list[int], tool_calls: int,
                      tool_done_ns: int | None, usage: Usage) -> None:
    chunk_ns = record.chunk_ns or []
    if reasoning_at:
        record.reasoning_ns = chunk_ns[reasoning_at[0]]
    answer = first_answer_chunk(reasoning_at, len(chunk_ns))
    record.answer_ns = chunk_ns[answer] if answer is not None else None
    record.tool_calls = tool_calls
    record.tool_call_ns = chunk_ns[tool_at[0]] if tool_at else None
    record.tool_call_done_ns = tool_done_ns if tool_at else None
    record.reasoning_tokens, record.reasoning_tokens_source = reasoning_tokens(
        reasoning_at, record.chunk_tokens, record.token_source, usage, answered=answer is not None)


def first_answer_chunk(reasoning_at: list[int], chunks: int) -> int | None:
    """The index of the first chunk not listed in `reasoning_at` (ascending); None when every chunk is."""
    first = 0
    for at in reasoning_at:
        if at != first:
            break
        first += 1
    return first if first < chunks else None


def reasoning_tokens(reasoning_at: list[int], chunk_tokens: list[int] | None, token_source: str,
                     usage: Usage, *, answered: bool = True) -> tuple[int | None, str | None]:
    """(tokens spent reasoning, their source); see the module docstring."""
    details = usage.get("completion_tokens_details")
    told = details.get("reasoning_tokens") if isinstance(details, dict) else None
    counted = None
    if reasoning_at and chunk_tokens is not None and len(chunk_tokens) > reasoning_at[-1]:
        counted = sum(chunk_tokens[i] for i in reasoning_at)
    if counted is not None and token_source in EXACT_PER_CHUNK and told != counted:
        return counted, token_source  # the server's own running count, chunk by chunk, over its own deltas
    if type(told) is int and told >= len(reasoning_at) and (answered or counted is None or told >= counted):
        return told, "usage"
    return (counted, token_source) if counted is not None else (None, None)
