"""Every way a server can misbehave ends as exactly one record with the right status and kind."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from loadgen.http.errors import ERROR_KINDS
from loadgen.http.send.client import StreamingClient
from loadgen.types import ClientConfig, Timeouts, WorkItem
from metrics.records.record import RequestRecord
from tests.servers.scripted import (
    DONE,
    END,
    Action,
    Close,
    Hang,
    ReceivedRequest,
    Reset,
    ScriptedServer,
    Send,
    chat_chunk,
    chunk,
    closed_port,
    event,
    head,
    usage,
)

TWO_CHUNKS_SSE = event(chat_chunk("a")) + event(chat_chunk("b"))
TWO_CHUNKS = chunk(TWO_CHUNKS_SSE)


def script(*actions: Action) -> Any:
    return lambda _request: list(actions)


async def send_one(handler: Any, **config: Any) -> RequestRecord:
    timeouts = config.pop("timeouts", Timeouts(connect_s=5, first_byte_s=10, between_chunks_s=10, total_s=30))
    client_kw = {k: config.pop(k) for k in ("max_event_bytes", "max_response_bytes") if k in config}
    async with ScriptedServer(handler) as server:
        cfg = ClientConfig(base_url=server.url, model="m", timeouts=timeouts, **config)
        async with StreamingClient(cfg, **client_kw) as client:
            record = await client.send(
                WorkItem(prompt="x", max_tokens=4), request_id=3, intended_ns=0, anchor_ns=0
            )
    assert record.error_kind is None or record.error_kind in ERROR_KINDS
    assert record.closed_ns is not None
    return record


def error_response(status: int, body: bytes) -> Any:
    return script(Send(head(status, "application/json", chunked=False, length=len(body)) + body))


@pytest.mark.parametrize("status", [500, 429, 400])
async def test_http_error_status_with_openai_error_body(status: int) -> None:
    body = orjson.dumps({"error": {"message": "engine overloaded", "type": "server_error", "code": status}})
    r = await send_one(error_response(status, body))
    assert (r.status, r.error_kind, r.http_status) == ("error", "http_status", status)
    assert r.error_message is not None and "engine overloaded" in r.error_message
    assert r.chunk_ns == []


async def test_http_error_message_is_bounded() -> None:
    r = await send_one(error_response(500, b"<html>" + b"x" * 100_000 + b"</html>"))
    assert r.error_kind == "http_status" and r.error_message is not None and len(r.error_message) <= 300


async def test_connection_reset_mid_stream_keeps_the_chunks_read() -> None:
    r = await send_one(script(Send(head() + TWO_CHUNKS), Reset(at_s=0.05)))
    assert (r.status, r.error_kind) == ("error", "stream_cut_off")
    assert len(r.chunk_ns) == 2


async def test_close_mid_chunk_is_cut_off() -> None:
    r = await send_one(script(Send(head() + TWO_CHUNKS + b"40\r\ndata: {"), Close()))
    assert r.error_kind == "stream_cut_off" and len(r.chunk_ns) == 2


async def test_clean_end_without_finish_reason_or_done_is_cut_off() -> None:
    r = await send_one(script(Send(head() + TWO_CHUNKS + END)))
    assert (r.status, r.error_kind) == ("error", "stream_cut_off")


async def test_clean_end_after_finish_reason_without_done_is_success() -> None:
    final = chunk(event(chat_chunk("", finish_reason="stop", usage=usage(3, 2))))
    r = await send_one(script(Send(head() + TWO_CHUNKS + final + END)))
    assert (r.status, r.error_kind, r.finish_reason) == ("ok", None, "stop")
    assert r.output_tokens == 2


async def test_connection_closed_without_a_response() -> None:
    r = await send_one(script(Close()))
    assert r.error_kind == "stream_cut_off" and r.http_status is None


async def test_garbage_instead_of_http() -> None:
    r = await send_one(script(Send(b"SSH-2.0-OpenSSH\r\n\r\n"), Close()))
    assert r.error_kind == "http_protocol_error"


async def test_malformed_sse() -> None:
    r = await send_one(script(Send(head() + chunk(b'{"choices": []}\n\n') + END)))
    assert r.error_kind == "malformed_sse"


async def test_malformed_sse_after_good_events_in_the_same_read_keeps_them() -> None:
    r = await send_one(script(Send(head() + chunk(TWO_CHUNKS_SSE + b'{"choices": []}\n\n') + END)))
    assert r.error_kind == "malformed_sse" and len(r.chunk_ns) == 2


async def test_invalid_json() -> None:
    r = await send_one(script(Send(head() + TWO_CHUNKS + chunk(b"data: {not json\n\n") + END)))
    assert r.error_kind == "invalid_json" and len(r.chunk_ns) == 2


async def test_json_that_is_not_a_chunk_object() -> None:
    r = await send_one(script(Send(head() + chunk(b'data: {"choices": ["oops"]}\n\n') + END)))
    assert r.error_kind == "invalid_json"


async def test_invalid_utf8() -> None:
    r = await send_one(script(Send(head() + chunk(b'data: {"choices": "\xff\xfe"}\n\n') + END)))
    assert r.error_kind == "invalid_utf8"


async def test_mid_stream_error_object() -> None:
    err = chunk(event({"error": {"message": "CUDA out of memory", "code": 500}}) + DONE)
    r = await send_one(script(Send(head() + TWO_CHUNKS + err + END)))
    assert (r.status, r.error_kind) == ("error", "mid_stream_error")
    assert r.error_message is not None and "CUDA out of memory" in r.error_message
    assert len(r.chunk_ns) == 2


async def test_non_sse_json_body() -> None:
    body = orjson.dumps({"choices": [{"message": {"content": "hi"}}]})
    r = await send_one(script(Send(head(200, "application/json", chunked=False, length=len(body)) + body)))
    assert (r.error_kind, r.http_status) == ("non_sse_response", 200)
    assert r.error_message is not None and "application/json" in r.error_message


async def test_one_mib_chunk_succeeds() -> None:
    big = chunk(event(chat_chunk("z" * (1 << 20))))
    final = chunk(event(chat_chunk("", finish_reason="stop")) + DONE)
    r = await send_one(
        script(Send(head()), Send(big[:300_000], at_s=0.01), Send(big[300_000:] + final + END, at_s=0.02))
    )
    assert r.status == "ok" and len(r.chunk_ns) == 1


async def test_chunk_over_the_event_limit() -> None:
    r = await send_one(
        script(Send(head() + chunk(event(chat_chunk("z" * 5000))) + END)), max_event_bytes=1000
    )
    assert r.error_kind == "chunk_too_large"


async def test_response_over_the_body_limit() -> None:
    many = chunk(b"".join(event(chat_chunk("t" * 100)) for _ in range(50)))
    r = await send_one(script(Send(head() + many + END)), max_response_bytes=2000)
    assert r.error_kind == "response_too_large"


async def test_keepalive_comments_reset_the_between_chunks_timer() -> None:
    timeouts = Timeouts(connect_s=5, first_byte_s=10, between_chunks_s=0.3, total_s=30)
    pings = [Send(chunk(b": ping\n\n"), at_s=0.15 * i) for i in range(1, 6)]
    final = Send(chunk(event(chat_chunk("a", finish_reason="stop")) + DONE) + END, at_s=0.9)
    r = await send_one(script(Send(head()), *pings, final), timeouts=timeouts)
    assert r.status == "ok" and len(r.chunk_ns) == 1


async def test_stall_past_between_chunks_timeout() -> None:
    timeouts = Timeouts(connect_s=5, first_byte_s=10, between_chunks_s=0.3, total_s=30)
    r = await send_one(script(Send(head() + TWO_CHUNKS), Hang()), timeouts=timeouts)
    assert (r.status, r.error_kind) == ("error", "timeout_between_chunks")
    assert len(r.chunk_ns) == 2
    assert r.closed_ns is not None and r.closed_ns - r.chunk_ns[-1] >= 300_000_000


async def test_no_headers_is_first_byte_timeout() -> None:
    timeouts = Timeouts(connect_s=5, first_byte_s=0.3, between_chunks_s=0.1, total_s=30)
    r = await send_one(script(Hang()), timeouts=timeouts)
    assert r.error_kind == "timeout_first_byte" and r.sent_ns is not None and r.first_byte_ns is None


async def test_slow_but_steady_stream_hits_total_timeout() -> None:
    timeouts = Timeouts(connect_s=5, first_byte_s=10, between_chunks_s=0.2, total_s=0.4)
    steady = [Send(chunk(event(chat_chunk("t"))), at_s=0.05 * i) for i in range(1, 40)]
    r = await send_one(script(Send(head()), *steady), timeouts=timeouts)
    assert r.error_kind == "timeout_total" and len(r.chunk_ns) >= 3


async def test_connect_refused() -> None:
    with closed_port() as port:
        config = ClientConfig(base_url=f"http://127.0.0.1:{port}", model="m")
        async with StreamingClient(config) as client:
            r = await client.send(WorkItem(prompt="x"), request_id=1, intended_ns=0, anchor_ns=0)
    assert (r.status, r.error_kind, r.sent_ns) == ("error", "connect_error", None)


async def test_cancellation_returns_a_cancelled_record() -> None:
    async with ScriptedServer(script(Send(head() + TWO_CHUNKS), Hang())) as server:
        client = StreamingClient(ClientConfig(base_url=server.url, model="m"))
        task = asyncio.create_task(
            client.send(WorkItem(prompt="x"), request_id=1, intended_ns=0, anchor_ns=0)
        )
        await asyncio.wait_for(server.wrote.wait(), 10)
        await asyncio.sleep(0.1)  # let the client read what was written
        task.cancel()
        r = await task  # returned, not raised
        await client.aclose()
    assert (r.status, r.error_kind) == ("cancelled", "client_cancelled")
    assert len(r.chunk_ns) == 2


async def test_client_survives_a_failure_and_serves_the_next_request() -> None:
    answers: Iterator[list[Action]] = iter(
        [
            [Send(head() + TWO_CHUNKS), Reset(at_s=0.02)],
            [Send(head() + TWO_CHUNKS + chunk(event(chat_chunk("", finish_reason="stop")) + DONE) + END)],
        ]
    )

    def handler(_: ReceivedRequest) -> list[Action]:
        return next(answers)

    async with (
        ScriptedServer(handler) as server,
        StreamingClient(ClientConfig(base_url=server.url, model="m")) as client,
    ):
        first = await client.send(WorkItem(prompt="x"), request_id=1, intended_ns=0, anchor_ns=0)
        second = await client.send(WorkItem(prompt="x"), request_id=2, intended_ns=0, anchor_ns=0)
    assert (first.error_kind, second.status) == ("stream_cut_off", "ok")


async def test_bad_work_item_is_a_record_not_an_exception() -> None:
    async with StreamingClient(ClientConfig(base_url="http://127.0.0.1:9", model="m")) as client:
        r = await client.send(WorkItem(), request_id=1, intended_ns=0, anchor_ns=0)
    assert r.status == "error" and r.error_kind == "invalid_request" and r.sent_ns is None


async def test_error_status_whose_body_never_ends_is_still_http_status() -> None:
    timeouts = Timeouts(connect_s=5, first_byte_s=10, between_chunks_s=0.2, total_s=30)
    r = await send_one(
        script(Send(head(500, "application/json") + chunk(b'{"error": {"message": "boom"')), Hang()),
        timeouts=timeouts,
    )
    assert (r.error_kind, r.http_status) == ("http_status", 500)
    assert r.error_message is not None and "boom" in r.error_message


class _RefusingTransport(httpx.AsyncBaseTransport):
    """Stands in for a host that never answers SYN: checks the timeouts the client hands down."""

    def __init__(self) -> None:
        self.timeouts: dict[str, float | None] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.timeouts = request.extensions["timeout"]
        raise httpx.ConnectTimeout("timed out", request=request)


async def test_connect_timeout_is_passed_down_and_mapped() -> None:
    transport = _RefusingTransport()
    config = ClientConfig(base_url="http://127.0.0.1:9", model="m", timeouts=Timeouts(connect_s=1.5))
    async with StreamingClient(config, transport=transport) as client:
        r = await client.send(WorkItem(prompt="x"), request_id=1, intended_ns=0, anchor_ns=0)
    assert (r.error_kind, r.sent_ns) == ("timeout_connect", None)
    assert transport.timeouts == {"connect": 1.5, "read": None, "write": None, "pool": None}


async def test_bad_chunked_framing_is_an_http_protocol_error() -> None:
    r = await send_one(script(Send(head() + TWO_CHUNKS + b"zz\r\n"), Close(at_s=0.05)))
    assert r.error_kind == "http_protocol_error" and len(r.chunk_ns) == 2


async def test_a_gzip_encoded_stream_is_decoded() -> None:
    import gzip

    body = gzip.compress(TWO_CHUNKS_SSE + event(chat_chunk("", finish_reason="stop")) + DONE)
    r = await send_one(script(Send(head(extra="Content-Encoding: gzip") + chunk(body) + END)))
    assert r.status == "ok" and len(r.chunk_ns) == 2


async def test_credentials_a_server_quotes_are_redacted_from_the_record() -> None:
    """A server that quotes the Authorization header it got (and a Pushgateway password it should never have
    seen): the record keeps the message, never the credentials."""
    basic, password = "dXNlcjpzM2NyZXQtcGFzcw==", "pg-pass-0123456789"

    def quote(request: ReceivedRequest) -> list[Action]:
        said = f"rejected {request.headers['authorization']!r} and {password}; token k"
        body = orjson.dumps({"error": {"message": said, "type": "authentication_error", "code": "bad_auth"}})
        return [Send(head(401, "application/json", chunked=False, length=len(body)) + body)]

    r = await send_one(quote, extra_headers={"Authorization": f"Basic {basic}", "X-Api-Key": "k"},
                       redact=(password,))
    assert r.http_status == 401 and r.error_message is not None
    assert basic not in r.error_message and password not in r.error_message
    assert r.error_message == ("HTTP 401: bad_auth: rejected '[redacted]' and [redacted]; token [redacted]")


def test_a_short_credential_is_redacted_only_as_a_word_of_its_own() -> None:
    from loadgen.redact import redact

    assert redact("key k, keep kinks", ["k"]) == "key [redacted], keep kinks"
    assert redact("Bearer sk-0123456789 was refused", ["Bearer sk-0123456789"]) == "[redacted] was refused"
    assert redact("quoted sk-0123456789 only", ["Bearer sk-0123456789"]) == "quoted [redacted] only"
    assert redact("cut at sk-0123…", ["sk-0123456789"]) == "cut at [redacted]…"
    assert redact("nothing to hide", []) == "nothing to hide"
