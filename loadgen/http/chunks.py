"""From the JSON of each SSE event to the per-chunk truth of a `RequestRecord` (docs/metrics.md, content chunks and token accounting).

A content chunk is an event whose `choices[0].delta` (chat) or `choices[0].text` (completions)
carries output: `content`, `reasoning_content`, `reasoning` or `tool_calls`. Role-only, empty and
usage-only events are not chunks: they never get a timestamp.

Tokens per chunk k_j, best source first:
- `usage_delta`: running usage on every content chunk; k_j = Δ completion_tokens. Tokens counted on
  a non-content event (e.g. a finish event whose text is empty) are carried to the next content
  chunk, or to the last one when none follows, so Σk_j equals the server's count;
- `server`: the reference server's `"goodput": {"t": s, "n": k}` on every content chunk;
- otherwise inferred after the stream ended from each chunk's text, the empty token events and the
  final usage if any (`loadgen.http.chunk_tokens`). While streaming, a content chunk only keeps a reference
  to its text and an empty token event only its position: the per-event work stays a few list appends.
"""

from __future__ import annotations

from typing import Any, TypedDict

import orjson

from loadgen.http.chunk_tokens import infer_chunk_tokens
from loadgen.http.errors import InvalidJSON, InvalidUTF8, MidStreamError, bounded
from loadgen.http.output_kinds import fill_output_kinds
from loadgen.http.usage import ServerStamp, Timings, Usage
from loadgen.types import ToolCall
from loadgen.workload import TokenCounter
from metrics.records import RequestRecord

_DONE = b"[DONE]"
_GOODPUT_PER_CHUNK = frozenset({"t", "n"})


class ChatChoice(TypedDict, total=False):
    """An event's `choices[0]` (chat's `delta`, completions' `text`), as the server sent it: its values are
    checked where they are read, as the stream goes (nothing is built or checked per chunk for the type)."""

    delta: object
    text: object
    finish_reason: object


def decode_error(data: bytes, exc: Exception) -> InvalidJSON | InvalidUTF8:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as utf:
        return InvalidUTF8(f"event data is not UTF-8 ({utf.reason} at byte {utf.start})")
    return InvalidJSON(f"event data is not JSON ({exc}): {text[:80]!r}")


def event_object(data: bytes) -> dict[str, Any]:
    """One event's data as a JSON object; InvalidJSON or InvalidUTF8 (one line) when it is not one."""
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise decode_error(data, exc) from None
    if type(obj) is not dict:
        raise InvalidJSON(f"event data is not a JSON object: {data[:80]!r}")
    return obj


def error_text(error: Any) -> str:
    """A readable message from an OpenAI-style error object (or anything else a server sends)."""
    if isinstance(error, dict):
        message = error.get("message") or error.get("detail") or error.get("error")
        code = error.get("code") or error.get("type")
        text = str(message) if message is not None else orjson.dumps(error).decode()
        return bounded(f"{code}: {text}" if code else text)
    return bounded(str(error))


