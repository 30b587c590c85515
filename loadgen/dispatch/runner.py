"""The runner: dispatches the workload on the arrival process and collects exactly one record per request.

Open loop: every intended send time is an offset from one anchor (`perf_counter_ns` at start) and the
runner sleeps until that absolute time, so lateness never accumulates; whatever lateness there is shows
up as dispatch lag (d − a) in every record. The offsets come precomputed (`RunPlan.offsets`, made once
by loadgen.workload.schedule; the runner never draws a schedule itself). Closed loop: N workers each send their next request as soon as their previous
one ends (optionally capped in rate); the intended time is when the slot came free.

Conversations (a workload of sessions, loadgen.workload.sessions): the schedule or the closed-loop slots
start sessions instead of requests, and each session sends its turns one after another
(loadgen.dispatch.conversation).

Stopping (`stop()`, wired to SIGINT/SIGTERM by the CLI): no new request is dispatched, in-flight requests
get `grace_s` to finish, the rest are cancelled (each still ends as a record, status "cancelled").

A record hook that raises (records.jsonl cannot be written: disk full; the first requests all failed
alike, loadgen.run.failing) stops the run the same way, with
`interrupted` false and the first such error in `RunState.failure`; every other hook still sees the
record, and the error is never left in a task nobody awaits.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from loadgen.dispatch.alarm import Alarm, make_alarm
from loadgen.dispatch.conversation import run_session
from loadgen.http import PlannedCancel
from loadgen.types import ToolCall, WorkItem
from loadgen.workload import AnyWorkload, Arrival, is_sessions
from metrics.records import RequestRecord


class Sender(Protocol):
    async def send(self, item: WorkItem, *, request_id: int, intended_ns: int, anchor_ns: int) -> RequestRecord: ...


class TextSender(Protocol):
    """A sender that can also hand back the streamed answer's text (conversations need it)."""

    async def send(self, item: WorkItem, *, request_id: int, intended_ns: int, anchor_ns: int,
                   text_out: list[str] | None = None) -> RequestRecord: ...


class CallSender(Protocol):
    """A sender that also hands back the tool calls an answer made (an agent loop's history)."""

    async def send(self, item: WorkItem, *, request_id: int, intended_ns: int, anchor_ns: int,
                   text_out: list[str] | None = None, calls_out: list[ToolCall] | None = None
                   ) -> RequestRecord: ...


RecordHook = Callable[[RequestRecord], None]

PREPARE_AHEAD = 8  # open loop: requests built in one go, before the first of them is sent
PREPARE_MARGIN_NS = 1_000_000  # ... the later ones only while the first is due no sooner than this,
PREPARE_BUDGET_NS = 500_000  # ... and while the batch has taken less than this


def deliver_record(state: RunState, hooks: list[RecordHook], record: RequestRecord,
                   stop: Callable[..., None]) -> None:
    """Count a finished record in `state` and hand it to every hook. A hook that raises (e.g. the record
    writer on a full disk) becomes the run's failure, the first one kept, and stops the run: `stop(interrupted=False)`."""
    state.done += 1
    if record.status != "ok" and record.error_kind != PlannedCancel.kind:  # the run's own plan is no error
        state.errors += 1
    state.records.append(record)
    for hook in hooks:
        try:
            hook(record)
        except Exception as exc:
            if state.failure is None:
                state.failure = exc
            if not state.stopping:
                stop(interrupted=False)


@dataclass(slots=True)
class RunPlan:
    arrival: Arrival
    duration_s: float | None
    count: int | None
    seed: int = 0
    grace_s: float = 10.0
    offsets: np.ndarray | None = None  # the open-loop schedule (loadgen.workload.schedule); None: a closed loop
    # A share of the run (a worker's): which entries of the schedule this runner dispatches (their index is
    # the request id), and the run's one anchor on the host's monotonic clock. None: all of it, anchored now.
    ids: np.ndarray | None = None
    anchor_ns: int | None = None


@dataclass(slots=True)
class RunState:
    """Live counters, read by the progress display and the live exporters."""

    anchor_ns: int = 0
    start_unix_s: float = 0.0
    planned: int | None = None
    sent: int = 0
    in_flight: int = 0
    done: int = 0
    errors: int = 0
    stopping: bool = False
    interrupted: bool = False
    failure: Exception | None = None  # the first error a record hook raised; it stopped dispatching
    records: list[RequestRecord] = field(default_factory=list)

    def elapsed_s(self) -> float:
        return (time.perf_counter_ns() - self.anchor_ns) / 1e9 if self.anchor_ns else 0.0


