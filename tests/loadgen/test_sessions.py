"""Conversations: each turn re-sends the history with the answer as streamed, leaves its think time after
the previous answer, and a failed turn ends its session with the rest counted as never sent."""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from loadgen.dispatch.runner import Runner, RunPlan
from loadgen.types import WorkItem
from loadgen.workload.arrivals import parse_arrival
from loadgen.workload.bust import CacheBuster
from loadgen.workload.conversations import load_jsonl_conversations, load_sharegpt_conversations
from loadgen.workload.counters import make_counter
from loadgen.workload.lengths import parse_length
from loadgen.workload.sessions import SyntheticSessions
from loadgen.workload.sources import SyntheticWorkload
from loadgen.workload.think import ThinkTime, parse_think_time
from metrics.records.record import RequestRecord
from metrics.summary.build import REQUEST_IDENTITIES, SummaryConfig, summarize
from tests.loadgen._plans import run_plan


class TextSender:
    """Answers each turn after `delay_s` with a text of its own; fails the turns `fail(session_item)` picks."""

    def __init__(self, delay_s: float = 0.01, fail_turn: int | None = None) -> None:
        self.delay_s = delay_s
        self.fail_turn = fail_turn
        self.sent: list[tuple[int, list[dict[str, Any]], str]] = []  # (request id, messages, the answer given)

    async def send(self, item: WorkItem, *, request_id: int, intended_ns: int, anchor_ns: int,
                   text_out: list[str] | None = None) -> RequestRecord:
        sent = time.perf_counter_ns() - anchor_ns
        await asyncio.sleep(self.delay_s)
        now = time.perf_counter_ns() - anchor_ns
        turn = sum(1 for m in item.messages or [] if m["role"] == "user")
        answer = f"answer {request_id} ünïcode"
        self.sent.append((request_id, copy.deepcopy(item.messages or []), answer))
        if turn == self.fail_turn:
            return RequestRecord(id=request_id, intended_ns=intended_ns, sent_ns=sent, status="error",
                                 error_kind="http_status", http_status=500, closed_ns=now)
        assert text_out is not None
        text_out.append(answer)
        return RequestRecord(id=request_id, intended_ns=intended_ns, sent_ns=sent, chunk_ns=[now], closed_ns=now,
                             prompt_tokens_target=item.prompt_tokens_target)


def sessions(turns: str = "3", think: ThinkTime | None = None, **kw: Any) -> SyntheticSessions:
    name, counter = make_counter("words")
    base = SyntheticWorkload(parse_length("5"), parse_length("2"), 0, name, counter)
    return SyntheticSessions(base, parse_length(turns), think or ThinkTime(), **kw)


def plan(kind: str = "constant", *, rate: float | None = 20.0, concurrency: int | None = None,
         count: int = 2) -> RunPlan:
    arrival = parse_arrival(kind, rate=rate, burstiness=1.0, rate_end=None, concurrency=concurrency)
    return run_plan(arrival, count=count, seed=0)


def by_session(records: list[RequestRecord]) -> dict[int, list[RequestRecord]]:
    out: dict[int, list[RequestRecord]] = {}
    for r in sorted(records, key=lambda r: (r.session or 0, r.turn or 0)):
        assert r.session is not None
        out.setdefault(r.session, []).append(r)
    return out


async def test_each_turn_resends_the_history_with_the_streamed_answers() -> None:
    sender = TextSender()
    state = await Runner(sender, sessions("3"), plan(count=2)).run()
    assert len(state.records) == 6 and all(r.status == "ok" for r in state.records)
    sent = {rid: (messages, answer) for rid, messages, answer in sender.sent}
    for turns in by_session(state.records).values():
        assert [r.turn for r in turns] == [1, 2, 3]
        for before, after in itertools.pairwise(turns):
            prev_messages, prev_answer = sent[before.id]
            messages, _ = sent[after.id]
            # the history grew by exactly the answer as streamed, then the new user message
            assert messages[: len(prev_messages) + 1] == [*prev_messages, {"role": "assistant", "content": prev_answer}]
            assert [m["role"] for m in messages[len(prev_messages) + 1:]] == ["user"]
            assert after.prompt_tokens_target is not None and before.prompt_tokens_target is not None
            assert after.prompt_tokens_target == before.prompt_tokens_target + len(prev_answer.split()) + 5


async def test_a_turn_leaves_its_think_time_after_the_previous_answer() -> None:
    state = await Runner(TextSender(delay_s=0.02), sessions("3", ThinkTime("fixed", 0.05)), plan(count=1)).run()
    turns = by_session(state.records)[0]
    assert turns[0].intended_ns == 0
    for before, after in itertools.pairwise(turns):
        assert before.closed_ns is not None and after.sent_ns is not None
        assert after.intended_ns == before.closed_ns + 50_000_000  # measured from here: TTFT-from-schedule
        assert after.sent_ns >= after.intended_ns


async def test_open_loop_sessions_start_on_the_schedule() -> None:
    offsets = np.array([0.0, 0.1, 0.25])
    run_plan = plan(count=3)
    run_plan.offsets = offsets
    state = await Runner(TextSender(), sessions("2"), run_plan).run()
    firsts = [turns[0].intended_ns for turns in by_session(state.records).values()]
    assert firsts == [0, 100_000_000, 250_000_000]


async def test_closed_loop_keeps_c_sessions_alive() -> None:
    sender = TextSender(delay_s=0.02)
    state = await Runner(sender, sessions("3"), plan("concurrency", rate=None, concurrency=2, count=4)).run()
    grouped = by_session(state.records)
    assert sorted(grouped) == [0, 1, 2, 3] and all(len(t) == 3 for t in grouped.values())
    assert len({r.id for r in state.records}) == 12


