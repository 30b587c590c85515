"""Time accounts for a profile: wrap named functions, add up wall and thread-CPU nanoseconds per name.

A wrapper adds `perf_counter_ns` (wall) and `thread_time_ns` (CPU of the calling thread) spent inside
the call to its account; nested wrapped calls are counted in both accounts (the report subtracts).
Wrapping refuses a missing attribute, so a renamed function stops the profile instead of letting
its time fall silently into "the rest". Nothing is wrapped outside the profiling process.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Account:
    calls: int = 0
    wall_ns: int = 0
    cpu_ns: int = 0
    first_ns: int | None = None  # perf_counter_ns when the first timed call began
    last_ns: int | None = None  # ... and when the last one ended


@dataclass
class Accounts:
    active: bool = False
    by_name: dict[str, Account] = field(default_factory=dict)

    def reset(self) -> None:
        self.by_name = {}

    def get(self, name: str) -> Account:
        return self.by_name.get(name) or Account()

    def timed(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not self.active:
                return fn(*args, **kwargs)
            wall0, cpu0 = time.perf_counter_ns(), time.thread_time_ns()
            try:
                return fn(*args, **kwargs)
            finally:
                wall1, cpu1 = time.perf_counter_ns(), time.thread_time_ns()
                account = self.by_name.get(name)
                if account is None:
                    account = self.by_name[name] = Account()
                account.calls += 1
                account.wall_ns += wall1 - wall0
                account.cpu_ns += cpu1 - cpu0
                if account.first_ns is None:
                    account.first_ns = wall0
                account.last_ns = wall1

        return wrapper

    def wrap(self, owner: object, attr: str, name: str) -> None:
        """Replace `owner.attr` (a module function, a class's method or an instance's) by a timed one."""
        if not hasattr(owner, attr):
            raise AttributeError(f"cannot profile {name}: {owner!r} has no attribute {attr!r} (renamed?)")
        setattr(owner, attr, self.timed(name, getattr(owner, attr)))


def thread_cpu_ns(thread_id: int) -> int:
    """CPU time of another thread of this process (Linux: its per-thread clock)."""
    return time.clock_gettime_ns(time.pthread_getcpuclockid(thread_id))


def overhead_per_call_ns(calls: int = 20_000) -> float:
    """What one timed call costs beyond the call itself (two clock reads at each end, the bookkeeping),
    measured here because thread-CPU clocks are system calls whose price depends on the machine."""

    def nothing() -> None:
        return None

    accounts = Accounts(active=True)
    timed = accounts.timed("calibration", nothing)
    start = time.perf_counter_ns()
    for _ in range(calls):
        timed()
    wrapped = time.perf_counter_ns() - start
    start = time.perf_counter_ns()
    for _ in range(calls):
        nothing()
    bare = time.perf_counter_ns() - start
    return max(0.0, (wrapped - bare) / calls)
