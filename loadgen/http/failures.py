"""How the client names what went wrong: an exception from the HTTP layer, an error body, an expired
deadline → a leaf of `loadgen.http.errors` with its message."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import httpx
import orjson

from loadgen.http import errors
from loadgen.http.chunks import error_text
from loadgen.types import ClientConfig

ERROR_BODY_BYTES = 16 * 1024  # enough of an error body to quote its message
ERROR_BODY_S = 2.0  # an error status is final; its body is only read for the message, briefly


async def error_body(next_read: Callable[[], Awaitable[bytes]]) -> str:
    """A short message from an error (or non-SSE) body, read with `next_read` (b"" at its end): the
    OpenAI error message when there is one. Best effort: whatever arrived within ERROR_BODY_S."""
    data = b""
    with contextlib.suppress(httpx.HTTPError, TimeoutError):
        async with asyncio.timeout(ERROR_BODY_S):
            while len(data) < ERROR_BODY_BYTES and (raw := await next_read()):
                data += raw
    return body_message(data[:ERROR_BODY_BYTES])


def body_message(data: bytes) -> str:
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return errors.bounded(data.decode("utf-8", "replace"))
    if isinstance(obj, dict):
        if "error" in obj:
            return error_text(_named(obj["error"]))
        if "message" in obj or "detail" in obj:
            return error_text(obj)
    return errors.bounded(data.decode("utf-8", "replace"))


def _named(error: object) -> object:
    """An error whose `code` is only the HTTP status again (vLLM: `"code": 404`) is named by its `type`
    ("NotFoundError") instead: the status is already in the message."""
    if isinstance(error, dict) and isinstance(error.get("code"), int) and error.get("type"):
        return {k: v for k, v in error.items() if k != "code"}
    return error


def timeout_message(kind: type[errors.RequestTimedOut], config: ClientConfig) -> str:
    t = config.timeouts
    limits = {
        errors.FirstByteTimedOut: ("no response headers within", t.first_byte_s),
        errors.BetweenChunksTimedOut: ("no data from the server within", t.between_chunks_s),
        errors.TotalTimedOut: ("stream still open after", t.total_s),
    }
    what, seconds = limits.get(kind, ("timed out after", None))
    return f"{what} {seconds} s"


def from_httpx(exc: Exception, got_headers: bool) -> errors.RequestFailed:
    text = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.ConnectTimeout | httpx.PoolTimeout):
        return errors.ConnectTimedOut(text)
    if isinstance(exc, httpx.ConnectError):
        return errors.ConnectFailed(text)
    if isinstance(exc, httpx.ReadTimeout):
        return (errors.BetweenChunksTimedOut if got_headers else errors.FirstByteTimedOut)(text)
    if isinstance(exc, httpx.WriteTimeout):
        return errors.FirstByteTimedOut(text)
    if isinstance(exc, httpx.ReadError | httpx.WriteError | httpx.CloseError):
        return errors.StreamCutOff(f"connection lost: {text}")
    if isinstance(exc, httpx.RemoteProtocolError):
        lowered = text.lower()
        if "disconnected" in lowered or "peer closed" in lowered or "incomplete" in lowered:
            return errors.StreamCutOff(f"connection closed: {text}")
        return errors.HTTPProtocolFailed(text)
    if isinstance(exc, httpx.DecodingError):
        return errors.HTTPProtocolFailed(f"undecodable body: {text}")
    return errors.ClientInternalError(f"{type(exc).__name__}: {text}")
