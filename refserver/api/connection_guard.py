"""Deadlines and a cap for the server's connections, enforced below the app, in the HTTP protocol.

uvicorn's h11 protocol closes a keep-alive connection that stays idle after a response, but sets no
deadline while a request is being received: a client that sends half a request head, or a body one
byte at a time, holds its connection (and a file descriptor) for as long as it likes, and so do
connections that never send a byte. `GuardedH11Protocol` adds:

- a head deadline: the request head must be complete within `header_timeout_s` of the connection
  opening, or of the first byte of a later request on a kept-alive connection;
- a body deadline: the whole body must arrive within `body_timeout_s` of the end of its head;
- a cap: past `max_connections` open connections, a new one is answered 503 and closed at once.

A deadline runs from the start of its phase, never from the last byte, so trickling bytes does not
extend it. On expiry a client that had sent part of a request gets 408 (unless a response already
started) and the connection is closed; a connection that sent nothing is closed silently, like an
idle keep-alive one. Once a request is complete the app's response takes as long as it takes (a
stream may last minutes). Every error these write is an OpenAI-style JSON body, like the app's.

It relies on `H11Protocol`'s attributes `conn` (the h11 connection), `cycle` (the request in
progress), `connections`, `transport` and `loop`; tests/refserver/test_connection_limits.py checks the
behaviour end to end.
"""

from __future__ import annotations

import asyncio
import http
import logging
import math
from dataclasses import dataclass
from typing import ClassVar, Literal

import h11
import orjson
from uvicorn.protocols.http.h11_impl import H11Protocol

from refserver.api.errors import APIError

Phase = Literal["head", "body"]

logger = logging.getLogger("uvicorn.error")


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    max_connections: int = 2048

    def __post_init__(self) -> None:
        for name, value in (("--header-timeout", self.header_timeout_s), ("--body-timeout", self.body_timeout_s)):
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be > 0 seconds, got {value:g}")
        if self.max_connections < 1:
            raise ValueError(f"--max-connections must be >= 1, got {self.max_connections}")


def closing_response(error: APIError) -> bytes:
    """A whole HTTP/1.1 response carrying `error`'s JSON body, announcing that the connection closes."""
    body = orjson.dumps(error.body())
    head = (
        f"HTTP/1.1 {error.status} {http.HTTPStatus(error.status).phrase}\r\n"
        f"content-type: application/json\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with `limits` applied; `guarded_protocol` makes one per set of limits."""

    limits: ClassVar[ConnectionLimits] = ConnectionLimits()
    _phase: Phase | None = None
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            logger.info("refusing a connection: %d are open, the limit", self.limits.max_connections)
            message = f"the server has {self.limits.max_connections} open connections, its limit; retry later"
            self._close(APIError(503, message, type="server_error", code="too_many_connections"))
            return
        self._follow()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # may start the next request of a kept-alive connection
        self._follow()

    def connection_lost(self, exc: Exception | None) -> None:
        self._enter(None)
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        """A request h11 cannot parse (or a head over its size limit): 400 with a JSON body, then close."""
        self._close(APIError(400, f"malformed HTTP request: {msg}", code="invalid_http"))

    def _current_phase(self) -> Phase | None:
        state = self.conn.their_state
        if state is h11.SEND_BODY:
            return "body"
        if state is h11.IDLE and (self.cycle is None or self.conn.trailing_data[0]):
            return "head"  # a fresh connection, or part of the next head on a kept-alive one
        return None  # a complete request (the app's turn), idle keep-alive (uvicorn's timer), or closed

    def _follow(self) -> None:
        phase = None if self.transport.is_closing() else self._current_phase()
        if phase != self._phase:
            self._enter(phase)

    def _enter(self, phase: Phase | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._phase = phase
        if phase is not None:
            timeout = self.limits.header_timeout_s if phase == "head" else self.limits.body_timeout_s
            self._deadline = self.loop.call_later(timeout, self._expire, phase)

    def _expire(self, phase: Phase) -> None:
        self._deadline = None
        self._phase = None
        if self.transport.is_closing():
            return
        if phase == "head":
            started = bool(self.conn.trailing_data[0])
            what, limit = "the request head", self.limits.header_timeout_s
        else:
            started = self.cycle is not None and not self.cycle.response_started
            what, limit = "the request body", self.limits.body_timeout_s
        logger.info("closing a connection: %s did not arrive within %g s", what, limit)
        error = APIError(408, f"{what} did not arrive within {limit:g} s", code="request_timeout") if started else None
        self._close(error)

    def _close(self, error: APIError | None) -> None:
        self._enter(None)
        if self.cycle is not None and not self.cycle.response_complete:
            # The app's next receive() sees a disconnect and whatever it sends is dropped, never written
            # after this connection's last response.
            self.cycle.disconnected = True
            self.cycle.message_event.set()
        if error is not None:
            self.transport.write(closing_response(error))
        self.transport.close()


def guarded_protocol(limits: ConnectionLimits) -> type[GuardedH11Protocol]:
    """The protocol class to give uvicorn (`Config(http=...)`) for `limits`."""

    class Limited(GuardedH11Protocol):
        pass

    Limited.limits = limits
    return Limited
