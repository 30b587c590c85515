"""Conversations on the Responses and Messages APIs: turn 2 sends the history in the API's own form, with
the answer as streamed (text, never the reasoning) as the assistant's turn."""

from __future__ import annotations

from typing import Any

import pytest

from loadgen.dispatch.runner import Runner
from loadgen.http.send.client import StreamingClient
from loadgen.types import ClientConfig
from loadgen.workload.arrivals import parse_arrival
from loadgen.workload.counters import make_counter
from loadgen.workload.lengths import parse_length
from loadgen.workload.sessions import SyntheticSessions
from loadgen.workload.sources import SyntheticWorkload
from loadgen.workload.think import ThinkTime
from tests.loadgen._api_streams import (
    M_STOP,
    TIMEOUTS,
    body,
    m_block_start,
    m_delta,
    m_message_delta,
    m_start,
    r_created,
    r_end,
    r_reasoning,
    r_text,
    r_usage,
    stream,
)
from tests.loadgen._plans import run_plan
from tests.servers.scripted import Action, ReceivedRequest, ScriptedServer

ANSWER = "the streamed answer"


def answer(endpoint: str) -> Any:
    def handler(_: ReceivedRequest) -> list[Action]:
        if endpoint == "responses":
            return stream(body(r_created(), r_reasoning("hmm"), r_text(ANSWER), r_end(usage=r_usage(9, 4))))
        return stream(body(m_start(9), m_block_start(0, "thinking"), m_delta(0, "thinking_delta", "hmm"),
                           m_block_start(1, "text"), m_delta(1, "text_delta", ANSWER),
                           m_message_delta("end_turn", 4), M_STOP))
    return handler


@pytest.mark.parametrize("endpoint", ["responses", "messages"])
async def test_turn_two_carries_the_streamed_answer(endpoint: str) -> None:
    name, counter = make_counter("words")
    workload = SyntheticSessions(SyntheticWorkload(parse_length("5"), parse_length("2"), 0, name, counter),
                                 parse_length("2"), ThinkTime())
    arrival = parse_arrival("constant", rate=20.0, burstiness=1.0, rate_end=None, concurrency=None)
    async with ScriptedServer(answer(endpoint)) as server:
        config = ClientConfig(base_url=server.url, model="m", endpoint=endpoint,  # type: ignore[arg-type]
                              timeouts=TIMEOUTS)
        async with StreamingClient(config) as client:
            state = await Runner(client, workload, run_plan(arrival, count=1, seed=0)).run()
        assert [r.status for r in state.records] == ["ok", "ok"]
        first, second = (r.json() for r in server.requests)
    if endpoint == "responses":
        history, turns = second["input"], first["input"]
    else:
        history, turns = second["messages"], first["messages"]
    assert history[: len(turns)] == turns
    assert history[len(turns)] == {"role": "assistant", "content": ANSWER}
    assert history[len(turns) + 1]["role"] == "user"
