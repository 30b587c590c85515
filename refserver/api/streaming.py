"""Server-sent events in OpenAI/vLLM shape, with the timing extension and mid-stream faults.

Chat: a role-only chunk, content chunks, a chunk with `finish_reason` (empty delta), a usage-only chunk
(`choices: []`) when `stream_options.include_usage`, then `data: [DONE]`. Completions: the same without
the role chunk. Every chunk carries `goodput: {t, n}`; the finish chunk's `goodput` adds the phase
times and `cached_tokens`, and the chunk carries llama.cpp-style `timings`. With
`continuous_usage_stats` every chunk carries the running usage, whose `completion_tokens` is the sum of
the `n` sent so far (so Δcompletion_tokens is exactly the chunk's tokens).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import orjson
from starlette.types import Receive, Scope, Send

from refserver.api.behaviour import TurnPlan
from refserver.api.errors import APIError, ErrorBody
from refserver.api.faults import FaultConfig, FaultKind
from refserver.api.generate import Generation
from refserver.api.messages_wire import MessagesEvent
from refserver.api.openai_wire import ChatDelta, Chunk, ChunkChoice, ChunkHead, FunctionDelta, ToolCallDelta
from refserver.api.protocol import GenerationRequest
from refserver.api.responses_wire import ResponsesEvent
from refserver.api.timing import RequestTimes, Usage, chunk_goodput, final_goodput, llama_timings, usage
from refserver.api.turn import CallStart, Delta, Finish, turn_events


class Drop:
    """Yielded by an event stream to close the connection without ending the response (a fault)."""


DROP = Drop()
DONE = b"data: [DONE]\n\n"
MALFORMED_EVENT = b'data: {"id": "broken", "choices": [\n\n'


# Characters that JSON leaves raw but `str.splitlines` (and so httpx's `iter_lines`) treats as line breaks;
# escaped so that no client splits an event in two. orjson already escapes everything below U+0020.
_LINE_BREAKS_IN_JSON = ((b"\xc2\x85", b"\\u0085"), (b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"))


def _json(payload: Chunk | ErrorBody | ResponsesEvent | MessagesEvent) -> bytes:
    data = orjson.dumps(payload)
    for raw, escaped in _LINE_BREAKS_IN_JSON:
        if raw in data:
            data = data.replace(raw, escaped)
    return data


def sse_event(payload: Chunk | ErrorBody) -> bytes:
    return b"data: " + _json(payload) + b"\n\n"


def named_event(name: str, payload: ResponsesEvent | MessagesEvent) -> bytes:
    """An event with an `event:` line, as the Responses and Messages APIs send every event."""
    return b"event: " + name.encode() + b"\ndata: " + _json(payload) + b"\n\n"


class ChunkBuilder:
    """Builds the JSON objects of one request's stream."""

    def __init__(self, request: GenerationRequest, *, request_id: str, model: str, times: RequestTimes) -> None:
        self.request = request
        self.chat = request.kind == "chat"
        self.times = times
        self.sent_tokens = 0
        self.reasons = False  # usage carries completion_tokens_details.reasoning_tokens
        self.base: ChunkHead = {
            "id": request_id,
            "object": "chat.completion.chunk" if self.chat else "text_completion",
            "created": int(time.time()),
            "model": model,
        }

    def _choice(self, text: str | None, finish_reason: str | None, *, role: bool = False) -> ChunkChoice:
        if self.chat:
            delta: ChatDelta = {"role": "assistant", "content": ""} if role else {}
            if text:
                delta["content"] = text
            return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return {"index": 0, "text": text or "", "logprobs": None, "finish_reason": finish_reason}

    def _chunk(self, choices: list[ChunkChoice], tokens: int, *, final: bool = False) -> Chunk:
        self.sent_tokens += tokens
        now = time.perf_counter()
        chunk: Chunk = {**self.base, "choices": choices}
        if final:
            chunk["goodput"] = final_goodput(self.times, now, tokens)
            chunk["timings"] = llama_timings(self.times)
        else:
            chunk["goodput"] = chunk_goodput(self.times, now, tokens)
        if self.request.include_usage and self.request.continuous_usage_stats:
            chunk["usage"] = self._usage(completion_tokens=self.sent_tokens)
        return chunk

    def _usage(self, *, completion_tokens: int) -> Usage:
        running = RequestTimes(
            arrival_s=self.times.arrival_s,
            num_prompt_tokens=self.times.num_prompt_tokens,
            num_cached_tokens=self.times.num_cached_tokens,
            num_output_tokens=completion_tokens,
            num_reasoning_tokens=min(completion_tokens, self.times.num_reasoning_tokens),
        )
        return usage(running, reasoning=self.reasons)

    def role(self) -> Chunk:
        return self._chunk([self._choice(None, None, role=True)], 0)

    def content(self, text: str, tokens: int) -> Chunk:
        return self._chunk([self._choice(text, None)], tokens)

    def event(self, event: Delta | CallStart) -> Chunk:
        """The chunk of a reasoning or text piece, a tool call's start, or a piece of its arguments."""
        if isinstance(event, CallStart):
            function: FunctionDelta = {"name": event.call.tool.name, "arguments": ""}
            call: ToolCallDelta = {"index": 0, "id": event.call.call_id, "type": "function", "function": function}
            return self._delta({"tool_calls": [call]}, 0)
        if event.channel == "text" or not self.chat:
            return self.content(event.text, event.tokens)
        if event.channel == "reasoning":
            return self._delta({"reasoning_content": event.text}, event.tokens)
        return self._delta({"tool_calls": [{"index": 0, "function": {"arguments": event.text}}]}, event.tokens)

    def _delta(self, delta: ChatDelta, tokens: int) -> Chunk:
        return self._chunk([{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}], tokens)

    def finish(self, reason: str, tokens: int) -> Chunk:
        return self._chunk([self._choice(None, reason)], tokens, final=True)

    def usage_only(self) -> Chunk:
        chunk: Chunk = {**self.base, "choices": [], "usage": usage(self.times, reasoning=self.reasons)}
        chunk["goodput"] = chunk_goodput(self.times, time.perf_counter(), 0)
        return chunk


