"""Waking the event loop at an exact instant of `perf_counter_ns`, cheaply: the runner's dispatch clock.

The loop's own timers are too coarse for dispatching at an intended send time: uvloop keeps its clock in
whole milliseconds and measures a delay from the start of the current loop iteration, so a timer fires up
to a millisecond early or late. Waiting out the rest by yielding to the loop in a busy loop is exact but
costs a core's worth of CPU for up to a millisecond per request.

On Linux, `TimerfdAlarm` arms one kernel timer (`timerfd`, on CLOCK_MONOTONIC: the clock of
`perf_counter_ns` and of every record) at the earliest pending instant, as an absolute time; the loop
watches its file descriptor like a socket, so the wake-up comes within tens of microseconds of the
instant, at the cost of two system calls. Any number of waiters share it (a heap of instants).
Elsewhere, `LoopAlarm` uses a loop timer set a millisecond early and yields to the loop for what is left.

Both never return before the instant (the caller may check `perf_counter_ns()`), and `wake_all` releases
every waiter at once (a stop).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import heapq
import itertools
import os
import sys
from time import perf_counter_ns
from typing import Protocol

_CLOCK_MONOTONIC = 1
_TFD_TIMER_ABSTIME = 1
_TFD_NONBLOCK = os.O_NONBLOCK
_TFD_CLOEXEC = os.O_CLOEXEC
_EARLY_NS = 1_000_000  # LoopAlarm: a loop timer may fire this much before its time


class Alarm(Protocol):
    async def sleep_until(self, target_ns: int) -> None: ...
    def wake_all(self) -> None: ...
    def close(self) -> None: ...


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class _Itimerspec(ctypes.Structure):
    _fields_ = [("it_interval", _Timespec), ("it_value", _Timespec)]


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.timerfd_create.argtypes = [ctypes.c_int, ctypes.c_int]
        libc.timerfd_settime.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(_Itimerspec),
                                         ctypes.c_void_p]
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _libc()


class TimerfdAlarm:
    """Waiters sleep until absolute `perf_counter_ns` instants; one timerfd is armed at the earliest."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        if _LIBC is None:
            raise OSError("timerfd is not available")
        fd = _LIBC.timerfd_create(_CLOCK_MONOTONIC, _TFD_NONBLOCK | _TFD_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "timerfd_create failed")
        self._fd = fd
        self._loop = loop
        self._heap: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._armed_ns = 0  # the instant the timer is set to; 0: disarmed
        self._spec = _Itimerspec()
        loop.add_reader(fd, self._fired)

    async def sleep_until(self, target_ns: int) -> None:
        if target_ns <= perf_counter_ns():
            return
        waiter: asyncio.Future[None] = self._loop.create_future()
        heapq.heappush(self._heap, (target_ns, next(self._order), waiter))
        if self._armed_ns == 0 or target_ns < self._armed_ns:
            self._arm(target_ns)
        await waiter

    def _arm(self, target_ns: int) -> None:
        value = self._spec.it_value
        value.tv_sec, value.tv_nsec = divmod(target_ns, 1_000_000_000)
        if _LIBC is not None and _LIBC.timerfd_settime(self._fd, _TFD_TIMER_ABSTIME, self._spec, None) != 0:
            raise OSError(ctypes.get_errno(), "timerfd_settime failed")
        self._armed_ns = target_ns

    def _fired(self) -> None:
        with contextlib.suppress(BlockingIOError):  # a re-arm raced the expiry: nothing to read
            os.read(self._fd, 8)  # the expiry count; reading it clears the readiness
        now = perf_counter_ns()
        heap = self._heap
        while heap and heap[0][0] <= now:
            waiter = heapq.heappop(heap)[2]
            if not waiter.done():
                waiter.set_result(None)
        self._armed_ns = 0
        if heap:
            self._arm(heap[0][0])

    def wake_all(self) -> None:
        for _, _, waiter in self._heap:
            if not waiter.done():
                waiter.set_result(None)
        self._heap.clear()

    def close(self) -> None:
        if self._fd < 0:
            return
        self.wake_all()
        self._loop.remove_reader(self._fd)
        os.close(self._fd)
        self._fd = -1


class LoopAlarm:
    """The portable fallback: a loop timer a millisecond early, then yield to the loop until the instant."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._waiters: set[asyncio.Future[None]] = set()
        self._woken = 0  # bumped by wake_all: waiters that began before it stop spinning

    async def sleep_until(self, target_ns: int) -> None:
        generation = self._woken
        delay_ns = target_ns - perf_counter_ns() - _EARLY_NS
        if delay_ns > 0:
            waiter: asyncio.Future[None] = self._loop.create_future()
            handle = self._loop.call_later(delay_ns / 1e9, _release, waiter)
            self._waiters.add(waiter)
            try:
                await waiter
            finally:
                handle.cancel()
                self._waiters.discard(waiter)
        while perf_counter_ns() < target_ns and generation == self._woken:  # noqa: ASYNC110 - under 1 ms
            await asyncio.sleep(0)

    def wake_all(self) -> None:
        self._woken += 1
        for waiter in list(self._waiters):
            _release(waiter)

    def close(self) -> None:
        self.wake_all()


def _release(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def make_alarm(loop: asyncio.AbstractEventLoop) -> Alarm:
    """A TimerfdAlarm where the kernel offers one, else a LoopAlarm."""
    if _LIBC is not None:
        try:
            return TimerfdAlarm(loop)
        except (OSError, NotImplementedError):  # no timerfd, or a loop that cannot watch a file descriptor
            pass
    return LoopAlarm(loop)
