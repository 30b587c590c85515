"""Handlers for tests/servers/scripted.py that answer as real servers answer requests they refuse or
do not honour, byte for byte in the parts goodput reads (the shapes are the servers' public behaviour):

- vLLM, a model it does not serve: 404 `{"error": {"message": "The model `x` does not exist.",
  "type": "NotFoundError", "param": "model", "code": 404}}`;
- `transformers serve`, a field it does not know (`ignore_eos`): FastAPI's 422 `{"detail": "Unexpected keys in
  the request: {'ignore_eos'}"}`;
- an OpenAI-style server given a wrong key: 401 quoting the key it was sent ("Incorrect API key provided: …");
- llama.cpp's server, which accepts `ignore_eos` yet ends a stream with finish_reason "stop" early.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from tests.servers.scripted import (
    DONE,
    END,
    Action,
    ReceivedRequest,
    Send,
    chat_chunk,
    chunk,
    event,
    head,
    usage,
)

Handler = Callable[[ReceivedRequest], list[Action]]


def json_answer(status: int, body: Any) -> list[Action]:
    data = orjson.dumps(body)
    return [Send(head(status, "application/json", chunked=False, length=len(data)) + data)]


def stream(tokens: int, *, finish_reason: str = "length", first_s: float = 0.0, gap_s: float = 0.0,
           prompt_tokens: int = 8) -> list[Action]:
    """A chat stream of `tokens` one-token chunks with running usage, then the finish chunk and [DONE]."""
    actions: list[Action] = [Send(head())]
    for j in range(tokens):
        actions.append(Send(chunk(event(chat_chunk(" tok", usage=usage(prompt_tokens, j + 1)))),
                            at_s=first_s + j * gap_s))
    final = chat_chunk(finish_reason=finish_reason, usage=usage(prompt_tokens, tokens))
    actions.append(Send(chunk(event(final)) + chunk(DONE) + END, at_s=first_s + tokens * gap_s))
    return actions


def posts_only(handler: Handler) -> Handler:
    """No GET route here (`/v1/models`, `/metrics`): 404, as a server without one answers."""

    def answer(request: ReceivedRequest) -> list[Action]:
        if request.method != "POST":
            return json_answer(404, {"detail": "Not Found"})
        return handler(request)

    return answer


def max_tokens(request: ReceivedRequest) -> int:
    return int(request.json().get("max_tokens") or 4)


def vllm(served: str) -> Handler:
    """vLLM serving `served`: a request naming another model gets vLLM's 404."""

    def handler(request: ReceivedRequest) -> list[Action]:
        model = request.json().get("model")
        if model is not None and model != served:
            return json_answer(404, {"error": {"message": f"The model `{model}` does not exist.",
                                               "type": "NotFoundError", "param": "model", "code": 404}})
        return stream(max_tokens(request))

    return posts_only(handler)


TRANSFORMERS_KEYS = frozenset({"model", "messages", "max_tokens", "stream", "stream_options", "temperature",
                               "seed", "top_p", "stop", "max_completion_tokens"})


@posts_only
def transformers_serve(request: ReceivedRequest) -> list[Action]:
    """`transformers serve`: a body with a key it does not know is refused with FastAPI's 422."""
    unexpected = set(request.json()) - TRANSFORMERS_KEYS
    if unexpected:
        return json_answer(422, {"detail": f"Unexpected keys in the request: {unexpected}"})
    return stream(max_tokens(request))


def echoes_key(preamble: int = 0) -> Handler:
    """An OpenAI-style 401 that quotes the bearer token it was sent, after `preamble` characters (so that a
    long one puts the quote across the client's message bound)."""

    def handler(request: ReceivedRequest) -> list[Action]:
        key = request.headers.get("authorization", "").removeprefix("Bearer ")
        said = "x" * preamble + f" Incorrect API key provided: {key}. You can find your API key at " \
            "https://example.invalid/keys."
        return json_answer(401, {"error": {"message": said.strip(), "type": "invalid_request_error", "param": None,
                                           "code": "invalid_api_key"}})

    return posts_only(handler)


def llama_cpp_stops_early(tokens: int) -> Handler:
    """llama.cpp's server: `ignore_eos` accepted, yet the stream ends with "stop" after `tokens` tokens."""

    def handler(request: ReceivedRequest) -> list[Action]:
        return stream(min(tokens, max_tokens(request)), finish_reason="stop")

    return posts_only(handler)