class ChunkAccumulator:
    """Feed it each event's data with the time it was read; `fill` writes the record's chunk fields."""

    __slots__ = (
        "_last_completion",
        "_pending_server",
        "_pending_usage",
        "_tool_index",
        "calls",
        "chunk_ns",
        "done",
        "empty_at",
        "finish_reason",
        "goodput_final",
        "reasoning_at",
        "server_s",
        "server_tokens",
        "texts",
        "timings",
        "tool_at",
        "tool_calls",
        "tool_done_ns",
        "usage",
        "usage_tokens",
    )

    def __init__(self) -> None:
        self.chunk_ns: list[int] = []
        self.texts: list[Any] = []  # each content chunk's text (None for a tool call), read after the stream
        self.reasoning_at: list[int] = []  # content chunks whose text is reasoning, not the answer
        self.empty_at: list[int] = []  # per empty token event: the number of content chunks before it
        self.usage_tokens: list[int] = []  # Δ completion_tokens per content chunk that carried usage
        self.server_tokens: list[int] = []  # goodput.n per content chunk that carried it
        self.server_s: list[float] = []  # goodput.t per content chunk that carried it
        self._last_completion = 0
        self._pending_usage = 0
        self._pending_server = 0
        self.usage: Usage | None = None  # the latest usage object (the final one at the end)
        self.goodput_final: ServerStamp | None = None
        self.timings: Timings | None = None
        self.finish_reason: str | None = None
        self.done = False
        self.tool_at: list[int] = []  # content chunks that are tool-call deltas
        self.tool_calls = 0  # tool calls begun
        self.tool_done_ns: int | None = None  # the first call's arguments complete
        self._tool_index: Any = None  # chat: the index of the call being streamed
        self.calls: list[ToolCall] = []  # the calls as streamed, in chat's form (a conversation's history)

    def cut_off(self) -> str | None:
        """Why a body that ended here (no terminal event) was cut off; None: it ended complete (chat: a
        finish_reason arrived, and a clean close after it is a success)."""
        return None if self.finish_reason is not None else "stream ended before a finish_reason or [DONE]"

    def feed(self, data: bytes, t_ns: int) -> bool:
        """One event's data read at `t_ns`. Returns True on `[DONE]`. Raises a StreamFailed leaf."""
        if data == _DONE:
            self.done = True
            return True
        obj = event_object(data)
        try:
            self._event(obj, t_ns)
        except (AttributeError, TypeError, IndexError, KeyError, ValueError) as exc:
            raise InvalidJSON(
                f"unexpected chunk shape ({type(exc).__name__}: {exc}): {data[:80]!r}"
            ) from None
        return False

    def _event(self, obj: dict[str, Any], t_ns: int) -> None:
        error = obj.get("error")
        if error is not None:
            raise MidStreamError(error_text(error))
        if obj.get("object") == "error":
            raise MidStreamError(error_text(obj))
        content = False
        choices = obj.get("choices")
        if choices:
            first = choices[0]
            delta = first.get("delta")
            if delta is not None:
                text = delta.get("content")
                if text:
                    content = True
                else:
                    text = delta.get("reasoning_content") or delta.get("reasoning")
                    if text:
                        self.reasoning_at.append(len(self.chunk_ns))
                        content = True
                    else:
                        calls = delta.get("tool_calls")
                        content = bool(calls)
                        if content:
                            self._tool_deltas(calls, t_ns)
            else:
                text = first.get("text")
                content = bool(text)
            reason = first.get("finish_reason")
            if reason is not None:
                self.finish_reason = str(reason)
                if self.tool_calls and self.tool_done_ns is None:
                    self.tool_done_ns = t_ns
            if content:
                self.chunk_ns.append(t_ns)
                self.texts.append(text)
            elif reason is None and _empty_token_event(first, delta):
                self.empty_at.append(len(self.chunk_ns))
        usage: Usage | None = obj.get("usage")  # the server's: checked here, its values where read
        if type(usage) is dict and usage:
            self.usage = usage
            completion = usage.get("completion_tokens")
            if type(completion) is int:
                step = completion - self._last_completion
                self._last_completion = completion
                if content:
                    self.usage_tokens.append(step + self._pending_usage)
                    self._pending_usage = 0
                else:
                    self._pending_usage += step
        goodput: ServerStamp | None = obj.get("goodput")
        if type(goodput) is dict and goodput:
            self._server_stamp(goodput, content)
        timings: Timings | None = obj.get("timings")
        if type(timings) is dict and timings:
            self.timings = timings

    def _tool_deltas(self, calls: list[dict[str, Any]], t_ns: int) -> None:
        """Chat's `delta.tool_calls`: a call begins with a new `index`; the first is complete when the
        next begins (or, in `_event`, when the finish_reason arrives)."""
        self.tool_at.append(len(self.chunk_ns))
        for call in calls:
            index = call.get("index", 0)
            function = call.get("function") or {}
            if index != self._tool_index:
                if self.tool_calls and self.tool_done_ns is None:
                    self.tool_done_ns = t_ns
                self._tool_index = index
                self.tool_calls += 1
                self.calls.append(tool_call(call.get("id"), function.get("name"), len(self.calls)))
            arguments = function.get("arguments")
            if arguments:  # a string piece; a server that sends the object whole gets it as JSON text
                self.calls[-1]["function"]["arguments"] += (
                    arguments if type(arguments) is str else orjson.dumps(arguments).decode())

    def content_text(self) -> str:
        """The answer as streamed: the content chunks' text, without reasoning and tool calls."""
        skip = set(self.reasoning_at)
        return "".join(t for i, t in enumerate(self.texts) if type(t) is str and i not in skip)

    def _server_stamp(self, goodput: ServerStamp, content: bool) -> None:
        """The reference server's per-chunk stamp `{"t": s, "n": k}` (its final figures beside them on the
        last event): a content event's send time and tokens, a non-content event's tokens carried over."""
        n = goodput.get("n")
        if content:
            t = goodput.get("t")
            if t is not None:
                self.server_s.append(t if type(t) is float else seconds(t))
            if type(n) is int:
                self.server_tokens.append(n + self._pending_server)
                self._pending_server = 0
        elif type(n) is int:
            self._pending_server += n
        if len(goodput) > 2 or not _GOODPUT_PER_CHUNK.issuperset(goodput):
            self.goodput_final = goodput

    def fill(self, record: RequestRecord, counter: TokenCounter | None = None) -> None:
        """The record's chunk and token fields; `counter` (the run's tokenizer, if any) is only used when
        the server did not count tokens per chunk."""
        chunks = len(self.chunk_ns)
        record.chunk_ns = self.chunk_ns
        record.finish_reason = self.finish_reason
        usage: Usage = self.usage or {}
        final = usage.get("completion_tokens")
        final_tokens = final if type(final) is int else None
        estimate: int | None = None
        if chunks and len(self.usage_tokens) == chunks and min(self.usage_tokens) >= 0:
            record.chunk_tokens = _with_trailing(self.usage_tokens, self._pending_usage)
            record.token_source = "usage_delta"
        elif chunks and len(self.server_tokens) == chunks:
            record.chunk_tokens = _with_trailing(self.server_tokens, self._pending_server)
            record.token_source = "server"
        else:
            record.chunk_tokens, record.token_source, estimate, by_tokenizer = infer_chunk_tokens(
                self.texts, self.empty_at, final_tokens, counter
            )
            if by_tokenizer is not None:  # the estimate weighed the tokenizer against the events: keep both
                record.output_tokens_by_events = chunks + len(self.empty_at)
                record.output_tokens_by_tokenizer = by_tokenizer
        if final_tokens is not None:
            record.output_tokens, record.output_tokens_estimated = final_tokens, False
        else:
            record.output_tokens = estimate if estimate is not None else sum(record.chunk_tokens or ())
            record.output_tokens_estimated = True
        prompt = usage.get("prompt_tokens")
        if type(prompt) is int:
            record.prompt_tokens, record.prompt_tokens_estimated = prompt, False
        record.cached_tokens = self._cached(usage)
        record.server_chunk_s = self.server_s if chunks and len(self.server_s) == chunks else None
        server: dict[str, Any] = {}
        if self.goodput_final:
            server.update((k, v) for k, v in self.goodput_final.items() if k not in _GOODPUT_PER_CHUNK)
        if self.timings:
            server["timings"] = self.timings
        record.server = server or None
        fill_output_kinds(record, self.reasoning_at, self.tool_at, self.tool_calls, self.tool_done_ns, usage)

    def _cached(self, usage: Usage) -> int | None:
        details = usage.get("prompt_tokens_details")
        if isinstance(details, dict) and type(details.get("cached_tokens")) is int:
            return int(details["cached_tokens"])
        cache_n = self.timings.get("cache_n") if self.timings else None
        if type(cache_n) is int:
            return cache_n
        cached = self.goodput_final.get("cached_tokens") if self.goodput_final else None
        return cached if type(cached) is int else None


def seconds(value: object) -> float:
    """A stamp's `t` as a float: what `float()` makes of a JSON number or string, its TypeError otherwise."""
    if isinstance(value, int | float | str):
        return float(value)
    raise TypeError(f"float() argument must be a string or a real number, not '{type(value).__name__}'")


def tool_call(call_id: object, name: object, number: int) -> ToolCall:
    """A streamed tool call as a chat assistant message's `tool_calls` entry (arguments still empty)."""
    return {"id": str(call_id or f"call_{number}"), "type": "function",
            "function": {"name": str(name or ""), "arguments": ""}}


def _empty_token_event(first: ChatChoice, delta: object) -> bool:
    """An event for one token whose text the server holds back: `"content": ""` (or `"text": ""`), not
    the role announcement and not the finish event (the caller checked finish_reason)."""
    if delta is None:
        return first.get("text") == ""
    return type(delta) is dict and delta.get("content") == "" and "role" not in delta


def _with_trailing(tokens: list[int], trailing: int) -> list[int]:
    if trailing:
        tokens = [*tokens[:-1], tokens[-1] + trailing]
    return tokens
