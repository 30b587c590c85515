"""A chunk's server time (`goodput.t`) is the engine's time of its tokens, not when the HTTP layer got to
build the chunk: an event loop busy while the engine stepped delivers several steps' tokens at once, and
their chunks must still be stamped the steps' ends apart."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from refserver.engine.types import SamplingParams, TokenEvent
from tests.refserver.fake_engine import DEFAULT_SCRIPT, FakeEngine, make_app, serve_in_thread, sse_payloads
from tests.refserver.named_sse import read_stream

STEP_S = 0.01


class LateEngine(FakeEngine):
    """Makes its tokens STEP_S apart as FakeEngine does, but hands a request's events over only after its
    last step, all at once (what a loop that was busy meanwhile does to them)."""

    made: list[float]

    async def generate(
        self, request_id: str, prompt_token_ids: list[int], params: SamplingParams
    ) -> AsyncIterator[TokenEvent]:
        events = [e async for e in super().generate(request_id, prompt_token_ids, params)]
        self.made = [e.now_s for e in events if e.new_token_ids]
        for event in events:
            yield event


@pytest.fixture(scope="module")
def late() -> Iterator[tuple[str, LateEngine]]:
    engine = LateEngine(step_s=STEP_S)
    with serve_in_thread(make_app(engine)) as url:
        yield url, engine


def relative(times: list[float]) -> list[float]:
    return [t - times[0] for t in times]


def check(stamps: list[float], made: list[float]) -> None:
    """One content chunk per script token: the chunks are as far apart as the engine's steps."""
    assert len(stamps) == len(DEFAULT_SCRIPT)
    assert relative(stamps) == pytest.approx(relative(made[: len(stamps)]), abs=1e-6)
    assert stamps[-1] - stamps[0] >= (len(stamps) - 1) * STEP_S * 0.9


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/completions"])
def test_chat_and_completions_chunks_carry_the_engine_times(late: tuple[str, LateEngine], path: str) -> None:
    url, engine = late
    body = {"messages": [{"role": "user", "content": "hi"}]} if "chat" in path else {"prompt": "hi"}
    response = httpx.post(f"{url}{path}", json={**body, "max_tokens": 32, "stream": True}, timeout=30.0)
    chunks = [e for e in sse_payloads(response.text) if isinstance(e, dict)]
    content = [c for c in chunks if c["goodput"]["n"] and c["choices"] and c["choices"][0]["finish_reason"] is None]
    check([c["goodput"]["t"] for c in content], engine.made)
    times = [c["goodput"]["t"] for c in chunks]
    assert times == sorted(times)


@pytest.mark.parametrize(("path", "delta"), [("/v1/responses", "response.output_text.delta"),
                                             ("/v1/messages", "content_block_delta")])
def test_responses_and_messages_events_carry_the_engine_times(
    late: tuple[str, LateEngine], path: str, delta: str
) -> None:
    url, engine = late
    body = {"input": "hi", "max_output_tokens": 32} if "responses" in path else {
        "messages": [{"role": "user", "content": "hi"}], "max_tokens": 32}
    events = read_stream(f"{url}{path}", body)
    check([e.data["goodput"]["t"] for e in events if e.name == delta], engine.made)
    times = [e.data["goodput"]["t"] for e in events]
    assert times == sorted(times)