class FaultPacer:
    """The mid-stream faults and delays of one stream, whichever API writes it: the delay before each content
    event (so its server time includes it), and the fault struck after `after_chunks` content events."""

    def __init__(self, generation: Generation, faults: FaultConfig, fault: FaultKind) -> None:
        self.generation = generation
        self.faults = faults
        self.fault = fault
        self.content_events = 0

    async def before_content(self, tokens: int) -> None:
        first_delay = self.faults.first_token_delay_s if self.content_events == 0 else 0.0
        delay = first_delay + self.faults.token_delay_s * tokens
        if delay > 0:
            await asyncio.sleep(delay)

    async def after_content(self) -> bytes | Drop | None:
        self.content_events += 1
        return await self.strike()

    async def strike(self) -> bytes | Drop | None:
        """What to send now, if the fault is due: DROP (cut the connection), a malformed event, or nothing
        (after a stall)."""
        if self.content_events != self.faults.after_chunks:
            return None
        if self.fault == "disconnect":
            self.generation.cancel()
            return DROP
        if self.fault == "stall":
            await asyncio.sleep(self.faults.stall_s)
        elif self.fault == "malformed":
            return MALFORMED_EVENT
        return None


async def stream_events(
    generation: Generation, builder: ChunkBuilder, faults: FaultConfig, fault: FaultKind, plan: TurnPlan | None = None
) -> AsyncIterator[bytes | Drop]:
    """The SSE byte events of one chat or completions request (`DROP` to cut the connection as a fault)."""
    pacer = FaultPacer(generation, faults, fault)
    try:
        if builder.chat:
            yield sse_event(builder.role())
        struck = await pacer.strike()
        if struck is not None:
            yield struck
            if isinstance(struck, Drop):
                return
        async with contextlib.aclosing(turn_events(generation, plan or TurnPlan())) as events:
            async for event in events:
                if isinstance(event, Finish):
                    yield sse_event(builder.finish(chat_finish_reason(event), event.tokens))
                    continue
                if isinstance(event, Delta):
                    await pacer.before_content(event.tokens)
                yield sse_event(builder.event(event))
                struck = await pacer.after_content()
                if struck is not None:
                    yield struck
                    if isinstance(struck, Drop):
                        return
        if builder.request.include_usage:
            yield sse_event(builder.usage_only())
    except APIError as error:
        yield sse_event(error.body())
    yield DONE


def chat_finish_reason(finish: Finish) -> str:
    return "tool_calls" if finish.tool_call else finish.reason


class SSEResponse:
    """Streams events and watches for the client leaving, which cancels the stream (and so the request)."""

    def __init__(self, events: AsyncIterator[bytes | Drop]) -> None:
        self.events = events

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"cache-control", b"no-cache"),
            (b"x-accel-buffering", b"no"),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        stream = asyncio.ensure_future(self._stream(send))
        watch = asyncio.ensure_future(wait_for_disconnect(receive))
        try:
            await asyncio.wait({stream, watch}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (stream, watch):
                task.cancel()
            for task in (stream, watch):
                with contextlib.suppress(asyncio.CancelledError, OSError):
                    await task

    async def _stream(self, send: Send) -> None:
        events = self.events
        try:
            async for event in events:
                if isinstance(event, Drop):
                    return  # returning without the final message makes the server close the connection
                await send({"type": "http.response.body", "body": event, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                await aclose()


async def wait_for_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
