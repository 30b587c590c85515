"""The benchmarks' own HTTP bytes, shared by their paced servers and their floor clients.

- `take_request(buf)`: one request off the front of a server's buffer (head, Content-Length body);
- `RawStream`: the floor client's protocol, which only stamps each read; the stamps are matched to the
  server's `"goodput":{"t":...}` values after the run, so the client does no parsing while it reads.
"""

from __future__ import annotations

import asyncio
from time import perf_counter_ns

_STAMP = b'"goodput":{"t":'


def take_request(buf: bytes) -> tuple[bytes, bytes, bytes] | None:
    """(the head lower-cased, the body, what follows) for the first whole request in `buf`; None until
    all of it has arrived."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return None
    head = buf[:end].lower()
    at = head.find(b"content-length:")
    length = int(head[at + 15:].split(b"\r\n", 1)[0]) if at >= 0 else 0
    if len(buf) < end + 4 + length:
        return None
    return head, buf[end + 4:end + 4 + length], buf[end + 4 + length:]


class RawStream(asyncio.Protocol):
    """One keep-alive connection; per response: every read's end offset and delivery time."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.marks: list[tuple[int, int]] = []  # (bytes received so far, perf_counter_ns)
        self.done: asyncio.Future[None] | None = None
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is not an asyncio.Transport subclass

    def data_received(self, data: bytes) -> None:
        now = perf_counter_ns()
        self.buf += data
        self.marks.append((len(self.buf), now))
        if self.buf.endswith(b"\r\n0\r\n\r\n") and self.done is not None and not self.done.done():
            self.done.set_result(None)

    def stamps(self) -> tuple[list[int], list[float]]:
        """Per content chunk: the client's delivery time of the read that completed it, the server's stamp."""
        client: list[int] = []
        server: list[float] = []
        pos, m = 0, 0
        while (pos := self.buf.find(_STAMP, pos)) >= 0:
            server.append(float(self.buf[pos + len(_STAMP):self.buf.find(b",", pos)]))
            end = self.buf.find(b"\n\n", pos) + 2
            while self.marks[m][0] < end:
                m += 1
            client.append(self.marks[m][1])
            pos = end
        return client, server
