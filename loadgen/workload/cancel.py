"""Planned cancellations (`--cancel-rate P --cancel-after DIST`): which requests a simulated user stops, and when.

A share P of the requests is cancelled by the client, as a user pressing stop in a chat window does: the
connection is closed mid-stream (loadgen.http.cancel). `--cancel-after` says when:

- a time after the request was written, in the forms of `--think-time`: `500ms`, `exponential:1s`,
  `uniform:200ms:2s`, `lognormal:1s:0.5`;
- `tokens:K`, after the K-th output token arrived, K in the forms of `--output-tokens`: `tokens:16`,
  `tokens:uniform:8:64`.

Whether request i is cancelled, and when, is drawn from its own generator (the run's seed, a stream of its
own, i; a conversation's turn adds its number), so a run with one seed cancels the same requests at the
same points whatever the worker count or the order requests are built in, and the plan never changes what
the other draws of the workload give. The plan rides on the work item (`WorkItem.cancel_after_s` or
`cancel_after_tokens`); a conversation's turn carries it in its plan (`Turn`), and a cancelled turn ends its
session as a failed turn does (loadgen.dispatch.conversation): the user who stopped the answer left.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from loadgen.seeds import item_rng
from loadgen.types import CancelDescription, WorkItem, WorkloadDescription
from loadgen.workload.lengths import LengthDist, parse_length, plain_number
from loadgen.workload.sessions import Session
from loadgen.workload.think import ThinkTime, parse_think_time
from loadgen.workload.wrapped import WrappedSessions

_CANCEL_STREAM = 5_000_011  # seeds the cancellation draws apart from every other draw of the same index
_TOKENS = "tokens:"


@dataclass(frozen=True, slots=True)
class CancelAfter:
    """When a cancelled request is closed: `time` seconds after its send, or after `tokens` output tokens."""

    time: ThinkTime | None = None
    tokens: LengthDist | None = None

    def __str__(self) -> str:
        return f"{_TOKENS}{self.tokens}" if self.tokens is not None else str(self.time)


def parse_cancel_after(text: str) -> CancelAfter:
    """`--cancel-after` → CancelAfter; ValueError with a one-line reason."""
    value = str(text).strip()
    if value.startswith(_TOKENS):
        try:
            return CancelAfter(tokens=parse_length(value[len(_TOKENS):]))
        except ValueError as exc:
            raise ValueError(f"--cancel-after: {exc} (after tokens:)") from None
    return CancelAfter(time=parse_think_time(value, "--cancel-after"))


def check_cancel_rate(rate: float) -> None:
    if not (math.isfinite(rate) and 0.0 <= rate <= 1.0):
        raise ValueError(f"--cancel-rate must be a share from 0 to 1, got {plain_number(rate)}")


def check_cancel_spec(rate: float, after: str | None) -> None:
    """The two options together; ValueError with a one-line reason."""
    check_cancel_rate(rate)
    if after is not None:
        parse_cancel_after(after)
    if rate > 0 and after is None:
        raise ValueError("--cancel-rate needs --cancel-after (when to close: 500ms, uniform:200ms:2s, tokens:16)")
    if after is not None and rate == 0:
        raise ValueError("--cancel-after needs --cancel-rate (the share of requests to cancel, e.g. 0.2)")


@dataclass(frozen=True, slots=True)
class CancelPlan:
    rate: float
    after: CancelAfter
    seed: int

    def __post_init__(self) -> None:
        check_cancel_rate(self.rate)

    def draw(self, *key: int) -> tuple[float | None, int | None]:
        """(cancel_after_s, cancel_after_tokens) of the item `key` (an index; a session and a turn): both
        None when it is not cancelled."""
        rng = item_rng(self.seed, _CANCEL_STREAM, *key)
        if not float(rng.random()) < self.rate:
            return None, None
        if self.after.tokens is not None:
            return None, self.after.tokens.sample_one(rng)
        assert self.after.time is not None
        return self.after.time.sample(rng), None

    def describe(self) -> CancelDescription:
        return {"rate": self.rate, "after": str(self.after)}


@dataclass(slots=True)
class CancellingWorkload:
    """Any workload of single requests, with the plan's cancellation on the items it draws."""

    inner: Any  # loadgen.workload.sources.Workload
    plan: CancelPlan

    @property
    def uncancelled(self) -> Any:
        return self.inner

    def item(self, index: int) -> WorkItem:
        after_s, after_tokens = self.plan.draw(index)
        item: WorkItem = self.inner.item(index)
        if after_s is None and after_tokens is None:
            return item
        return replace(item, cancel_after_s=after_s, cancel_after_tokens=after_tokens)

    def describe(self) -> WorkloadDescription:
        inner: WorkloadDescription = self.inner.describe()
        out = inner.copy()
        out["cancel"] = self.plan.describe()
        return out


@dataclass(slots=True)
class CancellingSessions(WrappedSessions):
    """A conversation workload whose turns carry the plan's cancellation (drawn per session and turn)."""

    plan: CancelPlan

    def session(self, index: int) -> Session:
        session: Session = self.inner.session(index)
        turns = []
        for number, turn in enumerate(session.turns, start=1):
            after_s, after_tokens = self.plan.draw(index, number)
            turns.append(replace(turn, cancel_after_s=after_s, cancel_after_tokens=after_tokens))
        return replace(session, turns=turns)  # its tags and model kept

    def describe(self) -> WorkloadDescription:
        inner: WorkloadDescription = self.inner.describe()
        out = inner.copy()
        out["cancel"] = self.plan.describe()
        return out


def with_cancellations(workload: Any, *, rate: float, after: str | None, seed: int, sessions: bool) -> Any:
    """`workload` with the plan applied (itself when the rate is 0 or no `--cancel-after` was given)."""
    if not rate or after is None:
        return workload
    plan = CancelPlan(rate, parse_cancel_after(after), seed)
    return CancellingSessions(workload, plan) if sessions else CancellingWorkload(workload, plan)
