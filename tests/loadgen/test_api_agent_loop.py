"""Agent loops: in a conversation, a turn that ends in a tool call is followed, after the tool's latency, by
the tool's result and the model's next turn, up to --max-tool-turns per turn; each tool turn is its own
record, tagged and numbered in the session's order, and the history carries the calls as streamed."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from loadgen.cli import run_cli
from loadgen.dispatch.runner import Runner
from loadgen.http.send.client import StreamingClient
from loadgen.types import ClientConfig, WorkItem
from loadgen.workload.agent import AgentLoop
from loadgen.workload.arrivals import parse_arrival
from loadgen.workload.counters import make_counter
from loadgen.workload.lengths import parse_length
from loadgen.workload.sessions import SyntheticSessions
from loadgen.workload.sources import SyntheticWorkload
from loadgen.workload.think import ThinkTime
from metrics.records.record import RequestRecord
from tests.loadgen._api_streams import (
    M_STOP,
    TIMEOUTS,
    body,
    m_block_start,
    m_block_stop,
    m_delta,
    m_message_delta,
    m_start,
    r_args,
    r_args_done,
    r_created,
    r_end,
    r_item,
    r_text,
    r_usage,
    stream,
)
from tests.loadgen._plans import run_plan
from tests.servers.scripted import (
    DONE,
    END,
    Action,
    ReceivedRequest,
    ScriptedServer,
    Send,
    chat_chunk,
    chunk,
    event,
    head,
)

LATENCY_S = 0.05
CALL = {"id": "call_7", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "x"}'}}


class ToolCaller:
    """Answers a user's message with a tool call, and a tool's result with text (or always calls)."""

    def __init__(self, *, always: bool = False) -> None:
        self.always = always
        self.sent: list[tuple[WorkItem, int, int]] = []  # (item, sent_ns, closed_ns)

    async def send(self, item: WorkItem, *, request_id: int, intended_ns: int, anchor_ns: int,
                   text_out: list[str] | None = None, calls_out: list[dict[str, Any]] | None = None) -> RequestRecord:
        sent = time.perf_counter_ns() - anchor_ns
        await asyncio.sleep(0.005)
        closed = time.perf_counter_ns() - anchor_ns
        self.sent.append((item, sent, closed))
        calls = self.always or (item.messages or [{}])[-1].get("role") == "user"
        assert text_out is not None and calls_out is not None
        text_out.append("" if calls else "done")
        if calls:
            calls_out.append(CALL)
        return RequestRecord(id=request_id, intended_ns=intended_ns, sent_ns=sent, chunk_ns=[closed], closed_ns=closed,
                             tool_calls=int(calls), tags=dict(item.tags))


async def _run(sender: Any, max_tool_turns: int) -> list[RequestRecord]:
    name, counter = make_counter("words")
    agent = AgentLoop(ThinkTime("fixed", LATENCY_S), parse_length("8"), max_tool_turns, seed=1)
    workload = SyntheticSessions(SyntheticWorkload(parse_length("5"), parse_length("2"), 0, name, counter),
                                 parse_length("2"), ThinkTime(), agent=agent)
    arrival = parse_arrival("constant", rate=20.0, burstiness=1.0, rate_end=None, concurrency=None)
    state = await Runner(sender, workload, run_plan(arrival, count=1, seed=0)).run()
    return sorted(state.records, key=lambda r: r.turn or 0)


async def test_a_tool_call_is_answered_after_the_tools_latency() -> None:
    sender = ToolCaller()
    records = await _run(sender, max_tool_turns=2)
    assert [r.turn for r in records] == [1, 2, 3, 4] and all(r.status == "ok" for r in records)
    assert [r.tags.get("turn_kind") for r in records] == [None, "tool", None, "tool"]
    (first, _, closed), (tool_turn, sent, _) = sender.sent[0], sender.sent[1]
    assert sent - closed >= LATENCY_S * 1e9  # the tool ran for its latency before the next request
    assert tool_turn.messages is not None and first.messages is not None
    assert tool_turn.messages[: len(first.messages)] == first.messages
    call_turn, result = tool_turn.messages[len(first.messages):]
    assert call_turn == {"role": "assistant", "content": None, "tool_calls": [CALL]}
    assert result["role"] == "tool" and result["tool_call_id"] == "call_7" and len(result["content"].split()) == 8
    assert tool_turn.prompt_tokens_counted == first.prompt_tokens_counted + 8  # the result's words on top


async def test_the_loop_stops_at_max_tool_turns_and_leaves_the_last_call_out_of_the_history() -> None:
    sender = ToolCaller(always=True)
    records = await _run(sender, max_tool_turns=2)
    assert len(records) == 6  # each of the 2 turns: itself and 2 tool turns
    next_user_turn = sender.sent[3][0].messages or []
    assert next_user_turn[-2] == {"role": "assistant", "content": ""}  # its call was never answered: left out
    assert next_user_turn[-1]["role"] == "user"


async def test_without_a_loop_a_tool_call_ends_the_turn() -> None:
    sender = ToolCaller()
    records = await _run(sender, max_tool_turns=0)
    assert [r.turn for r in records] == [1, 2] and all(r.tags.get("turn_kind") is None for r in records)
    assert (sender.sent[1][0].messages or [])[-2] == {"role": "assistant", "content": ""}


def _answers(endpoint: str) -> Any:
    """First request: a tool call with streamed arguments; a request carrying its result: text."""

    def handler(request: ReceivedRequest) -> list[Action]:
        data = request.json()
        answered = "tool_call_id" in request.body.decode() or b"function_call_output" in request.body \
            or b"tool_result" in request.body
        if endpoint == "responses":
            if answered:
                return stream(body(r_created(), r_text("sunny"), r_end(usage=r_usage(30, 1))))
            return stream(body(r_created(), r_item("added", "function_call", name="lookup", call_id="fc_1", arguments=""),
                               r_args('{"q": '), r_args('"x"}'), r_args_done('{"q": "x"}'), r_end(usage=r_usage(20, 6))))
        if endpoint == "messages":
            if answered:
                return stream(body(m_start(30), m_block_start(0, "text"), m_delta(0, "text_delta", "sunny"),
                                   m_message_delta("end_turn", 1), M_STOP))
            return stream(body(m_start(20), m_block_start(0, "tool_use", id="toolu_1", name="lookup"),
                               m_delta(0, "input_json_delta", '{"q": '), m_delta(0, "input_json_delta", '"x"}'),
                               m_block_stop(0), m_message_delta("tool_use", 6), M_STOP))
        assert data["messages"]
        if answered:
            objs = [chat_chunk("sunny", finish_reason="stop")]
        else:
            objs = [chat_chunk(None, tool_calls=[{"index": 0, "id": "call_1", "type": "function",
                                                  "function": {"name": "lookup", "arguments": '{"q": '}}]),
                    chat_chunk(None, tool_calls=[{"index": 0, "function": {"arguments": '"x"}'}}]),
                    chat_chunk(None, finish_reason="tool_calls")]
        return [Send(head()), Send(chunk(b"".join(event(o) for o in objs)) + chunk(DONE) + END)]

    return handler


@pytest.mark.parametrize("endpoint", ["chat", "responses", "messages"])
async def test_the_streamed_call_goes_back_in_each_apis_form(endpoint: str) -> None:
    name, counter = make_counter("words")
    agent = AgentLoop(ThinkTime(), parse_length("4"), 1, seed=1)
    workload = SyntheticSessions(SyntheticWorkload(parse_length("5"), parse_length("2"), 0, name, counter),
                                 parse_length("1"), ThinkTime(), agent=agent)
    arrival = parse_arrival("constant", rate=20.0, burstiness=1.0, rate_end=None, concurrency=None)
    async with ScriptedServer(_answers(endpoint)) as server:
        config = ClientConfig(base_url=server.url, model="m", endpoint=endpoint,  # type: ignore[arg-type]
                              timeouts=TIMEOUTS)
        async with StreamingClient(config) as client:
            state = await Runner(client, workload, run_plan(arrival, count=1, seed=0)).run()
        second = server.requests[1].json()
    records = sorted(state.records, key=lambda r: r.turn or 0)
    assert [(r.status, r.tool_calls) for r in records] == [("ok", 1), ("ok", 0)]
    assert records[0].finish_reason == "tool_calls" and records[1].tags.get("turn_kind") == "tool"
    if endpoint == "chat":
        assert second["messages"][-2]["tool_calls"] == [{"id": "call_1", "type": "function",
                                                         "function": {"name": "lookup", "arguments": '{"q": "x"}'}}]
        assert second["messages"][-1]["role"] == "tool" and second["messages"][-1]["tool_call_id"] == "call_1"
    elif endpoint == "responses":
        assert second["input"][-2] == {"type": "function_call", "call_id": "fc_1", "name": "lookup",
                                       "arguments": '{"q": "x"}'}
        assert second["input"][-1]["type"] == "function_call_output" and second["input"][-1]["call_id"] == "fc_1"
    else:
        assert second["messages"][-2] == {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"q": "x"}}]}
        assert second["messages"][-1]["content"][0]["type"] == "tool_result"
        assert second["messages"][-1]["content"][0]["tool_use_id"] == "toolu_1"


def test_agent_options_are_checked(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["run", "--url", "http://127.0.0.1:9", "--model", "m", "--print-config"]
    assert run_cli([*base, "--max-tool-turns", "-1"]) == 2
    assert "--max-tool-turns must be >= 0" in capsys.readouterr().err
    assert run_cli([*base, "--tool-latency", "soon"]) == 2
    assert "--tool-latency" in capsys.readouterr().err
    assert run_cli([*base, "--tool-latency", "exponential:2s", "--tool-result-tokens", "uniform:10:20"]) == 0
    printed = capsys.readouterr().out
    assert "exponential:2s" in printed and "uniform:10:20" in printed
