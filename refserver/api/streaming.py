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
from typing import Any

import orjson
from starlette.types import Receive, Scope, Send

from refserver.api.errors import APIError
from refserver.api.generate import Generation
from refserver.api.protocol import GenerationRequest
from refserver.api.timing import RequestTimes, chunk_goodput, final_goodput, llama_timings, usage
from refserver.faults import FaultConfig, FaultKind


class Drop:
    """Yielded by an event stream to close the connection without ending the response (a fault)."""


DROP = Drop()
DONE = b"data: [DONE]\n\n"
MALFORMED_EVENT = b'data: {"id": "broken", "choices": [\n\n'


# Characters that JSON leaves raw but `str.splitlines` (and so httpx's `iter_lines`) treats as line breaks;
# escaped so that no client splits an event in two. orjson already escapes everything below U+0020.
_LINE_BREAKS_IN_JSON = ((b"\xc2\x85", b"\\u0085"), (b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"))


def sse_event(payload: dict[str, Any]) -> bytes:
    data = orjson.dumps(payload)
    for raw, escaped in _LINE_BREAKS_IN_JSON:
        if raw in data:
            data = data.replace(raw, escaped)
    return b"data: " + data + b"\n\n"


class ChunkBuilder:
    """Builds the JSON objects of one request's stream."""

    def __init__(self, request: GenerationRequest, *, request_id: str, model: str, times: RequestTimes) -> None:
        self.request = request
        self.chat = request.kind == "chat"
        self.times = times
        self.sent_tokens = 0
        self.base: dict[str, Any] = {
            "id": request_id,
            "object": "chat.completion.chunk" if self.chat else "text_completion",
            "created": int(time.time()),
            "model": model,
        }

    def _choice(self, text: str | None, finish_reason: str | None, *, role: bool = False) -> dict[str, Any]:
        if self.chat:
            delta: dict[str, Any] = {"role": "assistant", "content": ""} if role else {}
            if text:
                delta["content"] = text
            return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return {"index": 0, "text": text or "", "logprobs": None, "finish_reason": finish_reason}

    def _chunk(self, choices: list[dict[str, Any]], tokens: int, *, final: bool = False) -> dict[str, Any]:
        self.sent_tokens += tokens
        now = time.perf_counter()
        chunk: dict[str, Any] = {**self.base, "choices": choices}
        if final:
            chunk["goodput"] = final_goodput(self.times, now, tokens)
            chunk["timings"] = llama_timings(self.times)
        else:
            chunk["goodput"] = chunk_goodput(self.times, now, tokens)
        if self.request.include_usage and self.request.continuous_usage_stats:
            chunk["usage"] = self._usage(completion_tokens=self.sent_tokens)
        return chunk

    def _usage(self, *, completion_tokens: int) -> dict[str, Any]:
        running = RequestTimes(
            arrival_s=self.times.arrival_s,
            num_prompt_tokens=self.times.num_prompt_tokens,
            num_cached_tokens=self.times.num_cached_tokens,
            num_output_tokens=completion_tokens,
        )
        return usage(running)

    def role(self) -> dict[str, Any]:
        return self._chunk([self._choice(None, None, role=True)], 0)

    def content(self, text: str, tokens: int) -> dict[str, Any]:
        return self._chunk([self._choice(text, None)], tokens)

    def finish(self, reason: str, tokens: int) -> dict[str, Any]:
        return self._chunk([self._choice(None, reason)], tokens, final=True)

    def usage_only(self) -> dict[str, Any]:
        chunk: dict[str, Any] = {**self.base, "choices": [], "usage": usage(self.times)}
        chunk["goodput"] = chunk_goodput(self.times, time.perf_counter(), 0)
        return chunk


async def stream_events(
    generation: Generation, builder: ChunkBuilder, faults: FaultConfig, fault: FaultKind
) -> AsyncIterator[bytes | Drop]:
    """The SSE byte events of one request (`DROP` to cut the connection as a fault)."""
    content_chunks = 0

    async def strike() -> AsyncIterator[bytes | Drop]:
        if content_chunks != faults.after_chunks:
            return
        if fault == "disconnect":
            generation.cancel()
            yield DROP
        elif fault == "stall":
            await asyncio.sleep(faults.stall_s)
        elif fault == "malformed":
            yield MALFORMED_EVENT

    try:
        if builder.chat:
            yield sse_event(builder.role())
        async for item in strike():
            yield item
            if isinstance(item, Drop):
                return
        async with contextlib.aclosing(generation.outputs()) as outputs:
            async for output in outputs:
                tokens = output.tokens
                if output.text:
                    first_delay = faults.first_token_delay_s if content_chunks == 0 else 0.0
                    delay = first_delay + faults.token_delay_s * output.tokens
                    if delay > 0:
                        await asyncio.sleep(delay)
                    yield sse_event(builder.content(output.text, output.tokens))
                    content_chunks += 1
                    tokens = 0
                    async for item in strike():
                        yield item
                        if isinstance(item, Drop):
                            return
                if output.finish_reason is not None:
                    yield sse_event(builder.finish(output.finish_reason, tokens))
        if builder.request.include_usage:
            yield sse_event(builder.usage_only())
    except APIError as error:
        yield sse_event(error.body())
    yield DONE


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
