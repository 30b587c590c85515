"""The JSON bodies `/v1/chat/completions`, `/v1/completions` and `/v1/models` send, as the server builds them.

Types only (a TypedDict is a plain dict at run time, so the per-token path pays nothing for them). The
order of the keys on the wire is the order the builders insert them (streaming.py, app.py), not the order
declared here. `logprobs` is always null: this server computes none.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

import typing_extensions

from refserver.api.timing import FinalGoodput, LlamaTimings, Stamped, Usage
from refserver.engine import SimDescription


class FunctionDelta(TypedDict, total=False):
    name: str  # only in a tool call's first chunk
    arguments: str


class ToolCallDelta(TypedDict):
    index: int
    id: NotRequired[str]  # only in a tool call's first chunk
    type: NotRequired[Literal["function"]]
    function: FunctionDelta


class ChatDelta(TypedDict, total=False):
    """A chat chunk's `delta`: empty in the finish chunk."""

    role: Literal["assistant"]
    content: str
    reasoning_content: str
    tool_calls: list[ToolCallDelta]


class ChatChunkChoice(TypedDict):
    index: int
    delta: ChatDelta
    logprobs: None
    finish_reason: str | None


class TextChunkChoice(TypedDict):
    index: int
    text: str
    logprobs: None
    finish_reason: str | None


ChunkChoice = ChatChunkChoice | TextChunkChoice


Kind = Literal["chat.completion.chunk", "text_completion", "chat.completion"]


class ChunkHead(typing_extensions.TypedDict, closed=True):
    """The fields every chunk of one stream starts with (and the non-streamed body); closed (no other key),
    so that a body made of it and more keys is checked."""

    id: str
    object: Kind
    created: int
    model: str


class Chunk(Stamped):
    """One streamed chunk; `choices` is empty in the usage-only chunk."""

    id: str
    object: Kind
    created: int
    model: str
    choices: list[ChunkChoice]
    usage: NotRequired[Usage]


class FunctionCall(TypedDict):
    name: str
    arguments: str


class ToolCall(TypedDict):
    id: str
    type: Literal["function"]
    function: FunctionCall


class ChatMessage(TypedDict):
    role: Literal["assistant"]
    content: str | None  # null when the answer is a tool call
    reasoning_content: NotRequired[str]
    tool_calls: NotRequired[list[ToolCall]]


class ChatChoice(TypedDict):
    index: int
    message: ChatMessage
    logprobs: None
    finish_reason: str


class TextChoice(TypedDict):
    index: int
    text: str
    logprobs: None
    finish_reason: str


class CompletionBody(TypedDict):
    """A non-streamed chat or completions answer, with the timing extension at its top level."""

    id: str
    object: Kind
    created: int
    model: str
    choices: list[ChatChoice | TextChoice]
    usage: Usage
    goodput: FinalGoodput
    timings: LlamaTimings


class ModelCard(TypedDict):
    id: str
    object: Literal["model"]
    created: int
    owned_by: str
    max_model_len: int
    engine: NotRequired[Literal["sim"]]
    sim: NotRequired[SimDescription]
