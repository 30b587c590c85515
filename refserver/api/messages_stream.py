"""The Messages API's answer: its streamed events and its non-streamed message, and its error shape.

Stream: `message_start` (usage `input_tokens`, `cache_read_input_tokens`, `cache_creation_input_tokens`,
`output_tokens` 0; sent with the first output, as vLLM does, when the prompt's cached tokens are known),
one `ping`, then per content block `content_block_start`, its deltas, `content_block_stop`: a `thinking`
block (`thinking_delta`s, then one `signature_delta`), a `text` block (`text_delta`), or a `tool_use` block
(`input_json_delta`); then `message_delta` (`stop_reason` end_turn, max_tokens, stop_sequence or
tool_use; usage with `output_tokens`) and `message_stop`. A failure after the stream started is an `error`
event. Every event is `event: TYPE` + `data: {JSON}`, and carries the server timing extension (`goodput:
{t, n}`; `message_delta` the phase times and `timings`). `input_tokens` counts the prompt tokens not read
from the prefix cache, so the three input counts add up to the prompt.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import AsyncIterator
from typing import Unpack

import orjson
from starlette.responses import JSONResponse

from refserver.api.behaviour import ToolCallPlan, TurnPlan
from refserver.api.errors import APIError
from refserver.api.faults import FaultConfig, FaultKind
from refserver.api.generate import Generation
from refserver.api.messages_wire import (
    AnthropicError,
    ContentBlock,
    EventFields,
    InputJsonDelta,
    MessageHead,
    MessageObject,
    MessagesEvent,
    MessagesUsage,
    SignatureDelta,
    StopDelta,
    TextDelta,
    ThinkingDelta,
    ToolUseBlock,
)
from refserver.api.streaming import Drop, FaultPacer, named_event
from refserver.api.timing import RequestTimes, chunk_goodput, final_goodput, llama_timings
from refserver.api.turn import Answer, CallStart, Delta, Finish, turn_events

_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 408: "timeout_error", 413: "request_too_large", 429: "rate_limit_error",
                503: "overloaded_error", 529: "overloaded_error"}  # fmt: skip


def anthropic_error(error: APIError) -> AnthropicError:
    kind = _ERROR_TYPES.get(error.status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": error.message}}


def messages_error_response(error: APIError) -> JSONResponse:
    headers = {"connection": "close"} if error.status == 413 else None
    return JSONResponse(anthropic_error(error), status_code=error.status, headers=headers)


def messages_usage(times: RequestTimes, *, output_tokens: int) -> MessagesUsage:
    return {
        "input_tokens": times.num_prompt_tokens - times.num_cached_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": times.num_cached_tokens,
        "output_tokens": output_tokens,
    }


def stop_reason(finish: Finish) -> str:
    if finish.tool_call:
        return "tool_use"
    if finish.reason == "length":
        return "max_tokens"
    return "stop_sequence" if finish.stop_string is not None else "end_turn"


def signature(thinking: str) -> str:
    """The thinking block's signature: a digest of its text (a client only has to pass it back)."""
    return hashlib.sha256(thinking.encode()).hexdigest()


def _tool_block(call: ToolCallPlan) -> ToolUseBlock:
    return {"type": "tool_use", "id": "toolu_" + call.call_id.removeprefix("call_"), "name": call.tool.name,
            "input": {}}


class MessageBuilder:
    def __init__(self, *, request_id: str, model: str, times: RequestTimes) -> None:
        self.times = times
        self.base: MessageHead = {"id": request_id, "type": "message", "role": "assistant", "content": [],
                                     "model": model, "stop_reason": None, "stop_sequence": None}

    def start(self) -> MessageObject:
        return {**self.base, "usage": messages_usage(self.times, output_tokens=0)}

    def complete_body(self, answer: Answer) -> MessageObject:
        assert answer.finish is not None
        content: list[ContentBlock] = []
        if answer.reasoning:
            content.append({"type": "thinking", "thinking": answer.reasoning, "signature": signature(answer.reasoning)})
        if answer.call is not None:
            content.append({**_tool_block(answer.call), "input": orjson.loads(answer.arguments)})
        elif answer.text:
            content.append({"type": "text", "text": answer.text})
        body: MessageObject = {**self.base, "content": content, "stop_reason": stop_reason(answer.finish),
                "stop_sequence": answer.finish.stop_string,
                "usage": messages_usage(self.times, output_tokens=self.times.num_output_tokens)}
        body["goodput"] = final_goodput(self.times, time.perf_counter(), self.times.num_output_tokens)
        body["timings"] = llama_timings(self.times)
        return body


