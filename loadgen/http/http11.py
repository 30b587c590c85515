"""The HTTP/1.1 wire side of `loadgen.http.transport`: response heads and body framing (the connection
protocol itself is `loadgen.http.connection`).

Why not httpcore + h11: on a 2-core machine they cost ~40-70 µs of CPU per streamed chunk (an
anyio cancel scope per read, h11's event machinery, and a connection pool whose request assignment
scans every connection per request). A streamed LLM response needs a small, strict subset of
HTTP/1.1 — a status line, headers, and a chunked, Content-Length or close-delimited body — so this
module parses exactly that with `bytes.find` and slices, and raises httpx's own exception types so
callers see the same errors as with httpx's default transport.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx

from loadgen.http.connection import Connection

MAX_HEAD_BYTES = 64 * 1024
_SIZE, _DATA, _CRLF, _TRAILER, _DONE = range(5)
_HEX = b"0123456789abcdefABCDEF"


class ResponseHead:
    __slots__ = ("headers", "http_version", "keep_alive", "reason", "status")

    def __init__(self, status: int, reason: bytes, http_version: bytes, headers: list[tuple[bytes, bytes]]):
        self.status = status
        self.reason = reason
        self.http_version = http_version
        self.headers = headers
        conn = b",".join(v for k, v in headers if k.lower() == b"connection").lower()
        self.keep_alive = http_version == b"HTTP/1.1" and b"close" not in conn


async def read_head(conn: Connection) -> ResponseHead:
    """Read one response head (skipping 1xx interim responses); leave the body bytes unread."""
    buf = b""
    while True:
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            if len(buf) > MAX_HEAD_BYTES:
                raise httpx.RemoteProtocolError(f"response head larger than {MAX_HEAD_BYTES} bytes")
            data = await conn.read()
            if not data:
                raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
            buf += data
            continue
        head = parse_head(buf[:end])
        buf = buf[end + 4 :]
        if 100 <= head.status < 200 and head.status != 101:
            continue
        conn.unread(buf)
        return head


def parse_head(block: bytes) -> ResponseHead:
    lines = block.split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or len(parts[1]) != 3 or not parts[1].isdigit():
        raise httpx.RemoteProtocolError(f"invalid status line: {lines[0][:80]!r}")
    headers: list[tuple[bytes, bytes]] = []
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep or not name or name != name.strip() or line[:1] in (b" ", b"\t"):
            raise httpx.RemoteProtocolError(f"invalid header line: {line[:80]!r}")
        headers.append((name, value.strip(b" \t")))
    return ResponseHead(int(parts[1]), parts[2] if len(parts) > 2 else b"", parts[0], headers)


def body_decoder(head: ResponseHead, method: bytes) -> BodyDecoder:
    """How this response's body ends: chunked, Content-Length, empty, or at connection close."""
    if method == b"HEAD" or head.status in (204, 304):
        return FixedLength(0)
    encodings = [v for k, v in head.headers if k.lower() == b"transfer-encoding"]
    if encodings:
        if encodings[-1].split(b",")[-1].strip().lower() != b"chunked":
            raise httpx.RemoteProtocolError(f"unsupported transfer-encoding {encodings[-1]!r}")
        return Chunked()
    lengths = {v for k, v in head.headers if k.lower() == b"content-length"}
    if lengths:
        if len(lengths) > 1 or not next(iter(lengths)).isdigit():
            raise httpx.RemoteProtocolError(f"invalid content-length {sorted(lengths)!r}")
        return FixedLength(int(next(iter(lengths))))
    return UntilClose()


class BodyDecoder:
    """Turns network reads into body bytes; `done` once the framing says the body is complete."""

    done = False
    reusable = True  # False when the framing leaves the connection unusable afterwards
    error: httpx.RemoteProtocolError | None = None  # raise after the body bytes that preceded it
    feed: Callable[[bytes], bytes]


class FixedLength(BodyDecoder):
    def __init__(self, length: int) -> None:
        self.left = length
        self.done = length == 0

    def feed(self, data: bytes) -> bytes:
        if len(data) >= self.left:
            if len(data) > self.left:
                self.reusable = False  # bytes past the body: the server is out of step
            data, self.left, self.done = data[: self.left], 0, True
        else:
            self.left -= len(data)
        return data


class UntilClose(BodyDecoder):
    reusable = False

    def feed(self, data: bytes) -> bytes:
        return data


class Chunked(BodyDecoder):
    """Incremental chunked transfer decoding; a read holding one whole chunk costs two finds and a slice."""

    def __init__(self) -> None:
        self._buf = b""
        self._state = _SIZE
        self._left = 0

    def feed(self, data: bytes) -> bytes:
        if self.error is not None:
            raise self.error
        if self._state == _SIZE and not self._buf:  # the common read: exactly one whole chunk
            eol = data.find(b"\r\n")
            size_text = data[:eol]
            if 0 < eol <= 16 and not size_text.strip(_HEX):
                start = eol + 2
                end = start + int(size_text, 16)
                if end > start and end + 2 == len(data) and data.endswith(b"\r\n"):
                    return data[start:end]
        out: list[bytes] = []
        try:
            return self._feed(data, out)
        except httpx.RemoteProtocolError as exc:
            if not out:
                raise
            self.error, self.reusable = exc, False  # hand over the good chunks before the bad framing
            return b"".join(out)

    def _feed(self, data: bytes, out: list[bytes]) -> bytes:
        buf = self._buf + data if self._buf else data
        pos, end, state, left = 0, len(buf), self._state, self._left
        while pos < end:
            if state == _DATA:
                take = min(left, end - pos)
                out.append(buf[pos : pos + take])
                pos += take
                left -= take
                if not left:
                    state = _CRLF
            elif state in (_SIZE, _TRAILER):
                eol = buf.find(b"\r\n", pos)
                if eol < 0:
                    if end - pos > 4096:
                        raise httpx.RemoteProtocolError("chunk size line too long")
                    break
                line, pos = buf[pos:eol], eol + 2
                if state == _TRAILER:
                    if not line:
                        state = _DONE
                        self.reusable = pos == end
                        break
                    continue
                size_text = line.split(b";", 1)[0].strip()
                if not size_text or size_text.strip(_HEX) or len(size_text) > 16:
                    raise httpx.RemoteProtocolError(f"invalid chunk size line {line[:40]!r}")
                left = int(size_text, 16)
                state = _DATA if left else _TRAILER
            else:  # _CRLF after chunk data
                if end - pos < 2:
                    break
                if buf[pos : pos + 2] != b"\r\n":
                    raise httpx.RemoteProtocolError("chunk data not followed by CRLF")
                pos += 2
                state = _SIZE
        self._buf = buf[pos:] if pos < end and state != _DONE else b""
        self._state, self._left = state, left
        self.done = state == _DONE
        if len(out) == 1:
            return out[0]
        return b"".join(out)
