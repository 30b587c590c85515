"""The Responses API's answer: its streamed events and its non-streamed response object.

Stream: `response.created`, `response.in_progress`; per output item `response.output_item.added`, its
deltas, `response.output_item.done`: a `reasoning` item (`response.content_part.added` of a
`reasoning_text` part, `response.reasoning_text.delta`/`.done`, `response.content_part.done`), a
`message` item (the same with an `output_text` part and `response.output_text.delta`/`.done`), or a
`function_call` item (`response.function_call_arguments.delta`/`.done`); then `response.completed`, or
`response.incomplete` (`incomplete_details.reason` `max_output_tokens`) when max_output_tokens cut the
answer. A failure after the stream started: an `error` event, then `response.failed`. Every event is
`event: TYPE` + `data: {JSON}` with `type` and a `sequence_number` from 0, and carries the server timing
extension (`goodput: {t, n}`; the terminal event the phase times and `timings`).
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from typing import Unpack

from refserver.api.behaviour import TurnPlan
from refserver.api.errors import APIError
from refserver.api.faults import FaultConfig, FaultKind
from refserver.api.generate import Generation
from refserver.api.responses_wire import (
    EventFields,
    ItemPlace,
    Logprobs,
    OutputItem,
    Part,
    ResponseObject,
    ResponsesEvent,
    ResponsesUsage,
)
from refserver.api.streaming import Drop, FaultPacer, named_event
from refserver.api.timing import RequestTimes, chunk_goodput, final_goodput, llama_timings
from refserver.api.turn import Answer, CallStart, Delta, Finish, turn_events

_PART = {"reasoning": "reasoning_text", "text": "output_text"}


def responses_usage(times: RequestTimes) -> ResponsesUsage:
    return {
        "input_tokens": times.num_prompt_tokens,
        "input_tokens_details": {"cached_tokens": times.num_cached_tokens},
        "output_tokens": times.num_output_tokens,
        "output_tokens_details": {"reasoning_tokens": times.num_reasoning_tokens},
        "total_tokens": times.num_prompt_tokens + times.num_output_tokens,
    }


def _part(channel: str, text: str) -> Part:
    if channel == "reasoning":
        return {"type": "reasoning_text", "text": text}
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


class ResponseBuilder:
    """The response object and its output items, as the stream goes or all at once."""

    def __init__(self, *, request_id: str, model: str, max_output_tokens: int | None, times: RequestTimes) -> None:
        self.times = times
        self.base: ResponseObject = {
            "id": request_id,
            "object": "response",
            "created_at": int(time.time()),
            "status": "in_progress",
            "model": model,
            "output": [],
            "max_output_tokens": max_output_tokens,
            "error": None,
            "incomplete_details": None,
            "usage": None,
        }
        self.output: list[OutputItem] = []

    def open_item(self, kind: str, call: CallStart | None = None) -> OutputItem:
        item: OutputItem
        if kind == "function_call":
            assert call is not None
            item = {"id": f"fc_{uuid.uuid4().hex}", "type": "function_call", "status": "in_progress",
                    "call_id": call.call.call_id, "name": call.call.tool.name, "arguments": ""}
        elif kind == "reasoning":
            item = {"id": f"rs_{uuid.uuid4().hex}", "type": "reasoning", "summary": [], "content": [],
                    "status": "in_progress"}
        else:
            item = {"id": f"msg_{uuid.uuid4().hex}", "type": "message", "status": "in_progress",
                    "role": "assistant", "content": []}
        self.output.append(item)
        return item

    def response(self, finish: Finish | None) -> ResponseObject:
        """The response object: in progress (no finish yet), completed, or incomplete at max_output_tokens."""
        body = self.base.copy()
        if finish is None:
            return body
        cut = finish.reason == "length" and not finish.tool_call
        body["status"] = "incomplete" if cut else "completed"
        body["output"] = self.output
        body["usage"] = responses_usage(self.times)
        if cut:
            body["incomplete_details"] = {"reason": "max_output_tokens"}
        return body

    def complete_body(self, answer: Answer) -> ResponseObject:
        """The non-streaming response, with the timing extension at its top level."""
        assert answer.finish is not None
        if answer.reasoning:
            self._closed(self.open_item("reasoning"), "reasoning", answer.reasoning)
        if answer.call is not None:
            item = self.open_item("function_call", CallStart(answer.call))
            _complete(item, answer.arguments)
        elif answer.text or answer.finish.reason == "stop":
            self._closed(self.open_item("message"), "text", answer.text)
        body = self.response(answer.finish)
        body["goodput"] = final_goodput(self.times, time.perf_counter(), self.times.num_output_tokens)
        body["timings"] = llama_timings(self.times)
        return body

    @staticmethod
    def _closed(item: OutputItem, channel: str, text: str) -> None:
        _complete(item, _part(channel, text))


def _complete(item: OutputItem, answer: str | Part) -> None:
    """Completes an output item: a function call with its arguments, another item with its one part."""
    if item["type"] == "function_call":
        assert isinstance(answer, str)
        item["arguments"] = answer
    else:
        assert not isinstance(answer, str)
        item["content"] = [answer]
    item["status"] = "completed"


class ResponsesStream:
    """Writes one streamed response: the events in order, numbered, each stamped as it is written."""

    def __init__(self, builder: ResponseBuilder) -> None:
        self.builder = builder
        self.sequence = 0
        self.item: OutputItem | None = None
        self.channel = ""
        self.text: list[str] = []

    def event(self, kind: str, tokens: int = 0, *, final: bool = False, **fields: Unpack[EventFields]) -> bytes:
        payload: ResponsesEvent = {"type": kind, "sequence_number": self.sequence, **fields}
        self.sequence += 1
        now = time.perf_counter()
        times = self.builder.times
        payload["goodput"] = final_goodput(times, now, tokens) if final else chunk_goodput(times, now, tokens)
        if final:
            payload["timings"] = llama_timings(times)
        return named_event(kind, payload)

    def _where(self) -> ItemPlace:
        assert self.item is not None
        return {"item_id": self.item["id"], "output_index": len(self.builder.output) - 1}

    def open(self, channel: str, call: CallStart | None = None) -> list[bytes]:
        kind = {"reasoning": "reasoning", "text": "message", "arguments": "function_call"}[channel]
        self.item, self.channel, self.text = self.builder.open_item(kind, call), channel, []
        events = [self.event("response.output_item.added", output_index=len(self.builder.output) - 1,
                             item=self.item.copy())]
        if channel != "arguments":
            events.append(self.event("response.content_part.added", **self._where(), content_index=0,
                                     part=_part(channel, "")))
        return events

    def delta(self, event: Delta) -> bytes:
        self.text.append(event.text)
        if self.channel == "arguments":
            return self.event("response.function_call_arguments.delta", event.tokens, **self._where(),
                              delta=event.text)
        kind = f"response.{_PART[self.channel]}.delta"
        extra: Logprobs = {"logprobs": []} if self.channel == "text" else {}
        return self.event(kind, event.tokens, **self._where(), content_index=0, delta=event.text, **extra)

    def close(self) -> list[bytes]:
        if self.item is None:
            return []
        text, where = "".join(self.text), self._where()
        if self.item["type"] == "function_call":
            _complete(self.item, text)
            events = [self.event("response.function_call_arguments.done", **where, name=self.item["name"],
                                 arguments=text)]
        else:
            part = _part(self.channel, text)
            _complete(self.item, part)
            extra: Logprobs = {"logprobs": []} if self.channel == "text" else {}
            events = [self.event(f"response.{_PART[self.channel]}.done", **where, content_index=0, text=text, **extra),
                      self.event("response.content_part.done", **where, content_index=0, part=part)]
        events.append(self.event("response.output_item.done", output_index=where["output_index"],
                                 item=self.item.copy()))
        self.item = None
        return events

    def finish(self, finish: Finish) -> list[bytes]:
        events = self.close()
        answered = any(item["type"] != "reasoning" for item in self.builder.output)
        if not answered and finish.reason == "stop":
            events += self.open("text") + self.close()  # an empty answer is still a message
        body = self.builder.response(finish)
        kind = "response.incomplete" if body["status"] == "incomplete" else "response.completed"
        return [*events, self.event(kind, finish.tokens, final=True, response=body)]

    def failed(self, error: APIError) -> list[bytes]:
        code = error.code if error.code is not None else error.type
        body = self.builder.response(None)  # a copy: its keys keep their places
        body["status"] = "failed"
        body["output"] = self.builder.output
        body["error"] = {"code": str(code), "message": error.message}
        return [self.event("error", code=code, message=error.message, param=error.param),
                self.event("response.failed", final=True, response=body)]


async def responses_events(
    generation: Generation, plan: TurnPlan, builder: ResponseBuilder, faults: FaultConfig, fault: FaultKind
) -> AsyncIterator[bytes | Drop]:
    stream = ResponsesStream(builder)
    pacer = FaultPacer(generation, faults, fault)
    try:
        yield stream.event("response.created", response=builder.response(None))
        yield stream.event("response.in_progress", response=builder.response(None))
        struck = await pacer.strike()
        if struck is not None:
            yield struck
            if isinstance(struck, Drop):
                return
        async with contextlib.aclosing(turn_events(generation, plan)) as events:
            async for event in events:
                if isinstance(event, Finish):
                    for data in stream.finish(event):
                        yield data
                    continue
                if isinstance(event, CallStart):
                    for data in stream.close() + stream.open("arguments", event):
                        yield data
                    continue
                if event.channel != stream.channel or stream.item is None:
                    for data in stream.close() + stream.open(event.channel):
                        yield data
                await pacer.before_content(event.tokens)
                yield stream.delta(event)
                struck = await pacer.after_content()
                if struck is not None:
                    yield struck
                    if isinstance(struck, Drop):
                        return
    except APIError as error:
        for data in stream.failed(error):
            yield data