class MessagesStream:
    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.started = False
        self.index = -1
        self.channel = ""
        self.thinking: list[str] = []

    def event(self, kind: str, tokens: int = 0, *, final: bool = False, **fields: Unpack[EventFields]) -> bytes:
        payload: MessagesEvent = {"type": kind, **fields}
        now = time.perf_counter()
        times = self.builder.times
        payload["goodput"] = final_goodput(times, now, tokens) if final else chunk_goodput(times, now, tokens)
        if final:
            payload["timings"] = llama_timings(times)
        return named_event(kind, payload)

    def start(self) -> list[bytes]:
        if self.started:
            return []
        self.started = True
        return [self.event("message_start", message=self.builder.start()), self.event("ping")]

    def open(self, channel: str, call: CallStart | None = None) -> list[bytes]:
        events = self.close()
        self.index += 1
        self.channel = channel
        if channel == "reasoning":
            block: ContentBlock = {"type": "thinking", "thinking": "", "signature": ""}
            self.thinking = []
        elif channel == "text":
            block = {"type": "text", "text": ""}
        else:
            assert call is not None
            block = _tool_block(call.call)
        return [*events, self.event("content_block_start", index=self.index, content_block=block)]

    def delta(self, event: Delta) -> bytes:
        delta: ThinkingDelta | TextDelta | InputJsonDelta
        if self.channel == "reasoning":
            self.thinking.append(event.text)
            delta = {"type": "thinking_delta", "thinking": event.text}
        elif self.channel == "text":
            delta = {"type": "text_delta", "text": event.text}
        else:
            delta = {"type": "input_json_delta", "partial_json": event.text}
        return self.event("content_block_delta", event.tokens, index=self.index, delta=delta)

    def close(self) -> list[bytes]:
        if not self.channel:
            return []
        events = []
        if self.channel == "reasoning":
            sig: SignatureDelta = {"type": "signature_delta", "signature": signature("".join(self.thinking))}
            events.append(self.event("content_block_delta", index=self.index, delta=sig))
        events.append(self.event("content_block_stop", index=self.index))
        self.channel = ""
        return events

    def finish(self, finish: Finish) -> list[bytes]:
        delta: StopDelta = {"stop_reason": stop_reason(finish), "stop_sequence": finish.stop_string}
        usage = messages_usage(self.builder.times, output_tokens=self.builder.times.num_output_tokens)
        return [*self.close(), self.event("message_delta", finish.tokens, final=True, delta=delta,
                                                         usage=usage), self.event("message_stop")]


async def messages_events(
    generation: Generation, plan: TurnPlan, builder: MessageBuilder, faults: FaultConfig, fault: FaultKind
) -> AsyncIterator[bytes | Drop]:
    stream = MessagesStream(builder)
    pacer = FaultPacer(generation, faults, fault)
    try:
        async with contextlib.aclosing(turn_events(generation, plan)) as events:
            async for event in events:
                if not stream.started:
                    for data in stream.start():
                        yield data
                    struck = await pacer.strike()
                    if struck is not None:
                        yield struck
                        if isinstance(struck, Drop):
                            return
                if isinstance(event, Finish):
                    for data in stream.finish(event):
                        yield data
                    continue
                if isinstance(event, CallStart):
                    for data in stream.open("arguments", event):
                        yield data
                    continue
                if event.channel != stream.channel:
                    for data in stream.open(event.channel):
                        yield data
                await pacer.before_content(event.tokens)
                yield stream.delta(event)
                struck = await pacer.after_content()
                if struck is not None:
                    yield struck
                    if isinstance(struck, Drop):
                        return
    except APIError as error:
        payload: MessagesEvent = {**anthropic_error(error), "goodput": chunk_goodput(builder.times, time.perf_counter(), 0)}
        yield named_event("error", payload)