class Runner:
    def __init__(self, sender: Sender, workload: AnyWorkload, plan: RunPlan, *,
                 hooks: list[RecordHook] | None = None):
        self.sender = sender
        self.workload = workload
        self.plan = plan
        self.hooks = hooks or []
        self.state = RunState()
        self.sessions = is_sessions(workload)
        self.record_ids = itertools.count()  # conversations: one id per turn, in the order turns are made
        self._tasks: set[asyncio.Task[None]] = set()
        self._stop = asyncio.Event()
        self._offsets: np.ndarray | None = plan.offsets
        self._alarm: Alarm | None = None  # made on the first wait, inside the running loop
        if self._offsets is None and plan.arrival.open_loop:
            raise ValueError("an open-loop run is dispatched on its schedule (loadgen.workload.schedule): "
                             "the plan has no offsets")
        if self.sessions:
            self.state.planned = None  # the turns of a session are known as it starts
        elif self._offsets is not None:
            self.state.planned = int(self._offsets.size if plan.ids is None else plan.ids.size)
        elif plan.count is not None:
            self.state.planned = plan.count

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def stop(self, *, interrupted: bool = True) -> None:
        """Stop dispatching; in-flight requests get the grace period. Safe to call from a signal handler."""
        self.state.stopping = True
        self.state.interrupted = self.state.interrupted or interrupted
        self._stop.set()
        if self._alarm is not None:
            self._alarm.wake_all()

    async def run(self) -> RunState:
        self.state.anchor_ns = self.plan.anchor_ns if self.plan.anchor_ns is not None else time.perf_counter_ns()
        self.state.start_unix_s = time.time() - (time.perf_counter_ns() - self.state.anchor_ns) / 1e9
        try:
            if self._offsets is not None:
                await self._dispatch_open(self._offsets)
            else:
                await self._dispatch_closed()
            await self._drain()
        finally:
            if self._alarm is not None:
                self._alarm.close()
                self._alarm = None
        return self.state

    async def wait_until(self, target_ns: int) -> bool:
        """Sleep until an absolute time on the run's clock; False if a stop came first. Never returns early.
        The wake-up comes from `loadgen.dispatch.alarm` (a kernel timer at the exact instant on Linux): the loop's
        own timers fire up to a millisecond off, and waiting out the rest in a busy loop costs CPU."""
        if self._stop.is_set():
            return False
        if target_ns > time.perf_counter_ns():
            if self._alarm is None:
                self._alarm = make_alarm(asyncio.get_running_loop())
            await self._alarm.sleep_until(target_ns)
            while time.perf_counter_ns() < target_ns and not self._stop.is_set():  # noqa: ASYNC110 - never taken with a timerfd
                await asyncio.sleep(0)
        return not self._stop.is_set()

    async def _dispatch_open(self, offsets: np.ndarray) -> None:
        anchor = self.state.anchor_ns
        values = offsets.tolist()
        ids: Sequence[int] = range(len(values)) if self.plan.ids is None else self.plan.ids.tolist()
        ready: deque[Any] = deque()
        for k, i in enumerate(ids):
            intended_ns = round(values[i] * 1e9)
            if not ready:  # built before the wait, so building never adds to dispatch lag
                self._prepare_ahead(ids, k, anchor + intended_ns, ready)
            prepared = ready.popleft()
            # The request's own task waits for its instant and sends as soon as the wake-up releases it; were
            # it spawned only then, its first step would wait a loop iteration, behind every read that came in.
            released: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
            self._spawn(self._start_at(prepared, i, anchor + intended_ns, intended_ns, released))
            if not await released:  # set once the request is written: the next one is prepared after its send
                return

    async def _start_at(self, prepared: Any, i: int, at_ns: int, intended_ns: int,
                        released: asyncio.Future[bool]) -> None:
        try:
            go = await self.wait_until(at_ns)
            released.set_result(go)
        finally:
            if not released.done():
                released.set_result(False)
        if go:
            await self._start(prepared, i, intended_ns)

    def _prepare_ahead(self, ids: Sequence[int], k: int, due_ns: int, ready: deque[Any]) -> None:
        """Requests ids[k], ids[k+1], ... built in one go before ids[k] is sent: up to PREPARE_AHEAD of them,
        the later ones only while ids[k] is not due within PREPARE_MARGIN_NS and the batch has run for less than
        PREPARE_BUDGET_NS (the loop reads no stream meanwhile, so its reads would be stamped late; a request
        that alone takes longer, such as a long trace prompt, is built alone). Building a request runs code
        (numpy's generators, the prompt text) that an idle wait lets go cold; on a virtual machine the first
        one after a wake-up costs several times what the next ones do, so a batch costs far less CPU per
        request, and the loop is busy building fewer times."""
        until = min(due_ns - PREPARE_MARGIN_NS, time.perf_counter_ns() + PREPARE_BUDGET_NS)
        ready.append(self._prepare(ids[k]))
        for j in range(k + 1, min(len(ids), k + PREPARE_AHEAD)):
            if time.perf_counter_ns() > until:
                return
            ready.append(self._prepare(ids[j]))

    def _prepare(self, i: int) -> Any:
        """Request i, or session i of a conversation workload."""
        return self.workload.session(i) if self.sessions else self.workload.item(i)  # type: ignore[union-attr]

    async def _start(self, prepared: Any, i: int, intended_ns: int) -> None:
        if self.sessions:
            await run_session(self, i, prepared, intended_ns)
        else:
            await self.one(prepared, i, intended_ns)

    async def _dispatch_closed(self) -> None:
        from asyncio_throttle import Throttler  # type: ignore[attr-defined]

        arrival, plan = self.plan.arrival, self.plan
        throttler = Throttler(rate_limit=1, period=1.0 / arrival.rate) if arrival.rate else None
        ids = itertools.count()
        deadline_ns = self.state.anchor_ns + round(plan.duration_s * 1e9) if plan.duration_s is not None else None

        async def worker() -> None:
            while not self._stop.is_set():
                i = next(ids)
                if plan.count is not None and i >= plan.count:
                    return
                prepared = self._prepare(i)
                if throttler is not None:
                    async with throttler:
                        pass
                now = time.perf_counter_ns()
                if self._stop.is_set() or (deadline_ns is not None and now >= deadline_ns):
                    return
                await self._start(prepared, i, now - self.state.anchor_ns)

        workers = {asyncio.create_task(worker()) for _ in range(arrival.concurrency)}
        everyone = asyncio.gather(*workers, return_exceptions=True)
        stopper = asyncio.create_task(self._stop.wait())
        waiters: list[asyncio.Future[Any]] = [everyone, stopper]
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        stopper.cancel()
        if not everyone.done():
            await self._grace_then_cancel(workers)
        await everyone

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def one(self, item: WorkItem, request_id: int, intended_ns: int, *, session: int | None = None,
                  turn: int | None = None, text_out: list[str] | None = None,
                  calls_out: list[ToolCall] | None = None) -> RequestRecord:
        """Send one request and deliver its record; `text_out` receives the streamed answer's text and
        `calls_out` (when given) its tool calls."""
        st = self.state
        st.sent += 1
        st.in_flight += 1
        try:
            if text_out is None:
                record = await self.sender.send(item, request_id=request_id, intended_ns=intended_ns,
                                                anchor_ns=st.anchor_ns)
            elif calls_out is None:
                sender: TextSender = self.sender  # type: ignore[assignment]
                record = await sender.send(item, request_id=request_id, intended_ns=intended_ns,
                                           anchor_ns=st.anchor_ns, text_out=text_out)
            else:
                caller: CallSender = self.sender  # type: ignore[assignment]
                record = await caller.send(item, request_id=request_id, intended_ns=intended_ns,
                                           anchor_ns=st.anchor_ns, text_out=text_out, calls_out=calls_out)
        except asyncio.CancelledError:
            record = RequestRecord(id=request_id, intended_ns=intended_ns, sent_ns=None, status="cancelled",
                                   error_kind="client_cancelled", error_message="cancelled before a record was made",
                                   tags=dict(item.tags), prompt_tokens_target=item.prompt_tokens_target,
                                   output_tokens_target=item.max_tokens, model=item.model, images=item.images,
                                   image_pixels=item.image_pixels, image_bytes=item.image_bytes)
        finally:
            st.in_flight -= 1
        record.session, record.turn = session, turn
        self.deliver(record)
        return record

    def deliver(self, record: RequestRecord) -> None:
        """Count a finished record and hand it to every hook (also one that was never sent)."""
        deliver_record(self.state, self.hooks, record, self.stop)

    async def _grace_then_cancel(self, tasks: set[asyncio.Task[None]]) -> None:
        live = {t for t in tasks if not t.done()}
        if live:
            _, still = await asyncio.wait(live, timeout=self.plan.grace_s)
            for t in still:
                t.cancel()
            if still:
                await asyncio.gather(*still, return_exceptions=True)

    async def _drain(self) -> None:
        """Wait for in-flight requests: all of them after a natural end, `grace_s` after a stop."""
        while True:
            # A task that just finished may not have run its discard callback yet: without this, a set of only
            # finished tasks would make this loop spin without ever yielding to the loop that runs it.
            self._tasks.difference_update([t for t in self._tasks if t.done()])
            if not self._tasks:
                return
            tasks = set(self._tasks)
            if self._stop.is_set():
                await self._grace_then_cancel(tasks)
                continue
            stopper = asyncio.ensure_future(self._stop.wait())
            await asyncio.wait({*tasks, stopper}, return_when=asyncio.FIRST_COMPLETED)
            stopper.cancel()
