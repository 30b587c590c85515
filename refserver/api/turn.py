"""One answer as the APIs see it: reasoning, text or one tool call, then the finish; each API writes it in
its own events (streaming.py for chat, responses_stream.py, messages_stream.py).

A planned tool call takes the whole answer after the reasoning: its arguments are one JSON object with
one string field (`{"<key>": "<the generated text>"}`), streamed as the generated text comes, the text
escaped for JSON, so the concatenated fragments always parse. The call is closed when the output ends,
by eos or at max_tokens; an output that max_tokens ends before the call began (while reasoning) has none. Tokens are credited as the generation credits them (`Output.tokens`); tokens
of a reasoning piece without text move to the next event, so Σ tokens over the events is the output.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Literal

import orjson

from refserver.api.behaviour import ToolCallPlan, TurnPlan
from refserver.api.generate import Generation

Channel = Literal["reasoning", "text", "arguments"]


@dataclass(slots=True)
class Delta:
    channel: Channel
    text: str
    tokens: int


@dataclass(slots=True)
class CallStart:
    call: ToolCallPlan


@dataclass(slots=True)
class Finish:
    reason: str  # the engine's: stop | length (abort and errors never get here)
    tokens: int  # tokens credited to no text (eos)
    stop_string: str | None  # the stop string that ended the answer
    tool_call: bool


TurnEvent = Delta | CallStart | Finish


def json_fragment(text: str) -> str:
    """`text` as it reads inside a JSON string (quotes, backslashes, control characters escaped)."""
    return orjson.dumps(text).decode()[1:-1]


def arguments_open(call: ToolCallPlan) -> str:
    return "{" + orjson.dumps(call.tool.arguments_key).decode() + ': "'


ARGUMENTS_CLOSE = '"}'


async def turn_events(generation: Generation, plan: TurnPlan) -> AsyncGenerator[TurnEvent, None]:
    call = plan.tool_call
    started = False
    carry = 0
    async with contextlib.aclosing(generation.outputs()) as outputs:
        async for output in outputs:
            tokens = output.tokens + carry
            carry = 0
            if output.reasoning:
                if output.text:
                    yield Delta("reasoning", output.text, tokens)
                else:
                    carry = tokens
                continue
            if call is not None and not started and output.finish_reason == "length" and not output.text:
                call = None  # max tokens ended the output before the call began: no call
            if call is not None and not started:
                started = True
                yield CallStart(call)
                yield Delta("arguments", arguments_open(call), 0)
            if output.text:
                if call is None:
                    yield Delta("text", output.text, tokens)
                else:
                    yield Delta("arguments", json_fragment(output.text), tokens)
                tokens = 0
            if output.finish_reason is not None:
                if call is not None:
                    yield Delta("arguments", ARGUMENTS_CLOSE, 0)
                yield Finish(output.finish_reason, tokens, generation.text.stop_string, call is not None)


@dataclass(slots=True)
class Answer:
    """A whole answer, for the non-streaming responses."""

    reasoning: str = ""
    text: str = ""
    arguments: str = ""
    call: ToolCallPlan | None = None
    finish: Finish | None = None


async def collect(generation: Generation, plan: TurnPlan) -> Answer:
    answer = Answer(call=plan.tool_call)
    parts: dict[Channel, list[str]] = {"reasoning": [], "text": [], "arguments": []}
    async for event in turn_events(generation, plan):
        if isinstance(event, Delta):
            parts[event.channel].append(event.text)
        elif isinstance(event, Finish):
            answer.finish = event
    answer.reasoning = "".join(parts["reasoning"])
    answer.text = "".join(parts["text"])
    answer.arguments = "".join(parts["arguments"])
    return answer
