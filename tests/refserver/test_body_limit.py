"""A body over `--max-body-bytes` sent in one write with its headers, as HTTP clients send it: the client
reads the 413 (the server reads and discards the rest, refserver/api/body.py), never a connection reset."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from refserver.api.body import DISCARD_BYTES
from tests.refserver.fake_engine import make_app, serve_in_thread

LIMIT = 4096
BIG = 6_500_000  # bytes: more than the loopback socket buffers hold, so a server that stops reading blocks us
HEAD = "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"


@pytest.fixture(scope="module")
def address() -> Iterator[tuple[str, int]]:
    with serve_in_thread(make_app(max_body_bytes=LIMIT)) as url:
        host, port = url.removeprefix("http://").rsplit(":", 1)
        yield host, int(port)


def _body(size: int) -> bytes:
    prefix, suffix = b'{"messages": [{"role": "user", "content": "', b'"}]}'
    return prefix + b"x" * (size - len(prefix) - len(suffix)) + suffix


def _chunked(body: bytes, piece: int = 65536) -> bytes:
    parts = [b"%x\r\n%s\r\n" % (len(body[i:i + piece]), body[i:i + piece]) for i in range(0, len(body), piece)]
    return b"".join(parts) + b"0\r\n\r\n"


@contextmanager
def _sending(address: tuple[str, int], raw: bytes) -> Iterator[socket.socket]:
    """A connection writing `raw` from a thread (as one `sendall`, no pause), so the test can read meanwhile."""
    sock = socket.create_connection(address, timeout=60.0)
    failure: list[BaseException] = []

    def send() -> None:
        try:
            sock.sendall(raw)
        except OSError as exc:
            failure.append(exc)

    writer = threading.Thread(target=send, daemon=True)
    writer.start()
    try:
        yield sock
        writer.join(60.0)
        assert not failure, f"the server stopped reading the body: {failure[0]!r}"
    finally:
        sock.close()


def _response(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes; a reset is a failure (the 413 may be lost with it)."""
    received = b""
    deadline = time.monotonic() + 60.0
    while time.monotonic() < deadline:
        chunk = sock.recv(65536)  # ConnectionResetError fails the test
        if not chunk:
            return received
        received += chunk
    raise AssertionError(f"the server kept the connection open (received {received[:200]!r})")


def _assert_413(raw: bytes) -> None:
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413 "), raw[:200]
    assert b"connection: close" in head.lower()
    assert json.loads(body)["error"]["code"] == "body_too_large"


def test_a_declared_body_over_the_limit_sent_with_its_head_gets_413(address: tuple[str, int]) -> None:
    body = _body(BIG)
    with _sending(address, f"{HEAD}Content-Length: {len(body)}\r\n\r\n".encode() + body) as sock:
        _assert_413(_response(sock))


def test_a_chunked_body_over_the_limit_gets_413(address: tuple[str, int]) -> None:
    with _sending(address, f"{HEAD}Transfer-Encoding: chunked\r\n\r\n".encode() + _chunked(_body(BIG))) as sock:
        _assert_413(_response(sock))


def test_a_body_far_over_the_discard_bound_is_refused_without_reading_it(address: tuple[str, int]) -> None:
    sock = socket.create_connection(address, timeout=60.0)
    with sock:
        sock.sendall(f"{HEAD}Content-Length: {LIMIT + DISCARD_BYTES + 1}\r\n\r\n".encode() + b"x" * 1000)
        _assert_413(_response(sock))


def test_the_server_serves_on_after_refusing(address: tuple[str, int]) -> None:
    body = _body(BIG)
    with _sending(address, f"{HEAD}Content-Length: {len(body)}\r\n\r\n".encode() + body) as sock:
        _response(sock)
    url = f"http://{address[0]}:{address[1]}"
    reply = httpx.post(f"{url}/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}],
                                                          "max_tokens": 2}, timeout=30.0)
    assert reply.status_code == 200
