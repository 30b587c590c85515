"""Slow and idle clients against the server's connection deadlines and cap (connection_guard.py).

Each test serves the fake-engine app exactly as `goodput serve` configures uvicorn, with short limits,
and talks to it over raw sockets so that it can send half a request. Time bounds are generous (a busy
2-core machine): what matters is that the server closes such connections at all, and soon.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import httpx
import pytest

from refserver.api.connection_guard import ConnectionLimits
from tests.refserver.fake_engine import FakeEngine, make_app, serve_in_thread, sse_payloads

HEADER_S, BODY_S = 0.5, 1.0
SLACK_S = 15.0  # bound on how late a deadline may fire on a loaded machine
HALF_HEAD = b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: app"
CHAT = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}


@contextmanager
def _server(limits: ConnectionLimits, engine: FakeEngine | None = None) -> Iterator[tuple[str, tuple[str, int]]]:
    with serve_in_thread(make_app(engine), limits=limits) as url:
        host, port = url.removeprefix("http://").rsplit(":", 1)
        yield url, (host, int(port))


def _connect(address: tuple[str, int], stack: ExitStack) -> socket.socket:
    sock = stack.enter_context(socket.create_connection(address, timeout=30.0))
    return sock


def _read_until_closed(sock: socket.socket, deadline: float) -> bytes:
    """Everything the server sends until it closes the connection; fails past `deadline`."""
    received = b""
    while True:
        left = deadline - time.monotonic()
        assert left > 0, f"the server kept the connection open (received {received[:200]!r})"
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except ConnectionResetError:
            return received
        if not chunk:
            return received
        received += chunk


def _json_error(raw: bytes, status: int) -> dict[str, object]:
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(f"HTTP/1.1 {status} ".encode()), raw[:200]
    assert b"content-type: application/json" in head.lower()
    error = json.loads(body)["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return dict(error)


def test_half_headers_are_closed_while_normal_requests_succeed() -> None:
    with _server(ConnectionLimits(header_timeout_s=HEADER_S, body_timeout_s=BODY_S)) as (url, address), ExitStack() as stack:
        opened = time.monotonic()
        slow = [_connect(address, stack) for _ in range(50)]
        for sock in slow:
            sock.sendall(HALF_HEAD)
        response = httpx.post(f"{url}/v1/chat/completions", json=CHAT, timeout=30.0)
        assert response.status_code == 200
        deadline = opened + HEADER_S + SLACK_S
        for sock in slow:
            error = _json_error(_read_until_closed(sock, deadline), 408)
            assert error["code"] == "request_timeout"
            assert "head" in str(error["message"])
        assert time.monotonic() - opened >= HEADER_S  # not before the deadline
        assert httpx.get(f"{url}/health", timeout=30.0).status_code == 200


def test_trickling_a_head_does_not_extend_the_deadline() -> None:
    with _server(ConnectionLimits(header_timeout_s=HEADER_S)) as (_, address), ExitStack() as stack:
        sock = _connect(address, stack)
        start = time.monotonic()
        closed = False
        for byte in HALF_HEAD * 20:  # one byte every 50 ms: 70 s if nothing stops it
            try:
                sock.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            sock.settimeout(0.05)
            try:
                if sock.recv(65536) == b"" or time.monotonic() - start > HEADER_S + SLACK_S:
                    closed = True
                    break
            except TimeoutError:
                pass
            except ConnectionResetError:
                closed = True
                break
        assert closed
        assert time.monotonic() - start < HEADER_S + SLACK_S


def test_a_silent_connection_is_closed_without_a_response() -> None:
    with _server(ConnectionLimits(header_timeout_s=HEADER_S)) as (_, address), ExitStack() as stack:
        sock = _connect(address, stack)
        assert _read_until_closed(sock, time.monotonic() + HEADER_S + SLACK_S) == b""


def test_a_slow_body_gets_408_and_the_app_sees_no_request() -> None:
    engine = FakeEngine()
    with _server(ConnectionLimits(header_timeout_s=HEADER_S, body_timeout_s=BODY_S), engine) as (url, address), \
            ExitStack() as stack:
        sock = _connect(address, stack)
        start = time.monotonic()
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{\"messages\": ")
        error = _json_error(_read_until_closed(sock, start + BODY_S + SLACK_S), 408)
        assert "body" in str(error["message"])
        assert time.monotonic() - start >= BODY_S
        assert engine.finished == {} and engine.live == {}
        assert httpx.post(f"{url}/v1/chat/completions", json=CHAT, timeout=30.0).status_code == 200


def test_half_a_head_after_a_kept_alive_request_is_closed() -> None:
    with _server(ConnectionLimits(header_timeout_s=HEADER_S)) as (_, address), ExitStack() as stack:
        sock = _connect(address, stack)
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(30.0)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
        time.sleep(HEADER_S * 2)  # idle between requests is the keep-alive timeout's business (5 s)
        sock.sendall(HALF_HEAD)
        _json_error(_read_until_closed(sock, time.monotonic() + HEADER_S + SLACK_S), 408)


def test_slow_responses_and_idle_keep_alive_are_not_cut() -> None:
    """The deadlines cover receiving a request only: a long answer, and a pause between requests on a
    kept-alive connection, both longer than either deadline, go through."""
    engine = FakeEngine(step_s=0.2)  # 4 tokens: about 0.8 s, longer than the head deadline
    with _server(ConnectionLimits(header_timeout_s=0.3, body_timeout_s=0.3), engine) as (url, _), \
            httpx.Client(base_url=url, timeout=30.0) as client:
        for stream in (False, True):
            response = client.post("/v1/chat/completions", json={**CHAT, "stream": stream})
            assert response.status_code == 200
            if stream:
                events = sse_payloads(response.text)
                assert events[-1] == "[DONE]"
                text = "".join(e["choices"][0]["delta"].get("content", "") for e in events[:-1] if e["choices"])
            else:
                text = response.json()["choices"][0]["message"]["content"]
            assert text == "Hell"
            time.sleep(0.8)
        assert client.get("/health").status_code == 200


@pytest.mark.parametrize("limit", [5])
def test_connections_past_the_cap_get_503(limit: int) -> None:
    with _server(ConnectionLimits(header_timeout_s=60.0, max_connections=limit)) as (url, address), \
            ExitStack() as stack:
        held = [_connect(address, stack) for _ in range(limit)]
        for sock in held:
            sock.sendall(HALF_HEAD)
        extra = _connect(address, stack)
        error = _json_error(_read_until_closed(extra, time.monotonic() + SLACK_S), 503)
        assert error["code"] == "too_many_connections"
        for sock in held:
            sock.close()
        deadline = time.monotonic() + SLACK_S
        while True:  # the server notices the closed ones, then serves again
            try:
                if httpx.get(f"{url}/health", timeout=5.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the server never served again after the held connections closed"
            time.sleep(0.05)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"header_timeout_s": 0.0}, "--header-timeout"), ({"body_timeout_s": float("nan")}, "--body-timeout"),
     ({"max_connections": 0}, "--max-connections")],
)
def test_limits_are_checked(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ConnectionLimits(**kwargs)  # type: ignore[arg-type]