async def test_a_failed_turn_ends_its_session_and_the_rest_are_counted_as_never_sent() -> None:
    state = await Runner(TextSender(fail_turn=2), sessions("4"), plan(count=2)).run()
    assert len(state.records) == 8
    for turns in by_session(state.records).values():
        assert [r.status for r in turns] == ["ok", "error", "cancelled", "cancelled"]
        unsent = turns[2:]
        assert all(r.sent_ns is None and r.error_kind == "session_ended" for r in unsent)
        assert all(r.intended_ns == turns[1].closed_ns for r in unsent)
        assert "turn 2" in (unsent[0].error_message or "")
    summary = summarize(state.records, SummaryConfig(), {})
    req = summary["requests"]
    assert req["records"] == 8 and req["sent"] == 4 and req["never_sent"] == 4 == req["cancelled_before_send"]
    assert req["errors"] == {"http_status": 2, "session_ended": 4}
    assert len(REQUEST_IDENTITIES) == 4
    assert summary["sessions"] == {"sessions": 2, "completed": 0, "ended_early": 2, "turns": 8, "turns_sent": 4,
                                   "turns_not_sent": 4, "turns_measured": 8,
                                   "turns_per_session": {"mean": 4.0, "max": 4}}


async def test_stopping_during_think_time_sends_no_further_turn() -> None:
    runner = Runner(TextSender(), sessions("5", ThinkTime("fixed", 5.0)), plan(count=1))
    task = asyncio.create_task(runner.run())
    await asyncio.sleep(0.2)
    runner.stop()
    state = await asyncio.wait_for(task, 5)
    assert [r.turn for r in state.records] == [1] and state.records[0].status == "ok"


async def test_cache_bust_prefixes_every_turn_but_not_the_history() -> None:
    counter = make_counter("words")[1]
    sender = TextSender()
    await Runner(sender, sessions("2", buster=CacheBuster(counter)), plan(count=1)).run()
    (_, first, _), (_, second, _) = sender.sent
    assert first[0]["content"].startswith("0.1:") and second[0]["content"].startswith("0.2:")
    assert first[0]["content"].split(" ", 1)[1] == second[0]["content"].split(" ", 1)[1]


@pytest.mark.parametrize(("text", "expected"), [
    ("2s", ThinkTime("fixed", 2.0)), ("exponential:5s", ThinkTime("exponential", 5.0)),
    ("uniform:500ms:2s", ThinkTime("uniform", 0.5, 2.0)), ("lognormal:3s:0.5", ThinkTime("lognormal", 3.0, 0.5)),
])
def test_think_times_parse_and_print_back(text: str, expected: ThinkTime) -> None:
    assert parse_think_time(text) == expected and parse_think_time(str(expected)) == expected
    draws = [expected.sample(np.random.default_rng(i)) for i in range(50)]
    assert min(draws) >= 0


@pytest.mark.parametrize("bad", ["soon", "uniform:3s:1s", "gamma:1s", "exponential:-1s", "uniform:1s"])
def test_bad_think_times_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="--think-time"):
        parse_think_time(bad)


def test_sharegpt_conversations_are_replayed_turn_by_turn(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps([{"conversations": [
        {"from": "system", "value": "be brief"}, {"from": "human", "value": "one two"},
        {"from": "gpt", "value": "a b c"}, {"from": "human", "value": "three"}, {"from": "gpt", "value": "d e"},
        {"from": "human", "value": "four"}]}, {"conversations": [{"from": "gpt", "value": "orphan"}]}]))
    (conv,) = load_sharegpt_conversations(str(path), make_counter("words")[1], {"t": "x"})
    assert [[m["content"] for m in t.messages] for t in conv.turns] == [["be brief", "one two"], ["three"], ["four"]]
    assert [t.max_tokens for t in conv.turns] == [3, 2, None] and conv.tags == {"t": "x"}


def test_jsonl_conversations_in_both_shapes(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join([
        json.dumps({"turns": [{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 8},
                              {"messages": [{"role": "user", "content": "more please"}]}], "tags": {"k": "v"}}),
        json.dumps({"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "q1"},
                                 {"role": "assistant", "content": "x y z w"}, {"role": "user", "content": "q2"}],
                    "max_tokens": 16}),
    ]) + "\n")
    first, second = load_jsonl_conversations(str(path), make_counter("words")[1], {})
    assert [t.max_tokens for t in first.turns] == [8, None] and first.tags == {"k": "v"}
    assert [[m["role"] for m in t.messages] for t in second.turns] == [["system", "user"], ["user"]]
    assert [t.max_tokens for t in second.turns] == [4, 16]


@pytest.mark.parametrize(("line", "needle"), [
    ('{"turns": []}', "'turns' must be a non-empty list"),
    ('{"messages": [{"role": "assistant", "content": "x"}]}', "at least one user message"),
    ('{"turns": [{"messages": [{"role": "user"}], "max_tokens": 0}]}', "turn 1: 'max_tokens' must be a positive"),
])
def test_bad_conversation_lines_are_named(tmp_path: Path, line: str, needle: str) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text('{"messages": [{"role": "user", "content": "fine"}]}\n' + line + "\n")
    with pytest.raises(ValueError, match=f"c.jsonl:2.*{needle}"):
        load_jsonl_conversations(str(path), make_counter("words")[1], {})
