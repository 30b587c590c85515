"""The request watchdog: one timer for the four timeouts, armed once for a request that ends in time,
moved only when a phase brings its deadline forward."""

from __future__ import annotations

import asyncio
from time import perf_counter_ns
from typing import Any

import pytest

from loadgen.http.deadlines import Watchdog
from loadgen.http.errors import BetweenChunksTimedOut, FirstByteTimedOut, TotalTimedOut
from loadgen.types import Timeouts


class CountedTimers:
    """Counts the loop's `call_later` calls while the test runs."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.delays: list[float] = []
        loop = asyncio.get_running_loop()
        original = loop.call_later

        def call_later(delay: float, callback: Any, *args: Any) -> asyncio.TimerHandle:
            self.delays.append(delay)
            return original(delay, callback, *args)

        monkeypatch.setattr(loop, "call_later", call_later)


async def _idle() -> None:
    await asyncio.sleep(3600)


async def test_a_request_that_ends_in_time_arms_one_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    timers = CountedTimers(monkeypatch)
    task = asyncio.ensure_future(_idle())
    start = perf_counter_ns()
    dog = Watchdog(Timeouts(), task=task, start_ns=start)  # first byte 600 s, between chunks 120 s, total 1800 s
    dog.request_written(start + 1_000)
    dog.headers_received(start + 2_000)
    dog.last_read_ns = start + 3_000
    dog.stop()
    task.cancel()
    assert len(timers.delays) == 1
    assert timers.delays[0] == pytest.approx(120.0)  # the shortest limit, from the call: no deadline comes sooner


async def test_no_limits_no_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    timers = CountedTimers(monkeypatch)
    task = asyncio.ensure_future(_idle())
    start = perf_counter_ns()
    dog = Watchdog(Timeouts(connect_s=None, first_byte_s=None, between_chunks_s=None, total_s=None), task=task,
                   start_ns=start)
    dog.request_written(start)
    dog.headers_received(start)
    task.cancel()
    assert timers.delays == []


async def _expiry(timeouts: Timeouts, *, headers_after_s: float | None) -> tuple[type | None, float, float]:
    """Run a watchdog over a request written at once whose headers come after `headers_after_s` (never when
    None) and no body: (the deadline that expired, seconds from the write to headers, to the expiry)."""
    task = asyncio.ensure_future(_idle())
    start = perf_counter_ns()
    dog = Watchdog(timeouts, task=task, start_ns=start)
    dog.request_written(perf_counter_ns())
    written = perf_counter_ns()
    headers = float("nan")
    if headers_after_s is not None:
        await asyncio.sleep(headers_after_s)
        now = perf_counter_ns()
        dog.headers_received(now)
        headers = (now - written) / 1e9
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)
    return dog.expired, headers, (perf_counter_ns() - written) / 1e9


async def test_the_first_byte_deadline_holds_after_an_earlier_wake_up() -> None:
    # Armed at the call + 0.05 s (between chunks, the shortest); it wakes, finds nothing due, and waits on.
    expired, _, after = await _expiry(Timeouts(first_byte_s=0.2, between_chunks_s=0.05, total_s=30),
                                      headers_after_s=None)
    assert expired is FirstByteTimedOut
    assert after >= 0.2


async def test_a_phase_that_brings_its_deadline_forward_moves_the_timer() -> None:
    # After the early wake-up the timer waits for the first byte (0.5 s after the write); the headers come
    # at 0.1 s and bring the between-chunks deadline forward to 0.15 s, long before 0.5 s.
    expired, headers, after = await _expiry(Timeouts(first_byte_s=0.5, between_chunks_s=0.05, total_s=30),
                                            headers_after_s=0.1)
    assert expired is BetweenChunksTimedOut
    assert headers + 0.05 <= after < 0.45


async def test_the_total_deadline_expires_first_when_it_is_the_shortest() -> None:
    expired, _, after = await _expiry(Timeouts(first_byte_s=10, between_chunks_s=10, total_s=0.1),
                                      headers_after_s=0.02)
    assert expired is TotalTimedOut
    assert after >= 0.1
