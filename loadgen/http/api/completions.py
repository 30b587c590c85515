"""Completions (`POST /v1/completions`): a plain prompt (a conversation's turns joined, no chat template),
the body from `loadgen.http.payload`, chat's decoder (`choices[0].text`). It takes no tools."""

from __future__ import annotations

from typing import Any

from loadgen.http.api.chat import prompt_tokens
from loadgen.http.api.registry import Api
from loadgen.http.chunks import ChunkAccumulator
from loadgen.http.payload import request_body


def probe_body(model: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"model": model, "max_tokens": 1, "stream": False, "prompt": messages[0]["content"]}


API = Api("completions", "completions", request_body, ChunkAccumulator, probe_body, prompt_tokens,
          chat_template=False, tools=False)
