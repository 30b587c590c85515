"""The client's HTTP side: the request body (`payload`), a lean HTTP/1.1 transport (`transport`,
`connection`, `http11`, `response`), the SSE parser and per-chunk accumulator (`sse`, `chunks`), token
accounting, the timeout watchdog (`deadlines`) and the error taxonomy (`errors`). The streaming APIs are
`loadgen.http.api`; the client that sends one request is `loadgen.http.send`.

The names below are imported on first use (metrics.lazy_face).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics import lazy_names

if TYPE_CHECKING:
    from loadgen.http.errors import PlannedCancel, SessionEnded, WorkerLost
    from loadgen.http.payload import merge_body, needs_tls, public_url, scrub_userinfo

__all__ = [
    "PlannedCancel", "SessionEnded", "WorkerLost", "merge_body", "needs_tls", "public_url", "scrub_userinfo",
]

__getattr__ = lazy_names(__name__, {
    "PlannedCancel": "errors", "SessionEnded": "errors", "WorkerLost": "errors",
    "merge_body": "payload", "needs_tls": "payload", "public_url": "payload", "scrub_userinfo": "payload",
})
