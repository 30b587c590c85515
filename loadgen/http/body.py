"""A streamed response body → the record's chunks, read by read: the client's per-read work.

`StreamBody.read(raw, received_ns)` takes the body bytes of one network read (chunked framing already
removed) and the time they were delivered: it enforces the response size limit, notes the read for the
between-chunks timeout, parses SSE events and feeds each to the chunk accumulator, and says when `[DONE]`
arrived. `end()` finishes the stream once the body is complete. SSE faults become the client's
`MalformedSSE` / `ChunkTooLarge`.
"""

from __future__ import annotations

from collections.abc import Callable
from time import perf_counter_ns

from loadgen.http import errors
from loadgen.http.chunks import ChunkAccumulator
from loadgen.http.deadlines import Watchdog
from loadgen.http.sse import SSEError, SSEEventTooLarge, SSEParser
from metrics.records import RequestRecord


class StreamBody:
    __slots__ = ("_add", "_anchor_ns", "_feed", "_limit", "_parser", "_received", "_record", "_watchdog", "chunks")

    def __init__(self, record: RequestRecord, chunks: ChunkAccumulator, watchdog: Watchdog, anchor_ns: int, *,
                 max_event_bytes: int, max_response_bytes: int,
                 feed: Callable[[bytes, int], bool] | None = None) -> None:
        self._parser = SSEParser(max_event_bytes=max_event_bytes)
        self._feed = self._parser.feed
        self._add = feed or chunks.feed  # `feed`: what each event goes to instead (loadgen.http.cancel)
        self._limit = max_response_bytes
        self._received = 0
        self._record = record
        self._watchdog = watchdog
        self._anchor_ns = anchor_ns
        self.chunks = chunks

    def read(self, raw: bytes, received_ns: int) -> bool:
        """One read's body bytes, delivered at `received_ns`; True once `[DONE]` arrived (the stream is
        then complete: what follows it is not parsed)."""
        self._watchdog.last_read_ns = received_ns
        self._received += len(raw)
        if self._received > self._limit:
            raise errors.ResponseTooLarge(f"response body exceeds {self._limit} bytes")
        t = received_ns - self._anchor_ns
        try:
            for event in self._feed(raw):
                if self._add(event.data, t):
                    self._record.closed_ns = t
                    self._watchdog.stop()
                    return True
        except SSEError as exc:
            raise _sse_failure(exc) from None
        if self._parser.error is not None:  # after the events that preceded it in this read
            raise _sse_failure(self._parser.error)
        return False

    def end(self) -> None:
        """The body is complete (no `[DONE]` so far): the last, unterminated event counts, and a stream
        that gave neither a finish_reason nor `[DONE]` (another API: no terminal event) was cut off."""
        t = perf_counter_ns() - self._anchor_ns
        self._record.closed_ns = t
        try:
            for event in self._parser.close():
                if self._add(event.data, t):
                    return
        except SSEError as exc:
            raise _sse_failure(exc) from None
        why = self.chunks.cut_off()
        if why is not None:
            raise errors.StreamCutOff(why)


def _sse_failure(exc: SSEError) -> errors.StreamFailed:
    if isinstance(exc, SSEEventTooLarge):
        return errors.ChunkTooLarge(str(exc))
    return errors.MalformedSSE(str(exc))
