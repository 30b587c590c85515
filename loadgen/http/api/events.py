"""What one streamed event means, whatever the API: the kinds an API's decoder reduces each event to,
and the accumulator that turns decoded events into the same per-chunk truth chat's `ChunkAccumulator`
keeps (docs/metrics.md, content chunks and token accounting).

An API's decoder maps the JSON of one event to a tuple of `(kind, value)` pairs, usually one or none:

- `TEXT` answer text; `REASONING` thinking text (a reasoning or summary delta);
- `TOOL_START` a tool call begins (value: its id and name; a content chunk, as chat's first tool-call
  delta is), `TOOL_ARGS` a piece of its JSON arguments, `TOOL_DONE` its arguments are complete;
- `USAGE` the token counts so far, in chat's shape (`prompt_tokens`, `completion_tokens`,
  `prompt_tokens_details.cached_tokens`, `completion_tokens_details.reasoning_tokens`): each one
  replaces the fields it names;
- `FINISH` why the answer ended, in chat's words (`stop`, `length`, `tool_calls`, or the server's own);
- `ERROR` the server reports a failure inside the stream; `END` the API's terminal event: the stream
  is complete (chat's `[DONE]`). A stream that ends without it was cut off, even after a finish.

Events of no interest decode to `()`. Texts are kept by reference and tokens split after the stream,
as for chat: these APIs carry no running usage, only final counts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from loadgen.http.chunks import ChunkAccumulator, error_text, event_object, tool_call
from loadgen.http.errors import InvalidJSON, MidStreamError
from loadgen.http.usage import ServerStamp

TEXT = "text"
REASONING = "reasoning"
TOOL_START = "tool_start"
TOOL_ARGS = "tool_args"
TOOL_DONE = "tool_done"
USAGE = "usage"
FINISH = "finish"
ERROR = "error"
END = "end"

Decoded = tuple[tuple[str, Any], ...]
Decoder = Callable[[dict[str, Any]], Decoded]
NOTHING: Decoded = ()


class EventAccumulator(ChunkAccumulator):
    """A `ChunkAccumulator` fed by an API decoder instead of chat's chunk shape; `fill` is the same."""

    __slots__ = ("_decode", "terminal")

    def __init__(self, decode: Decoder, terminal: str) -> None:
        super().__init__()
        self._decode = decode
        self.terminal = terminal  # the terminal event's name, for the cut-off message

    def cut_off(self) -> str | None:
        return f"stream ended before {self.terminal}"

    def feed(self, data: bytes, t_ns: int) -> bool:
        obj = event_object(data)
        try:
            events = self._decode(obj)
            before = len(self.chunk_ns)
            ended = self._apply(events, t_ns)
            goodput: ServerStamp | None = obj.get("goodput")
            if type(goodput) is dict and goodput:
                self._server_stamp(goodput, len(self.chunk_ns) > before)
        except (AttributeError, TypeError, IndexError, KeyError, ValueError) as exc:
            raise InvalidJSON(f"unexpected event shape ({type(exc).__name__}: {exc}): {data[:80]!r}") from None
        return ended

    def _apply(self, events: Decoded, t_ns: int) -> bool:
        ended = started = False
        for kind, value in events:
            if kind in (TEXT, REASONING):
                if not value:
                    self.empty_at.append(len(self.chunk_ns))
                    continue
                if kind == REASONING:
                    self.reasoning_at.append(len(self.chunk_ns))
                self.chunk_ns.append(t_ns)
                self.texts.append(str(value))
            elif kind in (TOOL_START, TOOL_ARGS):
                if kind == TOOL_START:
                    self.tool_calls += 1
                    call_id, name = value
                    self.calls.append(tool_call(call_id, name, len(self.calls)))
                    started = True
                elif not value:
                    continue
                else:
                    if self.calls:
                        self.calls[-1]["function"]["arguments"] += str(value)
                    if started:
                        continue  # arguments in the event that began the call: one event, one chunk
                self.tool_at.append(len(self.chunk_ns))
                self.chunk_ns.append(t_ns)
                self.texts.append(None)
            elif kind == TOOL_DONE:
                if self.tool_done_ns is None and self.tool_calls:
                    self.tool_done_ns = t_ns
            elif kind == USAGE:
                self.usage = {**(self.usage or {}), **value}
            elif kind == FINISH:
                self.finish_reason = str(value)
            elif kind == ERROR:
                raise MidStreamError(error_text(value))
            elif kind == END:
                self.done = ended = True
        return ended
