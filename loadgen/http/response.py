"""One response of `loadgen.http.transport` on a pooled connection: its head, and its body as the framing
delivers it, either read piece by piece (`read`, also what httpx iterates) or handed to a callback as it
arrives (`consume`, the client's streaming path)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Protocol

import httpx

from loadgen.http.connection import Connection
from loadgen.http.http11 import BodyDecoder, ResponseHead, UntilClose

Origin = tuple[str, str, int]  # scheme, host, port


class Pool(Protocol):
    def checkin(self, origin: Origin, conn: Connection, reusable: bool) -> None: ...


class ResponseBody(httpx.AsyncByteStream):
    def __init__(
        self,
        pool: Pool,
        origin: Origin,
        conn: Connection,
        head: ResponseHead,
        decoder: BodyDecoder,
        read_timeout: float | None,
    ) -> None:
        self._pool = pool
        self._origin = origin
        self.conn = conn
        self.head = head
        self.decoder = decoder
        self._read_timeout = read_timeout
        self._released = False
        self._on_body: Callable[[bytes, int], bool] | None = None
        self._outcome: asyncio.Future[bool] | None = None

    def header(self, name: bytes) -> str | None:
        """A response header's value (several joined with ", ", as httpx does), None when absent."""
        values = [v for k, v in self.head.headers if k.lower() == name]
        if not values:
            return None
        joined = b", ".join(values)
        try:
            return joined.decode("utf-8")
        except UnicodeDecodeError:
            return joined.decode("latin-1")

    async def read(self) -> bytes:
        """The body bytes of the next read(s) that carry any; b"" once the body is complete."""
        decoder, conn = self.decoder, self.conn
        if decoder.error is not None:  # bad framing after the body bytes handed over last time
            raise decoder.error
        while not decoder.done:
            data = await (conn.read() if self._read_timeout is None else self._timed_read())
            if not data:
                if isinstance(decoder, UntilClose):
                    break
                raise _cut_off()
            body = decoder.feed(data)
            if body:
                return body
            if decoder.error is not None:
                raise decoder.error
        return b""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while body := await self.read():
            yield body

    async def _timed_read(self) -> bytes:
        try:
            async with asyncio.timeout(self._read_timeout):
                return await self.conn.read()
        except TimeoutError:
            raise httpx.ReadTimeout("no data within the read timeout") from None

    async def consume(self, on_body: Callable[[bytes, int], bool]) -> bool:
        """Hand the body to `on_body(body_bytes, received_ns)` from the loop's callbacks as it arrives (no
        task switch per read) until `on_body` returns True (→ True; the rest stays for `read`) or the body
        ends (→ False). Whatever `read` would raise, and whatever `on_body` raises, is raised here."""
        if self._read_timeout is not None:
            raise RuntimeError("consume() has no read timeout; use read()")
        if self.decoder.error is not None:
            raise self.decoder.error
        if self.decoder.done:
            return False
        self._on_body = on_body
        self._outcome = asyncio.get_running_loop().create_future()
        self.conn.listen(self)
        try:
            return await self._outcome
        finally:
            self.conn.listener = None
            self._on_body = None

    def data(self, data: bytes, received_ns: int) -> None:
        """Connection listener: one delivery of bytes (see `consume`)."""
        assert self._on_body is not None
        try:
            body = self.decoder.feed(data)
            if body and self._on_body(body, received_ns):
                self._settle(True)
            elif self.decoder.error is not None:
                self._fail(self.decoder.error)
            elif self.decoder.done:
                self._settle(False)
        except Exception as exc:
            self._fail(exc)

    def ended(self) -> None:
        """Connection listener: the peer closed, after every delivery."""
        if self.conn.error is not None:
            self._fail(httpx.ReadError(f"connection lost: {self.conn.error!r}"))
        elif isinstance(self.decoder, UntilClose):
            self._settle(False)
        else:
            self._fail(_cut_off())

    def _settle(self, done: bool) -> None:
        self.conn.listener = None
        if self._outcome is not None and not self._outcome.done():
            self._outcome.set_result(done)

    def _fail(self, exc: Exception) -> None:
        self.conn.listener = None
        if self._outcome is not None and not self._outcome.done():
            self._outcome.set_exception(exc)

    async def aclose(self) -> None:
        if not self._released:
            self._released = True
            reusable = self.decoder.done and self.decoder.reusable and self.head.keep_alive
            self._pool.checkin(self._origin, self.conn, reusable)


def _cut_off() -> httpx.RemoteProtocolError:
    return httpx.RemoteProtocolError("peer closed connection without sending complete message body")
