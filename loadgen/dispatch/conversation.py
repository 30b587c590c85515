"""One conversation of a run with `--turns`: its turns sent one after another, each with the whole history.

A turn whose answer is a tool call is followed by an agent loop (loadgen.workload.agent), when the run has
one: the tool's latency, then a request with the calls' results, up to `--max-tool-turns` such tool turns
per planned turn, each its own record (tagged `turn_kind=tool`), numbered in the session's order.

Turn 1 leaves at the session's intended time (the schedule's, or the moment a closed-loop slot came
free). Turn k leaves `think_s` after turn k − 1's stream closed: that is its intended time, so its
dispatch lag and TTFT-from-schedule are measured from it. Its prompt is the previous turn's prompt, the
text the server actually streamed as the answer, and the turn's new message(s).

Turn k's target length is the prompt it actually sends: the history as the server counted it (the previous
turn's reported prompt and output tokens; the run's counter on it when the server reported none) plus the
new message's target. So the prompt-length check compares like with like at every turn, and the history's
text (an answer the run's counter can only estimate) is not charged to the sizing. A dataset's turns have
no target (loadgen.workload.conversations): their turns have none either.

A turn that fails, or that the client cancelled as planned (`--cancel-rate`: the user stopped the answer and
left), ends its session: each remaining turn becomes one record that was never sent (status
"cancelled", error_kind "session_ended", intended at the failure), so every planned turn is counted. A
turn cancelled by the run stopping (Ctrl-C, the end of the grace period) ends the session with no further
records: those turns were never due.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from loadgen.http import PlannedCancel, SessionEnded
from loadgen.types import Message, ToolCall, WorkItem
from loadgen.workload import TOOL_TURN_TAGS, AgentLoop, Session, Turn, assistant_turn
from metrics.records import RequestRecord


class _Anchored(Protocol):
    @property
    def anchor_ns(self) -> int: ...


class SessionRunner(Protocol):
    """What a conversation needs of the runner that dispatches it (loadgen.dispatch.runner.Runner, which imports
    this module: the interface is stated here so that the dependency goes one way)."""

    @property
    def workload(self) -> Any: ...
    @property
    def state(self) -> _Anchored: ...
    @property
    def stopping(self) -> bool: ...
    @property
    def record_ids(self) -> Iterator[int]: ...

    async def wait_until(self, target_ns: int) -> bool: ...

    async def one(self, item: WorkItem, request_id: int, intended_ns: int, *, session: int | None = None,
                  turn: int | None = None, text_out: list[str] | None = None,
                  calls_out: list[ToolCall] | None = None) -> RequestRecord: ...

    def deliver(self, record: RequestRecord) -> None: ...


async def run_session(runner: SessionRunner, index: int, session: Session, intended_ns: int) -> None:
    workload: Any = runner.workload
    counter, buster = workload.counter, workload.buster
    agent: AgentLoop | None = getattr(workload, "agent", None)
    history: list[Message] = []
    history_target = history_counted = 0
    sent = 0  # requests of this session so far: a record's turn number (tool turns count too)
    for number, turn in enumerate(session.turns, start=1):
        if number > 1:
            intended_ns += round(turn.think_s * 1e9)
            if not await runner.wait_until(runner.state.anchor_ns + intended_ns):
                return
        messages = [*history, *turn.messages]
        target = history_target + turn.target if turn.target is not None else None
        counted = history_counted + (turn.counted or 0)
        tool_turns = 0
        while True:
            item = WorkItem(messages=messages, max_tokens=turn.max_tokens, prompt_tokens_target=target,
                            prompt_tokens_counted=counted, template_tokens=counter.template_tokens(messages),
                            tags={**session.tags, **TOOL_TURN_TAGS} if tool_turns else dict(session.tags),
                            model=session.model, cancel_after_s=None if tool_turns else turn.cancel_after_s,
                            cancel_after_tokens=None if tool_turns else turn.cancel_after_tokens)
            if buster is not None:
                item = buster.apply(item, f"{index}.{number}" + (f".{tool_turns}" if tool_turns else ""))
            text: list[str] = []
            calls: list[ToolCall] | None = [] if agent is not None else None
            sent += 1
            record = await runner.one(item, next(runner.record_ids), intended_ns, session=index, turn=sent,
                                      text_out=text, calls_out=calls)
            if record.status == "error" or record.error_kind == PlannedCancel.kind:
                _not_sent(runner, index, session, number, record, sent + 1)
                return
            if record.status != "ok" or runner.stopping:
                return
            answer = "".join(text)
            answer_tokens = counter(answer)
            # Calls past the loop's bound are left out of the history: a call must be followed by its result.
            more = agent is not None and bool(calls) and tool_turns < agent.max_tool_turns
            history = [*messages, assistant_turn(answer, calls if more and calls else [])]
            history_target = sent_tokens(record, (target or 0) + answer_tokens)
            history_counted = counted + answer_tokens
            intended_ns = record.closed_ns if record.closed_ns is not None else intended_ns
            if agent is None or not more or not calls:
                break
            # An agent loop: the tool runs, then its results and the model's next turn.
            tool_turns += 1
            latency_s, results, result_tokens = agent.step(index, number, tool_turns, calls, counter)
            intended_ns += round(latency_s * 1e9)
            if not await runner.wait_until(runner.state.anchor_ns + intended_ns):
                return
            messages = [*history, *results]
            target = history_target + result_tokens
            counted = history_counted + result_tokens


def sent_tokens(record: RequestRecord, fallback: int) -> int:
    """The tokens of a turn's prompt and answer as the server counted them (its usage), `fallback` (the
    run's own count) when it reported either as an estimate."""
    if record.prompt_tokens_estimated or record.output_tokens_estimated:
        return fallback
    if record.prompt_tokens is None or record.output_tokens is None:
        return fallback
    return record.prompt_tokens + record.output_tokens


def _not_sent(runner: SessionRunner, index: int, session: Session, failed: int, record: RequestRecord,
              first_number: int | None = None) -> None:
    """One never-sent record per planned turn after the failed one (numbered from `first_number`, after
    any tool turns sent)."""
    at = record.closed_ns if record.closed_ns is not None else record.intended_ns
    what = "was cancelled as planned" if record.error_kind == PlannedCancel.kind else "failed"
    reason = SessionEnded(f"turn {record.turn or failed} of session {index} {what} ({record.error_kind}); "
                          "this turn was never sent")
    start = first_number if first_number is not None else failed + 1
    for number, turn in enumerate(session.turns[failed:], start=start):
        unsent = _unsent(next(runner.record_ids), at, index, number, turn, session.tags, reason)
        unsent.model = record.model  # the session's model, as its failed turn named it
        runner.deliver(unsent)


def _unsent(rid: int, at_ns: int, index: int, number: int, turn: Turn, tags: dict[str, str],
            reason: SessionEnded) -> RequestRecord:
    return RequestRecord(id=rid, intended_ns=at_ns, sent_ns=None, status=reason.status, error_kind=reason.kind,
                         error_message=reason.message, output_tokens_target=turn.max_tokens, tags=dict(tags),
                         session=index, turn=number)
