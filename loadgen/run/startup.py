"""Before the first request: every wait on the server is bounded and said out loud, and every way the server
can fail to answer is one line with the hint that fits.

- `announced(what, limit_s)`: a wait that lasts longer than `ANNOUNCE_AFTER_S` prints one line on stderr
  naming what it waits for and for how long at most. Ctrl-C and SIGTERM stop any of these waits: the
  entry point (loadgen.cli) handles both for the whole life of the process.
- `unreachable_line` / `http_status_line`: why a request of the start-up (the model listing) got no
  usable answer: nothing listening (is the server up, is the port right), a wrong path (HTTP 404: is the
  URL the API's root), a key refused, a server that answers but not as an OpenAI-compatible one.
"""

from __future__ import annotations

import errno
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import httpx

ANNOUNCE_AFTER_S = 1.0


@contextmanager
def announced(what: str, limit_s: float, *, quiet: bool = False) -> Iterator[None]:
    """Say once, after `ANNOUNCE_AFTER_S`, that goodput is still waiting for `what` (at most `limit_s`)."""
    if quiet:
        yield
        return
    line = f"goodput: waiting for {what} (at most {limit_s:g} s; Ctrl-C stops)"
    timer = threading.Timer(ANNOUNCE_AFTER_S, lambda: print(line, file=sys.stderr, flush=True))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def host_port(url: str) -> str:
    """`host:port` of a URL (the scheme's default port when none is written)."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.hostname}:{port}"


def _errno_of(exc: BaseException) -> int | None:
    """The OS error number under an httpx exception (httpx → httpcore → OSError), if any."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, OSError) and cause.errno is not None:
            return cause.errno
        cause = cause.__cause__ or cause.__context__
    return None


def unreachable_line(url: str, exc: httpx.HTTPError, *, timeout_s: float) -> str:
    """One line for a request that got no HTTP answer at all (`url`: already without credentials)."""
    where = host_port(url)
    if isinstance(exc, httpx.ConnectTimeout):
        return f"no connection to {where} within {timeout_s:g} s: is the address right, and the server up?"
    if isinstance(exc, httpx.TimeoutException):
        return f"{url} did not answer within {timeout_s:g} s: is the server stuck or overloaded?"
    if isinstance(exc, httpx.ConnectError):
        code = _errno_of(exc)
        if code == errno.ECONNREFUSED or "refused" in str(exc).lower():
            return f"cannot connect to {where}: connection refused (nothing listens there): is the server " \
                   f"running, and is {urlsplit(url).port or where} its port?"
        if "name or service not known" in str(exc).lower() or "nodename nor servname" in str(exc).lower():
            return f"cannot connect to {where}: unknown host {urlsplit(url).hostname!r}: is the address right?"
        return f"cannot connect to {where}: {first_line(exc)}: is the address right, and the server up?"
    if isinstance(exc, httpx.RemoteProtocolError):
        return f"{where} closed the connection without an HTTP answer ({first_line(exc)}): is it an HTTP server, " \
               "and is this its port?"
    return f"{url} failed: {type(exc).__name__}: {first_line(exc)}"


def http_status_line(url: str, status: int) -> str:
    """One line for an HTTP error status (`url`: already without credentials), with the likely cause."""
    head = f"GET {url} answered HTTP {status}"
    if status == 404:
        return f"{head} (not found): is the URL the API's root? give --url as http://HOST:PORT or http://HOST:PORT/v1"
    if status in (401, 403):
        return f"{head}: the server wants a key (--api-key or OPENAI_API_KEY) or refused the one given"
    return f"{head}: {httpx.codes.get_reason_phrase(status) or 'error'}"


def first_line(exc: BaseException) -> str:
    """An exception's first line (httpx adds a second one with a documentation link), else its type."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
