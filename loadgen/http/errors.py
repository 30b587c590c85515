"""Every way a streamed request can end badly, in one tree (docs/architecture.md, error taxonomy).

The client never lets these escape `StreamingClient.send`: each one becomes exactly one
`RequestRecord` whose `error_kind` is the leaf's `kind` string (stable, snake_case, safe as a
Prometheus label value) and whose `status` is the leaf's `status`.

    RequestFailed                      (abstract: never raised itself)
    ├── InvalidRequest                 invalid_request         the work item cannot become a request (never sent)
    ├── ConnectFailed                  connect_error           TCP connect refused / DNS / TLS failed
    ├── HTTPStatusFailed               http_status             response status not 2xx (code kept in the record)
    ├── HTTPProtocolFailed             http_protocol_error     the bytes on the wire are not valid HTTP/1.1
    ├── RequestTimedOut                (abstract)
    │   ├── ConnectTimedOut            timeout_connect         no TCP connection within connect_s
    │   ├── FirstByteTimedOut          timeout_first_byte      request written, no response headers within first_byte_s
    │   ├── BetweenChunksTimedOut      timeout_between_chunks  two reads of the body (headers → first read included)
    │   │                                                      further apart than between_chunks_s
    │   └── TotalTimedOut              timeout_total           request written → stream still open after total_s
    ├── StreamFailed                   (abstract: the response body broke the SSE / OpenAI contract)
    │   ├── StreamCutOff               stream_cut_off          connection closed or reset before a finish_reason or
    │   │                                                      [DONE] (a clean end after a finish_reason is a success)
    │   ├── EmptyStream                empty_stream            [DONE] with neither content nor a finish_reason: the
    │   │                                                      server ended the stream without answering (llama.cpp's
    │   │                                                      server does so to in-flight streams when a new request
    │   │                                                      arrives); a finish_reason without content is a success
    │   ├── NonSSEResponse             non_sse_response        2xx answer that is not text/event-stream (e.g. a JSON body)
    │   ├── MalformedSSE               malformed_sse           a line that is not an SSE field or comment
    │   ├── InvalidUTF8                invalid_utf8            an event's data is not UTF-8
    │   ├── InvalidJSON                invalid_json            an event's data is not a JSON object (and not [DONE])
    │   ├── ChunkTooLarge              chunk_too_large         one SSE event bigger than max_event_bytes
    │   ├── ResponseTooLarge           response_too_large      the whole body bigger than max_response_bytes
    │   └── MidStreamError             mid_stream_error        the server sent `data: {"error": {...}}`
    ├── ClientCancelled                client_cancelled        the caller cancelled the task: the run stopped
    │                                                          (Ctrl-C, the grace period's end) (status "cancelled")
    ├── PlannedCancel                  planned_cancel          the client closed the stream as the run planned
    │                                                          (--cancel-rate: a user pressing stop) (status "cancelled")
    ├── SessionEnded                   session_ended           a conversation turn never sent: an earlier turn of
    │                                                          its session failed (status "cancelled")
    ├── WorkerLost                     worker_lost             the worker process or Ray actor that owned the request
    │                                                          was lost before its record came back
    └── ClientInternalError            internal_error          a bug in the client itself; never hidden as another kind
"""

from __future__ import annotations

from typing import ClassVar, Literal

MAX_MESSAGE_CHARS = 300  # error messages land in records.jsonl; a server's HTML error page must not


def bounded(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """Shorten `text` to at most `limit` characters, marking the cut."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class RequestFailed(Exception):
    """Base of the taxonomy. `kind` and `status` are what the record stores."""

    kind: ClassVar[str] = "request_failed"
    status: ClassVar[Literal["error", "cancelled"]] = "error"

    def __init__(self, message: str = "") -> None:
        super().__init__(bounded(message))

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class InvalidRequest(RequestFailed):
    kind = "invalid_request"


class ConnectFailed(RequestFailed):
    kind = "connect_error"


class HTTPStatusFailed(RequestFailed):
    kind = "http_status"

    def __init__(self, status_code: int, message: str = "") -> None:
        super().__init__(f"HTTP {status_code}: {message}" if message else f"HTTP {status_code}")
        self.status_code = status_code


class HTTPProtocolFailed(RequestFailed):
    kind = "http_protocol_error"


class RequestTimedOut(RequestFailed):
    kind = "timeout"


class ConnectTimedOut(RequestTimedOut):
    kind = "timeout_connect"


class FirstByteTimedOut(RequestTimedOut):
    kind = "timeout_first_byte"


class BetweenChunksTimedOut(RequestTimedOut):
    kind = "timeout_between_chunks"


class TotalTimedOut(RequestTimedOut):
    kind = "timeout_total"


class StreamFailed(RequestFailed):
    kind = "stream_failed"


class StreamCutOff(StreamFailed):
    kind = "stream_cut_off"


class EmptyStream(StreamFailed):
    kind = "empty_stream"


class NonSSEResponse(StreamFailed):
    kind = "non_sse_response"


class MalformedSSE(StreamFailed):
    kind = "malformed_sse"


class InvalidUTF8(StreamFailed):
    kind = "invalid_utf8"


class InvalidJSON(StreamFailed):
    kind = "invalid_json"


class ChunkTooLarge(StreamFailed):
    kind = "chunk_too_large"


class ResponseTooLarge(StreamFailed):
    kind = "response_too_large"


class MidStreamError(StreamFailed):
    kind = "mid_stream_error"


class ClientCancelled(RequestFailed):
    kind = "client_cancelled"
    status = "cancelled"


class PlannedCancel(RequestFailed):
    """Raised by the client's planned close (loadgen.http.cancel); the record keeps what arrived until then."""

    kind = "planned_cancel"
    status = "cancelled"


class SessionEnded(RequestFailed):
    """Never raised by the client: the runner records the turns a failed turn left unsent (loadgen.dispatch.conversation)."""

    kind = "session_ended"
    status = "cancelled"


class WorkerLost(RequestFailed):
    """Never raised by the client: the parent records a lost worker's unfinished requests (loadgen.workers.lost)."""

    kind = "worker_lost"


class ClientInternalError(RequestFailed):
    kind = "internal_error"


def _leaves(cls: type[RequestFailed]) -> list[type[RequestFailed]]:
    subs = cls.__subclasses__()
    return [leaf for sub in subs for leaf in _leaves(sub)] if subs else [cls]


LEAF_CLASSES: tuple[type[RequestFailed], ...] = tuple(_leaves(RequestFailed))
# The bounded set of `error_kind` values (Prometheus label values, summary `errors` keys).
ERROR_KINDS: frozenset[str] = frozenset(c.kind for c in LEAF_CLASSES)
TIMEOUT_KINDS: frozenset[str] = frozenset(c.kind for c in _leaves(RequestTimedOut))
