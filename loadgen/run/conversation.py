"""One conversation of a run with `--turns`: its turns sent one after another, each with the whole history.

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

from typing import TYPE_CHECKING, Any

from loadgen.http.errors import PlannedCancel, SessionEnded
from loadgen.types import WorkItem
from loadgen.workload.sessions import Session, Turn
from metrics.records.record import RequestRecord

if TYPE_CHECKING:
    from loadgen.run.runner import Runner


async def run_session(runner: Runner, index: int, session: Session, intended_ns: int) -> None:
    workload: Any = runner.workload
    counter, buster = workload.counter, workload.buster
    history: list[dict[str, Any]] = []
    history_target = history_counted = 0
    for number, turn in enumerate(session.turns, start=1):
        if number > 1:
            intended_ns += round(turn.think_s * 1e9)
            if not await runner.wait_until(runner.state.anchor_ns + intended_ns):
                return
        messages = [*history, *turn.messages]
        target = history_target + turn.target if turn.target is not None else None
        counted = history_counted + (turn.counted or 0)
        item = WorkItem(messages=messages, max_tokens=turn.max_tokens, prompt_tokens_target=target,
                        prompt_tokens_counted=counted, template_tokens=counter.template_tokens(messages),
                        tags=dict(session.tags), cancel_after_s=turn.cancel_after_s,
                        cancel_after_tokens=turn.cancel_after_tokens)
        if buster is not None:
            item = buster.apply(item, f"{index}.{number}")
        text: list[str] = []
        record = await runner.one(item, next(runner.record_ids), intended_ns, session=index, turn=number,
                                  text_out=text)
        if record.status == "error" or record.error_kind == PlannedCancel.kind:
            _not_sent(runner, index, session, number, record)
            return
        if record.status != "ok" or runner.stopping:
            return
        answer = "".join(text)
        answer_tokens = counter(answer)
        history = [*messages, {"role": "assistant", "content": answer}]
        history_target = sent_tokens(record, (target or 0) + answer_tokens)
        history_counted = counted + answer_tokens
        intended_ns = record.closed_ns if record.closed_ns is not None else intended_ns


def sent_tokens(record: RequestRecord, fallback: int) -> int:
    """The tokens of a turn's prompt and answer as the server counted them (its usage), `fallback` (the
    run's own count) when it reported either as an estimate."""
    if record.prompt_tokens_estimated or record.output_tokens_estimated:
        return fallback
    if record.prompt_tokens is None or record.output_tokens is None:
        return fallback
    return record.prompt_tokens + record.output_tokens


def _not_sent(runner: Runner, index: int, session: Session, failed: int, record: RequestRecord) -> None:
    """One never-sent record per turn after the failed one."""
    at = record.closed_ns if record.closed_ns is not None else record.intended_ns
    what = "was cancelled as planned" if record.error_kind == PlannedCancel.kind else "failed"
    reason = SessionEnded(f"turn {failed} of session {index} {what} ({record.error_kind}); this turn was never sent")
    for number, turn in enumerate(session.turns[failed:], start=failed + 1):
        runner.deliver(_unsent(next(runner.record_ids), at, index, number, turn, session.tags, reason))


def _unsent(rid: int, at_ns: int, index: int, number: int, turn: Turn, tags: dict[str, str],
            reason: SessionEnded) -> RequestRecord:
    return RequestRecord(id=rid, intended_ns=at_ns, sent_ns=None, status=reason.status, error_kind=reason.kind,
                         error_message=reason.message, output_tokens_target=turn.max_tokens, tags=dict(tags),
                         session=index, turn=number)
