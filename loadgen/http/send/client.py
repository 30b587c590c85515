"""The streaming client: one request in, exactly one `RequestRecord` out, whatever the server does.

`StreamingClient.send` never raises. Every outcome (success, each failure of `loadgen.http.errors`,
cancellation, a close the run planned: loadgen.http.cancel) is one record with one status. Cancelling
the task that runs `send` yields a record with status "cancelled" / error_kind "client_cancelled" that
is *returned*, not re-raised: a cancelled load test still wants the partial record written. The task's cancel request stays counted
(`Task.cancelling()`), so a caller that must stop can check that, or the record's status.

Times in the record are `perf_counter_ns() - anchor_ns`: `sent_ns` just before the request headers
are written (the transport's `trace` hook, which FastTransport and httpcore both call, so pool waits
and connects count as dispatch lag, not TTFT),
`first_byte_ns` when the response head arrived, and one `chunk_ns` per content chunk: the time the
event loop handed over the bytes that completed it (`FastTransport`'s receive clock; with another
transport, the time the read returned). Events completed by one read share its time.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from time import perf_counter_ns
from typing import Any

import httpx

from loadgen.http import errors
from loadgen.http.api import api_for, endpoint_url
from loadgen.http.body import StreamBody
from loadgen.http.cancel import event_feed, make_watchdog, planned_close
from loadgen.http.chunks import ChunkAccumulator
from loadgen.http.deadlines import Watchdog
from loadgen.http.failures import error_body, from_httpx, timeout_message
from loadgen.http.payload import encode_body
from loadgen.http.sse import DEFAULT_MAX_EVENT_BYTES
from loadgen.http.transport import RECEIVE_CLOCK, FastTransport, request_head_template
from loadgen.redact import credential_parts, redact
from loadgen.secrets import is_secret_header
from loadgen.types import ClientConfig, ToolCall, WorkItem
from loadgen.workload import TokenCounter, make_counter
from metrics.records import RequestRecord

DEFAULT_MAX_RESPONSE_BYTES = 1 << 30
KEEPALIVE_EXPIRY_S = 4.0  # below uvicorn's 5 s idle close, so a reused connection is never half-closed
DRAIN_S = 0.5  # after [DONE]: time allowed for the chunked terminator, to keep the connection pooled


class StreamingClient:
    """Owns one `httpx.AsyncClient`; use as `async with StreamingClient(config) as client:`."""

    def __init__(
        self,
        config: ClientConfig,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self.config = config
        self._api = api_for(config.endpoint)  # its path, body, headers and stream decoder (loadgen.http.api)
        self.url = endpoint_url(config.base_url, config.endpoint)
        self._max_event_bytes = max_event_bytes
        self._max_response_bytes = max_response_bytes
        # ValueError for a tokenizer path that cannot be read (the CLI checks it before the run).
        self._counter: TokenCounter | None = make_counter(config.token_counter)[1] if config.token_counter else None
        headers = {
            "Content-Type": "application/json",
            "Accept": "text/event-stream",
            "Accept-Encoding": "identity",  # a compressed event stream would be buffered by the server
            **self._api.headers,
            **config.extra_headers,
        }
        if config.api_key:
            headers.update(self._api.auth(config.api_key))
        # Server text the records keep must not quote a credential the server was sent (loadgen.redact).
        self._credentials = credential_parts([*(v for k, v in headers.items() if is_secret_header(k)), *config.redact])
        t = config.timeouts
        limits = httpx.Limits(
            max_connections=config.max_connections,
            max_keepalive_connections=config.max_connections,
            keepalive_expiry=KEEPALIVE_EXPIRY_S,
        )
        # Only connect is left to httpx; first byte, between chunks and total are the watchdog's.
        timeout = httpx.Timeout(connect=t.connect_s, read=None, write=None, pool=None)
        if transport is None:
            transport = FastTransport(limits=limits, spare=config.spare_connection)
        self._http = httpx.AsyncClient(
            headers=headers,
            timeout=timeout,
            limits=limits,
            transport=transport,
            follow_redirects=False,
            trust_env=False,  # no proxy or netrc from the environment silently inside the measurement
        )
        # Built once: httpx's build_request re-parses the URL and re-merges headers on every call.
        self._url = httpx.URL(self.url)
        self._headers = httpx.Headers(self._http.headers)
        self._timeouts = timeout.as_dict()
        # The direct path (FastTransport, the default): the same request bytes as through httpx.AsyncClient,
        # built from one template, and the response read straight off the connection. httpx's Request,
        # Response, Headers, auth and redirect machinery and its three nested body iterators cost more CPU
        # per request and per read than everything else the client does. (It keeps no cookie jar.)
        self._direct = transport if isinstance(transport, FastTransport) else None
        template = httpx.Request("POST", self._url, headers=self._headers, content=b"{}")
        self._head = request_head_template(template)
        self._origin = (self._url.scheme, self._url.host, self._url.port or (443 if self._url.scheme == "https" else 80))

    def __repr__(self) -> str:
        shown = self._url.copy_with(username=None, password=None, query=None)
        return f"StreamingClient(url={str(shown)!r}, model={self.config.model!r})"

    async def __aenter__(self) -> StreamingClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def send(
        self, item: WorkItem, *, request_id: int, intended_ns: int, anchor_ns: int,
        text_out: list[str] | None = None, calls_out: list[ToolCall] | None = None,
    ) -> RequestRecord:
        """Stream one request; always returns its one record (see the module docstring), never raises.
        `text_out`, when given, receives the answer's streamed content text (a conversation's history), and
        `calls_out` the tool calls it made, in chat's form."""
        record = RequestRecord(
            id=request_id,
            intended_ns=intended_ns,
            sent_ns=None,
            prompt_tokens=self._prompt_count(item),  # replaced by usage.prompt_tokens when the server sends it
            prompt_tokens_target=item.prompt_tokens_target,
            output_tokens_target=item.max_tokens,
            tags=dict(item.tags),
            model=item.model or self.config.model,
            images=item.images, image_pixels=item.image_pixels, image_bytes=item.image_bytes,
        )
        chunks = self._api.decoder()
        failure: errors.RequestFailed | None = None
        task = asyncio.current_task()
        watchdog: Watchdog | None = None
        try:
            body = encode_body(item, self.config, build=self._api.build)
        except (ValueError, TypeError) as exc:
            failure = errors.InvalidRequest(f"cannot build the request: {exc}")
            return self._finish(record, chunks, failure, anchor_ns, text_out, calls_out)
        try:
            assert task is not None, "send() must run inside an asyncio task"
            watchdog = make_watchdog(item, record, anchor_ns, self.config.timeouts, task=task,
                                     start_ns=perf_counter_ns())
            await self._exchange(body, record, chunks, watchdog, anchor_ns)
        except asyncio.CancelledError:
            expired = watchdog.expired if watchdog is not None else None
            planned = planned_close(watchdog)
            if (expired is not None or planned is not None) and task is not None:
                task.uncancel()
            if chunks.done:
                pass  # cancelled while draining after [DONE]: the request itself completed
            elif task is not None and task.cancelling() > 0:
                failure = errors.ClientCancelled("cancelled by the caller")
            elif planned is not None:
                failure = planned
            elif expired is not None:
                failure = expired(timeout_message(expired, self.config))
            else:
                failure = errors.ClientInternalError("cancelled from inside the client")
        except errors.RequestFailed as exc:
            failure = exc
        except Exception as exc:
            failure = from_httpx(exc, record.first_byte_ns is not None)
        finally:
            if watchdog is not None:
                watchdog.stop()
        return self._finish(record, chunks, failure, anchor_ns, text_out, calls_out)

    def _prompt_count(self, item: WorkItem) -> int | None:
        """The client's count of the prompt it sends: the workload's count, plus the chat template's
        estimated overhead on an API that applies the chat template; the target when the workload counted
        nothing."""
        if item.prompt_tokens_counted is None:
            return item.prompt_tokens_target
        if self._api.chat_template and item.template_tokens is not None:
            return item.prompt_tokens_counted + item.template_tokens
        return item.prompt_tokens_counted

    def _finish(
        self, record: RequestRecord, chunks: ChunkAccumulator, failure: errors.RequestFailed | None, anchor_ns: int,
        text_out: list[str] | None = None, calls_out: list[ToolCall] | None = None,
    ) -> RequestRecord:
        if record.closed_ns is None:
            record.closed_ns = perf_counter_ns() - anchor_ns
        chunks.fill(record, self._counter)  # record.prompt_tokens stays the client's estimate unless usage came
        if failure is None and chunks.finish_reason is None and not chunks.chunk_ns:
            # Only [DONE] ends a stream without a finish_reason and without failing (a clean close raises
            # StreamCutOff): the server dropped the request; its timings would pass for a fast answer.
            failure = errors.EmptyStream("the stream ended ([DONE]) without content and without a finish_reason")
        if failure is not None:
            record.status = failure.status
            record.error_kind = failure.kind
            record.error_message = redact(failure.message, self._credentials)
            if isinstance(failure, errors.HTTPStatusFailed):
                record.http_status = failure.status_code
        if text_out is not None:
            text_out.append(chunks.content_text())
        if calls_out is not None:
            calls_out.extend(chunks.calls)
        return record

    async def _exchange(
        self, body: bytes, record: RequestRecord, chunks: ChunkAccumulator, watchdog: Watchdog, anchor_ns: int
    ) -> None:
        if self._direct is not None:
            await self._exchange_direct(self._direct, body, record, chunks, watchdog, anchor_ns)
            return

        async def trace(event: str, info: dict[str, Any]) -> None:
            if event == "http11.send_request_headers.started":
                now = perf_counter_ns()
                record.sent_ns = now - anchor_ns
                watchdog.request_written(now)

        request = httpx.Request(
            "POST",
            self._url,
            headers=self._headers,
            content=body,
            extensions={"timeout": self._timeouts, "trace": trace},
        )
        before = perf_counter_ns()
        response = await self._http.send(request, stream=True)
        try:
            clock = response.extensions.get(RECEIVE_CLOCK)
            now = clock.received_ns if clock is not None else perf_counter_ns()
            if record.sent_ns is None:  # a transport without httpcore's trace hook (tests' MockTransport)
                record.sent_ns = before - anchor_ns
            record.first_byte_ns = now - anchor_ns
            record.http_status = response.status_code
            watchdog.headers_received(now)
            raw = _reader(response.aiter_raw())
            if not 200 <= response.status_code < 300:
                watchdog.stop()  # the status decides the outcome; reading its message is best effort
                raise errors.HTTPStatusFailed(response.status_code, await error_body(raw))
            content_type = response.headers.get("content-type", "")
            if not content_type.lower().startswith("text/event-stream"):
                watchdog.stop()
                shown = await error_body(raw)
                raise errors.NonSSEResponse(f"content-type {content_type or 'missing'!r}: {shown}")
            encoded = response.headers.get("content-encoding", "identity").lower() != "identity"
            reads = _reader(response.aiter_bytes()) if encoded else raw
            await self._read_stream(reads, clock, record, chunks, watchdog, anchor_ns)
        finally:
            await response.aclose()

    async def _exchange_direct(
        self, transport: FastTransport, body: bytes, record: RequestRecord, chunks: ChunkAccumulator,
        watchdog: Watchdog, anchor_ns: int,
    ) -> None:
        """`_exchange` without httpx objects: the same bytes sent, the same record, the same errors."""

        def written() -> None:
            now = perf_counter_ns()
            record.sent_ns = now - anchor_ns
            watchdog.request_written(now)

        before, after = self._head
        stream = await transport.open(self._origin, b"%s%d%s" % (before, len(body), after), body,
                                      connect_s=self.config.timeouts.connect_s, written=written)
        try:
            now = stream.conn.received_ns
            status = stream.head.status
            record.first_byte_ns = now - anchor_ns
            record.http_status = status
            watchdog.headers_received(now)
            if not 200 <= status < 300:
                watchdog.stop()
                raise errors.HTTPStatusFailed(status, await error_body(stream.read))
            content_type = stream.header(b"content-type") or ""
            if not content_type.lower().startswith("text/event-stream"):
                watchdog.stop()
                shown = await error_body(stream.read)
                raise errors.NonSSEResponse(f"content-type {content_type or 'missing'!r}: {shown}")
            if (stream.header(b"content-encoding") or "identity").lower() != "identity":
                decoded = httpx.Response(status, headers=stream.head.headers, stream=stream)  # httpx's decoders
                await self._read_stream(_reader(decoded.aiter_bytes()), stream.conn, record, chunks, watchdog,
                                        anchor_ns)
                return
            parsed = self._body(record, chunks, watchdog, anchor_ns)
            if await stream.consume(parsed.read):  # parsed as each read arrives, with its own delivery time
                if not stream.decoder.done:  # the terminator came apart from [DONE], as most servers send it
                    await _drain(stream.read)
            else:
                parsed.end()
        finally:
            await stream.aclose()

    def _body(self, record: RequestRecord, chunks: ChunkAccumulator, watchdog: Watchdog, anchor_ns: int) -> StreamBody:
        return StreamBody(record, chunks, watchdog, anchor_ns, max_event_bytes=self._max_event_bytes,
                          max_response_bytes=self._max_response_bytes, feed=event_feed(chunks, watchdog))

    async def _read_stream(
        self,
        next_read: Callable[[], Awaitable[bytes]],
        clock: Any,
        record: RequestRecord,
        chunks: ChunkAccumulator,
        watchdog: Watchdog,
        anchor_ns: int,
    ) -> None:
        """The body read by awaiting each read: `next_read()` gives the next body bytes (b"" at the end),
        `clock` (the connection; None for other transports) when the loop handed them over."""
        parsed = self._body(record, chunks, watchdog, anchor_ns)
        while raw := await next_read():
            if parsed.read(raw, clock.received_ns if clock is not None else perf_counter_ns()):
                await _drain(next_read)
                return
        parsed.end()


def _reader(iterator: AsyncIterator[bytes]) -> Callable[[], Awaitable[bytes]]:
    """An async iterator of body bytes as a `next_read()` that gives b"" at its end."""

    async def next_read() -> bytes:
        try:
            return await anext(iterator)
        except StopAsyncIteration:
            return b""

    return next_read


async def _drain(next_read: Callable[[], Awaitable[bytes]]) -> None:
    """Read the chunked terminator after [DONE] so the connection can be reused; never an error."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(DRAIN_S):
            while await next_read():
                pass
