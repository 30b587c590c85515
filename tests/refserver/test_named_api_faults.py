"""Fault injection on the Responses and Messages APIs: the same faults as chat, struck at the same places
(after `after_chunks` content events), in each API's stream."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from refserver.api.faults import FaultConfig
from tests.refserver.fake_engine import FakeEngine, make_app, serve_in_thread

HELLO = [{"role": "user", "content": "Say hello"}]
BODIES = {
    "/v1/responses": {"input": "Say hello", "stream": True},
    "/v1/messages": {"messages": HELLO, "max_tokens": 64, "stream": True},
}
DELTAS = ("response.output_text.delta", "content_block_delta")


def raw_stream(url: str, body: dict[str, Any]) -> tuple[str, bool]:
    """The body as far as it came, and whether it ended cleanly."""
    received: list[str] = []
    try:
        with httpx.stream("POST", url, json=body, timeout=30.0) as response:
            for text in response.iter_text():
                received.append(text)
    except httpx.RemoteProtocolError:
        return "".join(received), False
    return "".join(received), True


@pytest.mark.parametrize("path", sorted(BODIES))
def test_disconnect_after_two_content_events(path: str) -> None:
    faults = FaultConfig(disconnect=1.0, after_chunks=2)
    with serve_in_thread(make_app(FakeEngine(), faults=faults)) as url:
        text, clean = raw_stream(f"{url}{path}", BODIES[path])
    assert not clean
    assert sum(text.count(f"event: {name}\n") for name in DELTAS) == 2
    assert "response.completed" not in text and "message_stop" not in text


@pytest.mark.parametrize("path", sorted(BODIES))
def test_malformed_event_then_the_stream_goes_on(path: str) -> None:
    faults = FaultConfig(malformed=1.0, after_chunks=1, first_token_delay_s=0.05)
    with serve_in_thread(make_app(FakeEngine(), faults=faults)) as url:
        text, clean = raw_stream(f"{url}{path}", BODIES[path])
    assert clean
    blocks = text.split("\n\n")
    broken = [i for i, b in enumerate(blocks) if b.startswith('data: {"id": "broken"')]
    assert len(broken) == 1
    assert any(name in blocks[broken[0] - 1] for name in DELTAS)  # right after the first content event
    assert "response.completed" in text or "message_stop" in text
    first_delta = next(b for b in blocks if any(f"event: {name}\n" in b for name in DELTAS))
    t = float(first_delta.split('"t":')[1].split(",")[0].rstrip("}"))
    assert t >= 0.05  # the first-token delay is inside the server's own send time


@pytest.mark.parametrize(("path", "shape"), [("/v1/responses", "openai"), ("/v1/messages", "anthropic")])
def test_injected_429_in_each_apis_error_shape(path: str, shape: str) -> None:
    with serve_in_thread(make_app(FakeEngine(), faults=FaultConfig(error_429=1.0))) as url:
        response = httpx.post(f"{url}{path}", json=BODIES[path], timeout=30.0)
    assert response.status_code == 429
    body = response.json()
    if shape == "anthropic":
        assert body["type"] == "error" and body["error"]["type"] == "rate_limit_error"
    else:
        assert body["error"]["code"] == "injected_fault"
