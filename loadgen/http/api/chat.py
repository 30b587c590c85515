"""Chat Completions (`POST /v1/chat/completions`): the body from `loadgen.http.payload`, the stream
decoded by `loadgen.http.chunks.ChunkAccumulator` (chat's chunk shape, the client's hot path: running
usage, `reasoning_content` / `reasoning` deltas as reasoning, `delta.tool_calls` as tool calls)."""

from __future__ import annotations

from loadgen.http.api.registry import Api, ProbeAnswer, ProbeBody
from loadgen.http.chunks import ChunkAccumulator
from loadgen.http.payload import request_body
from loadgen.types import Message


class ChatProbe(ProbeBody):
    max_tokens: int
    messages: list[Message]


def probe_body(model: str, messages: list[Message]) -> ChatProbe:
    return {"model": model, "max_tokens": 1, "stream": False, "messages": messages}


def prompt_tokens(answer: ProbeAnswer) -> int | None:
    """`usage.prompt_tokens` of a non-streamed chat or completions answer."""
    usage = answer.get("usage")
    prompt = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    return prompt if type(prompt) is int else None


API = Api("chat", "chat/completions", request_body, ChunkAccumulator, probe_body, prompt_tokens)
