"""Incremental Server-Sent Events parser over raw bytes (the WHATWG `text/event-stream` rules).

This is the client's hot path: every body read passes through `SSEParser.feed`. It works on bytes
with `bytes.split`/`find` (no per-byte Python loop) and leaves `data` as bytes so that orjson parses
it without a decode. Rules implemented:

- line ends: LF, CRLF and a lone CR, also when a CRLF is split across two reads;
- a blank line dispatches the event; an event with no `data:` line is not dispatched (per spec);
- `data:` lines of one event are joined with LF; one optional space after the colon is dropped;
- `:` comment lines are ignored; `event:`, `id:` (ignored if it contains NUL) and `retry:`
  (digits only) are kept; a UTF-8 BOM at the very start is skipped;
- strict mode (the default) rejects any other field name, where a lenient parser would silently
  ignore e.g. a raw JSON line — a load test must not mistake a broken server for an empty stream.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024

_BOM = b"\xef\xbb\xbf"


class SSEError(Exception):
    """The byte stream is not valid SSE (strict mode)."""


class SSEEventTooLarge(SSEError):
    """One event (or one unterminated line) grew past the parser's `max_event_bytes`."""


@dataclass(slots=True)
class SSEEvent:
    data: bytes  # data lines joined with LF, undecoded
    event: str | None = None  # the `event:` field, None when absent (the spec's "message")
    id: str | None = None  # last event id seen so far in the stream
    retry: int | None = None  # reconnection time (ms) if this event set one


class SSEParser:
    """Feed it bytes as they arrive; it returns the events completed by those bytes."""

    __slots__ = (
        "_buf",
        "_data",
        "_data_size",
        "_event",
        "_last_id",
        "_max",
        "_retry",
        "_skip_lf",
        "_started",
        "_strict",
        "error",
    )

    def __init__(self, *, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES, strict: bool = True) -> None:
        if max_event_bytes <= 0:
            raise ValueError(f"max_event_bytes must be positive, got {max_event_bytes}")
        self._max = max_event_bytes
        self._strict = strict
        self._buf = b""  # the unterminated tail of the last read
        self._skip_lf = False  # the last read ended in CR: an LF opening the next one belongs to it
        self._started = False
        self._data: list[bytes] = []
        self._data_size = 0
        self._event: str | None = None
        self._retry: int | None = None
        self._last_id: str | None = None
        self.error: SSEError | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """The events completed by `chunk`. A fault raises `SSEError`; when events complete before
        it in the same chunk they are returned first, `error` is set and the next call raises."""
        if self.error is not None:
            raise self.error
        if not chunk:
            return []
        if not self._started:
            pending = self._buf + chunk
            if len(pending) < len(_BOM) and _BOM.startswith(pending):
                self._buf = pending  # could still be a BOM: wait for more bytes
                return []
            self._started = True
            self._buf = b""
            chunk = pending[3:] if pending.startswith(_BOM) else pending
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        elif (not self._buf and not self._data and chunk.startswith(b"data: ")
              and chunk.find(b"\n") == len(chunk) - 2 and chunk.endswith(b"\n\n") and b"\r" not in chunk):
            return [self._single_data_event(chunk[6:-2])]  # the common read: one event of one data line
        buf = self._buf + chunk if self._buf else chunk
        if b"\r" in buf:
            self._skip_lf = buf[-1:] == b"\r"
            buf = buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = buf.split(b"\n")
        self._buf = lines.pop()
        events: list[SSEEvent] = []
        try:
            if lines:
                self._lines(lines, events)
            if len(self._buf) > self._max:
                raise SSEEventTooLarge(f"an SSE line exceeds {self._max} bytes without a line end")
        except SSEError as exc:
            if not events:
                raise
            self.error = exc  # hand over the events before the fault; raise on the next call
        return events

    def _single_data_event(self, value: bytes) -> SSEEvent:
        """`data: VALUE` then a blank line, with nothing pending: what `_lines` makes of it, directly."""
        if len(value) + 1 > self._max:
            raise SSEEventTooLarge(f"an SSE event exceeds {self._max} bytes")
        event = SSEEvent(value, self._event, self._last_id, self._retry)
        self._event = None
        self._retry = None
        return event

    def close(self) -> list[SSEEvent]:
        """End of stream: an unterminated last line is processed, an undispatched event dropped (spec)."""
        if self.error is not None:
            raise self.error
        events: list[SSEEvent] = []
        if self._buf:
            line, self._buf = self._buf, b""
            self._lines([line], events)
        self._data = []
        self._data_size = 0
        return events

    @property
    def has_partial_event(self) -> bool:
        """True when bytes of an event not yet dispatched are buffered (a cut-off stream)."""
        return bool(self._buf or self._data)

    def _lines(self, lines: list[bytes], events: list[SSEEvent]) -> None:
        data = self._data
        for line in lines:
            if not line:
                if data:
                    events.append(SSEEvent(b"\n".join(data), self._event, self._last_id, self._retry))
                    data.clear()
                    self._data_size = 0
                self._event = None
                self._retry = None
                continue
            if line.startswith(b"data:"):
                value = line[6:] if line[5:6] == b" " else line[5:]
                data.append(value)
                self._data_size += len(value) + 1
                if self._data_size > self._max:
                    raise SSEEventTooLarge(f"an SSE event exceeds {self._max} bytes")
                continue
            if line[0] == 0x3A:  # ":" comment (keep-alives, server notes)
                continue
            self._field(line)

    def _field(self, line: bytes) -> None:
        colon = line.find(b":")
        if colon < 0:
            name, value = line, b""
        else:
            name = line[:colon]
            value = line[colon + 2 :] if line[colon + 1 : colon + 2] == b" " else line[colon + 1 :]
        if name == b"data":  # a bare "data" line: an empty data line
            self._data.append(b"")
            self._data_size += 1
        elif name == b"event":
            self._event = value.decode("utf-8", "replace")
        elif name == b"id":
            if b"\0" not in value:
                self._last_id = value.decode("utf-8", "replace")
        elif name == b"retry":
            if value.isdigit():
                self._retry = int(value)
        elif self._strict:
            shown = line[:80].decode("utf-8", "replace")
            raise SSEError(f"not an SSE field or comment: {shown!r}")
