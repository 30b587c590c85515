"""Calibration speaks the run's API: a non-streamed one-token request in that API's form, to its path,
with its headers, and the prompt tokens read from that API's usage (Messages: the three input counts)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from loadgen.http.send.probe import calibrate
from tests.loadgen._stream_server import threaded_server
from tests.servers.refusing import json_answer
from tests.servers.scripted import Action, ReceivedRequest


def _words(content: Any) -> int:
    if isinstance(content, list):
        return sum(len(str(p.get("text", "")).split()) for p in content)
    return len(str(content).split())


def server(endpoint: str, seen: list[ReceivedRequest]) -> Any:
    """Counts 1 token per word, 5 for the template and 2 more per extra message, and answers in the API's
    own usage shape."""

    def answer(request: ReceivedRequest) -> list[Action]:
        seen.append(request)
        body = request.json()
        turns = body["input"] if endpoint == "responses" else body["messages"]
        tokens = 5 + 2 * (len(turns) - 1) + sum(_words(t.get("content")) for t in turns)
        if endpoint == "responses":
            return json_answer(200, {"object": "response", "status": "incomplete",
                                     "usage": {"input_tokens": tokens, "output_tokens": 1}})
        # Anthropic: input_tokens is what the cache did not cover; the prompt is the sum of the three.
        return json_answer(200, {"type": "message", "usage": {
            "input_tokens": tokens - 4, "cache_read_input_tokens": 3, "cache_creation_input_tokens": 1,
            "output_tokens": 1}})

    return answer


@pytest.mark.parametrize(("endpoint", "max_field"), [("responses", "max_output_tokens"), ("messages", "max_tokens")])
def test_calibration_in_each_apis_form(endpoint: str, max_field: str) -> None:
    seen: list[ReceivedRequest] = []
    with threaded_server(server(endpoint, seen)) as srv:
        ratio = asyncio.run(calibrate(srv.url, "m", chat=True, api_key="k-123", endpoint=endpoint))
    assert ratio.tokens_per_word == pytest.approx(1.0) and ratio.template.one_message == 5
    assert ratio.rejected == ()
    assert {r.path for r in seen} == {f"/v1/{endpoint}"}
    assert all(r.json()[max_field] == 1 and r.json()["stream"] is False for r in seen)
    if endpoint == "messages":
        assert all(r.headers["x-api-key"] == "k-123" and r.headers["anthropic-version"] == "2023-06-01"
                   for r in seen)
    assert all(r.headers["authorization"] == "Bearer k-123" for r in seen)
