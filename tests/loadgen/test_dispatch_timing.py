"""The runner's dispatch clock (loadgen.dispatch.alarm): exact wake-ups at absolute instants, stops that release
every waiter, and a run that ends when its only in-flight request stops it."""

from __future__ import annotations

import asyncio
import errno
import threading
import time

import numpy as np
import pytest
import uvloop

import loadgen.dispatch.runner as runner_module
from loadgen.dispatch.alarm import LoopAlarm, TimerfdAlarm, make_alarm
from loadgen.dispatch.recorder import RecordWriteError
from loadgen.dispatch.runner import PREPARE_AHEAD, Runner, RunPlan
from loadgen.types import WorkItem
from loadgen.workload.arrivals import parse_arrival
from loadgen.workload.lengths import parse_length
from loadgen.workload.sources import SyntheticWorkload
from loadgen.workload.text import count_words
from metrics.records.record import RequestRecord
from tests.loadgen._plans import run_plan

WORKLOAD = SyntheticWorkload(parse_length("4"), parse_length("2"), 0, "words", count_words)


def _alarms(loop: asyncio.AbstractEventLoop) -> list[TimerfdAlarm | LoopAlarm]:
    alarms: list[TimerfdAlarm | LoopAlarm] = [LoopAlarm(loop)]
    made = make_alarm(loop)
    if isinstance(made, TimerfdAlarm):
        alarms.append(made)
    else:
        made.close()
    return alarms


def test_waiters_wake_at_their_instant_never_before_in_any_order() -> None:
    """Instants armed out of order (a later one first, then earlier ones) all wake, each not before its time."""

    async def main() -> list[tuple[str, int, int]]:
        woke: list[tuple[str, int, int]] = []
        for alarm in _alarms(asyncio.get_running_loop()):
            start = time.perf_counter_ns()
            targets = [start + ms * 1_000_000 for ms in (30, 5, 20, 10, 10, 1)]

            async def one(target: int, alarm: TimerfdAlarm | LoopAlarm = alarm) -> None:
                await alarm.sleep_until(target)
                woke.append((type(alarm).__name__, target, time.perf_counter_ns()))

            await asyncio.wait_for(asyncio.gather(*(one(t) for t in targets)), timeout=10)
            alarm.close()
        return woke

    woke = uvloop.run(main())
    assert len(woke) == 6 * len({name for name, _, _ in woke})
    assert all(at >= target for _, target, at in woke)


def test_wake_all_releases_every_waiter_at_once() -> None:
    async def main() -> float:
        slowest = 0.0
        for alarm in _alarms(asyncio.get_running_loop()):
            far = time.perf_counter_ns() + 60 * 1_000_000_000
            waiters = [asyncio.ensure_future(alarm.sleep_until(far)) for _ in range(3)]
            await asyncio.sleep(0.01)
            began = time.perf_counter()
            alarm.wake_all()
            await asyncio.wait_for(asyncio.gather(*waiters), timeout=5)
            slowest = max(slowest, time.perf_counter() - began)
            alarm.close()
        return slowest

    assert uvloop.run(main()) < 1.0


