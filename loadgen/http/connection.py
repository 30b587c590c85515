"""One TCP connection of `loadgen.http.transport`: its bytes are either awaited (`read()`) or handed to a
listener as they arrive, each with the time the event loop delivered it; no per-read timer or cancel scope.

`received_ns` is the `perf_counter_ns()` at which the event loop handed over the latest bytes. The
client stamps chunks with the delivery time rather than with the time its code runs: with hundreds of
streams ready in one loop iteration, their processing can come long after their bytes arrived, and that
queueing inside the client is not the server's latency.

Two ways to consume the bytes:

- `await read()`: everything received since the last call (the response head, error bodies, draining);
- `listen(listener)`: a streamed body. Every delivery is stamped as it comes, and the listener gets the
  pieces, each with its own stamp, in one callback scheduled after the loop's current round of socket
  events (`call_soon`): no future, no task switch per read, and every socket of the round is stamped
  before any of them is parsed. `listener.ended()` follows the last piece once the peer closed.
"""

from __future__ import annotations

import asyncio
from time import perf_counter_ns
from typing import Protocol

import httpx

_PAUSE_BYTES = 4 * 1024 * 1024  # stop reading the socket while this much is buffered unread


class Listener(Protocol):
    def data(self, data: bytes, received_ns: int) -> None: ...
    def ended(self) -> None: ...


class Connection(asyncio.Protocol):
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._chunks: list[bytes] = []
        self._stamps: list[int] = []  # per buffered piece: when it was delivered
        self._buffered = 0
        self._waiter: asyncio.Future[None] | None = None
        self._paused = False
        self._scheduled = False  # a delivery to the listener is queued on the loop
        self.listener: Listener | None = None
        self.transport: asyncio.Transport | None = None
        self.eof = False
        self.error: BaseException | None = None
        self.idle_since = 0.0
        self.received_ns = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's transport is not a subclass

    def data_received(self, data: bytes) -> None:
        now = perf_counter_ns()
        self.received_ns = now
        self._chunks.append(data)
        self._stamps.append(now)
        self._buffered += len(data)
        if self._buffered > _PAUSE_BYTES and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            if not waiter.done():
                waiter.set_result(None)
        elif self.listener is not None and not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self._deliver)

    def listen(self, listener: Listener) -> None:
        """Hand every buffered and future piece to `listener` until `self.listener` is reset to None."""
        self.listener = listener
        if self._chunks or self.eof:
            self._wake()

    def _deliver(self) -> None:
        self._scheduled = False
        chunks, stamps = self._take()
        for k, (data, stamp) in enumerate(zip(chunks, stamps, strict=True)):
            listener = self.listener
            if listener is None:  # it stopped listening: what is left is read() as usual, in order
                self._chunks[:0], self._stamps[:0] = chunks[k:], stamps[k:]
                self._buffered += sum(len(c) for c in chunks[k:])
                return
            listener.data(data, stamp)
        if self.eof and self.listener is not None and not self._chunks:
            self.listener.ended()

    def _take(self) -> tuple[list[bytes], list[int]]:
        chunks, stamps = self._chunks, self._stamps
        self._chunks, self._stamps = [], []
        self._buffered = 0
        if self._paused and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        return chunks, stamps

    def write(self, data: bytes) -> None:
        if self.transport is None or self.transport.is_closing() or self.eof:
            raise httpx.WriteError("connection closed before the request was written")
        self.transport.write(data)

    def unread(self, data: bytes) -> None:
        if data:
            self._chunks.insert(0, data)
            self._stamps.insert(0, self.received_ns)
            self._buffered += len(data)

    async def read(self) -> bytes:
        """The bytes received since the last call; b"" at a clean end of stream."""
        if not self._chunks:
            if self.eof:
                return self._end()
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
            if not self._chunks:
                return self._end()
        chunks, _ = self._take()
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def _end(self) -> bytes:
        if self.error is not None:
            raise httpx.ReadError(f"connection lost: {self.error!r}")
        return b""

    @property
    def reusable(self) -> bool:
        return not (self.eof or self._chunks or self.transport is None or self.transport.is_closing())

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
