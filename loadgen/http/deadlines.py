"""One timer per request that enforces the four timeouts of `loadgen.types.Timeouts`.

httpx has a single read timeout for headers and body alike, re-armed on every read; that costs a
cancel scope and a timer per chunk and cannot tell "no first byte" from "stalled between chunks".
Instead the client only stores the time of each read (`last_read_ns`, an attribute write it pays
anyway for the chunk timestamp) and this watchdog's single timer wakes when the earliest deadline
could have passed, re-checks, and either sleeps again or cancels the request's task, recording which
deadline expired. The client then `uncancel()`s and reports that timeout kind.

Phases: before the request is written only `total_s` runs (from the call); once written,
`first_byte_s` and `total_s` (now from the write); once headers arrive, `between_chunks_s`
(from the latest read, headers included) and `total_s`.

The timer is armed once, at the call plus the shortest limit: no phase's deadline can come sooner, since
every phase starts at or after the call. A phase change moves the timer only when its deadline is earlier
than the armed one, so a request that ends within its shortest limit arms and cancels one timer in all.
"""

from __future__ import annotations

import asyncio
from time import perf_counter_ns

from loadgen.http.errors import BetweenChunksTimedOut, FirstByteTimedOut, RequestTimedOut, TotalTimedOut
from loadgen.types import Timeouts

_NEVER = 1 << 62


def _ns(seconds: float | None) -> int:
    return _NEVER if seconds is None else int(seconds * 1e9)


class Watchdog:
    __slots__ = (
        "_armed_ns",
        "_between",
        "_first_byte",
        "_handle",
        "_loop",
        "_phase",
        "_phase_start",
        "_task",
        "_total",
        "_total_from",
        "expired",
        "last_read_ns",
    )

    def __init__(self, timeouts: Timeouts, *, task: asyncio.Task[object], start_ns: int) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = task
        self._first_byte = _ns(timeouts.first_byte_s)
        self._between = _ns(timeouts.between_chunks_s)
        self._total = _ns(timeouts.total_s)
        self._total_from = start_ns
        self._phase: type[RequestTimedOut] | None = None  # the phase deadline's error, None before writing
        self._phase_start = start_ns
        self.last_read_ns = start_ns
        self.expired: type[RequestTimedOut] | None = None
        self._handle: asyncio.TimerHandle | None = None
        self._armed_ns = _NEVER  # when the armed timer fires (_NEVER: none armed)
        self._arm_at(start_ns + min(self._first_byte, self._between, self._total), start_ns)

    def request_written(self, now_ns: int) -> None:
        self._total_from = now_ns
        self._phase, self._phase_start = FirstByteTimedOut, now_ns
        self._arm_at(self._deadline()[0], now_ns)

    def headers_received(self, now_ns: int) -> None:
        self._phase = BetweenChunksTimedOut
        self.last_read_ns = now_ns
        self._arm_at(self._deadline()[0], now_ns)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._armed_ns = _NEVER

    def _deadline(self) -> tuple[int, type[RequestTimedOut]]:
        deadline, kind = self._total_from + self._total, TotalTimedOut
        if self._phase is FirstByteTimedOut:
            phase_deadline = self._phase_start + self._first_byte
        elif self._phase is BetweenChunksTimedOut:
            phase_deadline = self.last_read_ns + self._between
        else:
            return deadline, kind
        if phase_deadline < deadline:
            return phase_deadline, self._phase
        return deadline, kind

    def _arm_at(self, deadline_ns: int, now_ns: int) -> None:
        """Wake at `deadline_ns` unless the armed timer already fires no later (it then re-checks)."""
        if deadline_ns >= self._armed_ns or deadline_ns - now_ns >= _NEVER // 2:
            return
        self.stop()
        self._armed_ns = deadline_ns
        self._handle = self._loop.call_later(max(deadline_ns - now_ns, 0) / 1e9, self._check)

    def _check(self) -> None:
        self._handle = None
        self._armed_ns = _NEVER
        now = perf_counter_ns()
        deadline, kind = self._deadline()
        if now >= deadline:
            self.expired = kind
            self._task.cancel()
        else:
            self._arm_at(deadline, now)
