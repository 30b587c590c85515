"""Completions (`POST /v1/completions`): a plain prompt (a conversation's turns joined, no chat template),
the body from `loadgen.http.payload`, chat's decoder (`choices[0].text`). It takes no tools."""

from __future__ import annotations

from loadgen.http.api.chat import prompt_tokens
from loadgen.http.api.registry import Api, ProbeBody
from loadgen.http.chunks import ChunkAccumulator
from loadgen.http.payload import message_text, request_body
from loadgen.types import Message


class CompletionsProbe(ProbeBody):
    max_tokens: int
    prompt: str


def probe_body(model: str, messages: list[Message]) -> CompletionsProbe:
    return {"model": model, "max_tokens": 1, "stream": False, "prompt": message_text(messages[0])}


API = Api("completions", "completions", request_body, ChunkAccumulator, probe_body, prompt_tokens,
          chat_template=False, tools=False)
