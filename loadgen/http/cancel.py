"""The client's side of a planned cancellation (loadgen.workload.cancel): close the stream as a browser does.

A user who presses stop makes the browser drop the connection mid-stream; the server learns of it from the
closed socket. The client does the same on both of its paths (the direct FastTransport one and httpx's):
it stops reading and closes the connection (a connection with an unfinished response is never pooled), at

- `cancel_after_s` after the request was written: one timer, armed at the write by `PlannedClose`, a
  `Watchdog` that also owns the request's timeouts (so a timeout that would expire after the planned close
  never fires, and the close stops the timeout timer);
- or when the output tokens received reach `cancel_after_tokens`: checked after each event (`event_feed`),
  the count being the server's running usage when it sends one, else its per-chunk counts (the reference
  server's `goodput.n`), else one per token event, the same sources the record's token split uses.

The record gets status "cancelled", error_kind "planned_cancel", `cancel_at_ns` (the planned close: the
write plus `cancel_after_s`, or the stamp of the event that reached K tokens), `closed_ns` (when the
connection was closed), and every chunk and token that arrived until then. A stream that ends before its
planned close is a normal request; a time plan still leaves its `cancel_at_ns` in the record.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from time import perf_counter_ns

from loadgen.http.chunks import ChunkAccumulator
from loadgen.http.deadlines import Watchdog
from loadgen.http.errors import PlannedCancel
from loadgen.types import Timeouts, WorkItem
from metrics.records import RequestRecord

EventFeed = Callable[[bytes, int], bool]


class PlannedClose(Watchdog):
    """A `Watchdog` for a request the run plans to cancel."""

    __slots__ = ("_after_ns", "_anchor_ns", "_close", "after_tokens", "closed", "record")

    def __init__(self, timeouts: Timeouts, *, task: asyncio.Task[object], start_ns: int,
                 record: RequestRecord, anchor_ns: int, after_s: float | None, after_tokens: int | None) -> None:
        self._close: asyncio.TimerHandle | None = None  # before the Watchdog arms its timer (it calls stop)
        super().__init__(timeouts, task=task, start_ns=start_ns)
        self._after_ns = round(after_s * 1e9) if after_s is not None else None
        self._anchor_ns = anchor_ns
        self.after_tokens = after_tokens
        self.closed: PlannedCancel | None = None  # set when the planned time came with the stream still open
        self.record = record

    def request_written(self, now_ns: int) -> None:
        super().request_written(now_ns)
        if self._after_ns is None:
            return
        at_ns = now_ns + self._after_ns
        self.record.cancel_at_ns = at_ns - self._anchor_ns
        delay_ns = at_ns - perf_counter_ns()
        self._close = self._loop.call_later(max(delay_ns, 0) / 1e9, self._closing)

    def stop(self) -> None:
        super().stop()
        if self._close is not None:
            self._close.cancel()
            self._close = None

    def _closing(self) -> None:
        self._close = None
        if self.expired is not None or self.closed is not None:
            return  # a timeout already ended the request
        super().stop()  # no timeout fires while the client closes the connection
        assert self._after_ns is not None
        self.closed = PlannedCancel(f"closed {self._after_ns / 1e9:g} s after the send, as planned")
        self._task.cancel()


def make_watchdog(item: WorkItem, record: RequestRecord, anchor_ns: int, timeouts: Timeouts, *,
                  task: asyncio.Task[object], start_ns: int) -> Watchdog:
    """The request's watchdog: a `PlannedClose` when the item plans a cancellation."""
    if item.cancel_after_s is None and item.cancel_after_tokens is None:
        return Watchdog(timeouts, task=task, start_ns=start_ns)
    return PlannedClose(timeouts, task=task, start_ns=start_ns, record=record, anchor_ns=anchor_ns,
                        after_s=item.cancel_after_s, after_tokens=item.cancel_after_tokens)


def planned_close(watchdog: Watchdog | None) -> PlannedCancel | None:
    """The planned close that cancelled the request's task, if that is what did."""
    return watchdog.closed if isinstance(watchdog, PlannedClose) else None


def event_feed(chunks: ChunkAccumulator, watchdog: Watchdog) -> EventFeed:
    """What the stream body feeds each event to: the accumulator, and for a `tokens:K` plan a check after
    each event that raises `PlannedCancel` once K output tokens arrived (unless that event finished the
    answer: all of it arrived, nothing was cancelled)."""
    limit = watchdog.after_tokens if isinstance(watchdog, PlannedClose) else None
    if limit is None:
        return chunks.feed
    assert isinstance(watchdog, PlannedClose)
    record = watchdog.record
    add = chunks.feed
    counted = [0, 0]  # server per-chunk counts summed so far, and how many of them

    def feed(data: bytes, t_ns: int) -> bool:
        if add(data, t_ns):
            return True
        n = _tokens_so_far(chunks, counted)
        if n >= limit and chunks.finish_reason is None:
            watchdog.stop()
            record.cancel_at_ns = t_ns
            raise PlannedCancel(f"closed after {n} output tokens, as planned (tokens:{limit})")
        return False

    return feed


def _tokens_so_far(chunks: ChunkAccumulator, counted: list[int]) -> int:
    """Output tokens received so far, best source first (see the module docstring)."""
    usage = chunks.usage
    if usage is not None:
        completion = usage.get("completion_tokens")
        if type(completion) is int:
            return completion
    server = chunks.server_tokens
    if server:
        counted[0] += sum(server[counted[1]:])
        counted[1] = len(server)
        return counted[0]
    return len(chunks.chunk_ns) + len(chunks.empty_at)