class OneAtATime:
    """Requests far apart and short: at most one is in flight when a record hook fails."""

    async def send(self, item: WorkItem, *, request_id: int, intended_ns: int, anchor_ns: int) -> RequestRecord:
        await asyncio.sleep(0.005)
        return RequestRecord(id=request_id, intended_ns=intended_ns, sent_ns=intended_ns, chunk_ns=[intended_ns + 1])


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_a_run_stopped_by_its_only_in_flight_request_ends(loop: str) -> None:
    """The hook of the last request in flight stops the run; the runner must not spin on that finished task."""
    seen: list[int] = []

    def full_disk(record: RequestRecord) -> None:
        seen.append(record.id)
        if len(seen) >= 2:
            raise RecordWriteError(errno.EFBIG, "cannot write records.jsonl: File too large")

    async def main() -> int:
        arrival = parse_arrival("constant", rate=20.0, burstiness=1.0, rate_end=None, concurrency=None)
        runner = Runner(OneAtATime(), WORKLOAD, run_plan(arrival, count=50, grace_s=5.0),
                        hooks=[full_disk])
        state = await runner.run()
        assert isinstance(state.failure, RecordWriteError)
        return state.sent

    result: list[int] = []
    # In a thread: a runner that spins never yields, so no timeout inside its own loop could end the test.
    worker = threading.Thread(target=lambda: result.append((uvloop.run if loop == "uvloop" else asyncio.run)(main())),
                              daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert result, "the run did not end"
    assert result[0] == len(seen) < 50


class HeldAlarm:
    """An alarm the test releases by hand, counting the loop's passes meanwhile."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.waiters: list[tuple[int, asyncio.Future[None]]] = []
        self.passes = 0
        self._tick()

    def _tick(self) -> None:  # runs once per pass of the loop: each run schedules the next for the next pass
        self.passes += 1
        self.loop.call_soon(self._tick)

    async def sleep_until(self, target_ns: int) -> None:
        waiter = self.loop.create_future()
        self.waiters.append((target_ns, waiter))
        await waiter

    def release_due(self) -> int:
        """Wake every waiter whose instant has passed, as the kernel timer's callback does; the loop's pass."""
        now = time.perf_counter_ns()
        for target, waiter in self.waiters:
            if target <= now and not waiter.done():
                waiter.set_result(None)
        return self.passes

    def wake_all(self) -> None:
        for _, waiter in self.waiters:
            if not waiter.done():
                waiter.set_result(None)

    def close(self) -> None:
        self.wake_all()


class PassRecorder:
    def __init__(self, alarm: HeldAlarm) -> None:
        self.alarm = alarm
        self.sent_at_pass: list[int] = []

    async def send(self, item: WorkItem, *, request_id: int, intended_ns: int, anchor_ns: int) -> RequestRecord:
        self.sent_at_pass.append(self.alarm.passes)
        return RequestRecord(id=request_id, intended_ns=intended_ns, sent_ns=intended_ns, chunk_ns=[intended_ns + 1])


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_a_request_is_sent_in_the_loop_pass_right_after_its_wake_up(loop: str) -> None:
    """The wake-up releases the request's own task: it is written in the next pass of the loop, not one later
    behind whatever else came in meanwhile (a task spawned only at the wake-up would first wait a pass)."""

    async def main() -> tuple[list[int], list[int]]:
        alarm = HeldAlarm(asyncio.get_running_loop())
        sender = PassRecorder(alarm)
        arrival = parse_arrival("constant", rate=20.0, burstiness=1.0, rate_end=None, concurrency=None)
        offsets = np.array([0.02, 0.04, 0.06])
        runner = Runner(sender, WORKLOAD, RunPlan(arrival=arrival, duration_s=None, count=3, offsets=offsets))
        runner._alarm = alarm  # type: ignore[assignment]
        run = asyncio.ensure_future(runner.run())
        released: list[int] = []
        for k in range(len(offsets)):
            while len(alarm.waiters) <= k or time.perf_counter_ns() < alarm.waiters[k][0]:  # noqa: ASYNC110
                await asyncio.sleep(0.002)
            released.append(alarm.release_due())
            while len(sender.sent_at_pass) < len(released):  # noqa: ASYNC110 - passes are what is counted
                await asyncio.sleep(0)
        await asyncio.wait_for(run, timeout=10)
        return released, sender.sent_at_pass

    released, sent = (uvloop.run if loop == "uvloop" else asyncio.run)(main())
    assert [s - r for r, s in zip(released, sent, strict=True)] == [1, 1, 1]


class Journal:
    """A workload and a sender that write one journal: which request was built, which was sent."""

    def __init__(self, build_s: float = 0.0) -> None:
        self.events: list[str] = []
        self.build_s = build_s

    def item(self, index: int) -> WorkItem:
        self.events.append(f"build {index}")
        if self.build_s:
            time.sleep(self.build_s)
        return WORKLOAD.item(index)

    def describe(self) -> dict[str, str]:
        return {}

    async def send(self, item: WorkItem, *, request_id: int, intended_ns: int, anchor_ns: int) -> RequestRecord:
        self.events.append(f"send {request_id}")
        return RequestRecord(id=request_id, intended_ns=intended_ns, sent_ns=intended_ns, chunk_ns=[intended_ns + 1])


def _journal(offsets: list[float], build_s: float = 0.0) -> list[str]:
    journal = Journal(build_s)
    arrival = parse_arrival("constant", rate=20.0, burstiness=1.0, rate_end=None, concurrency=None)
    plan = RunPlan(arrival=arrival, duration_s=None, count=len(offsets), offsets=np.array(offsets))
    asyncio.run(Runner(journal, journal, plan).run())  # type: ignore[arg-type]
    return journal.events


def _batches(events: list[str]) -> list[int]:
    """How many requests were built in each run of builds."""
    sizes: list[int] = []
    for previous, event in zip(["send", *events], events, strict=False):
        if event.startswith("build"):
            if previous.startswith("send"):
                sizes.append(0)
            sizes[-1] += 1
    return sizes


def test_requests_are_built_in_batches_ahead_of_their_sends_when_there_is_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Far apart, PREPARE_AHEAD requests are built in one go before the first of them is sent, in order."""
    monkeypatch.setattr(runner_module, "PREPARE_BUDGET_NS", 10_000_000_000)
    offsets = [0.2 + 0.02 * n for n in range(PREPARE_AHEAD + 3)]
    events = _journal(offsets)
    batch = [f"build {n}" for n in range(PREPARE_AHEAD)]
    sends = [f"send {n}" for n in range(PREPARE_AHEAD)]
    rest = [f"build {n}" for n in range(PREPARE_AHEAD, len(offsets))] + [
        f"send {n}" for n in range(PREPARE_AHEAD, len(offsets))]
    assert events == batch + sends + rest


def test_a_batch_stops_building_once_its_time_budget_is_spent(monkeypatch: pytest.MonkeyPatch) -> None:
    """Requests that take 30 ms each to build, a 50 ms budget: a second request is started within the budget,
    a third would not be (the loop reads no stream while it builds). Each is built once and sent in order."""
    monkeypatch.setattr(runner_module, "PREPARE_BUDGET_NS", 50_000_000)
    offsets = [1.0 + 0.01 * n for n in range(6)]
    events = _journal(offsets, build_s=0.03)
    assert max(_batches(events)) == 2
    assert [e for e in events if e.startswith("send")] == [f"send {n}" for n in range(6)]
    assert sorted(e for e in events if e.startswith("build")) == [f"build {n}" for n in range(6)]


def test_a_request_that_alone_outlasts_the_budget_is_built_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """30 ms per request against a 20 ms budget (a long trace prompt, say): no batch ever holds two."""
    monkeypatch.setattr(runner_module, "PREPARE_BUDGET_NS", 20_000_000)
    events = _journal([1.0 + 0.01 * n for n in range(4)], build_s=0.03)
    assert events == [e for n in range(4) for e in (f"build {n}", f"send {n}")]


def test_a_request_already_due_is_built_alone_and_sent_at_once() -> None:
    """When the next request is due (here: all of them at once, already late), nothing more is built first."""
    events = _journal([0.0] * 5)
    assert events == [e for n in range(5) for e in (f"build {n}", f"send {n}")]
