"""The JSON Anthropic's Messages API (`POST /v1/messages`) sends: the message, its content blocks, its
streamed events and its error body (messages_stream.py builds them).

Types only: a TypedDict is a plain dict at run time. The order of the keys on the wire is the order the
builders insert them, not the order declared here.
"""

from __future__ import annotations

from typing import Literal, TypedDict

import typing_extensions

from refserver.api.timing import Stamped


class ThinkingBlock(TypedDict):
    type: Literal["thinking"]
    thinking: str
    signature: str


class TextBlock(TypedDict):
    type: Literal["text"]
    text: str


class ToolUseBlock(TypedDict):
    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, str]  # the simulated call's one string argument (refserver.api.turn); {} at its start


ContentBlock = ThinkingBlock | TextBlock | ToolUseBlock


class ThinkingDelta(TypedDict):
    type: Literal["thinking_delta"]
    thinking: str


class SignatureDelta(TypedDict):
    type: Literal["signature_delta"]
    signature: str


class TextDelta(TypedDict):
    type: Literal["text_delta"]
    text: str


class InputJsonDelta(TypedDict):
    type: Literal["input_json_delta"]
    partial_json: str


class StopDelta(TypedDict):
    """`message_delta`'s `delta`."""

    stop_reason: str
    stop_sequence: str | None


class MessagesUsage(TypedDict):
    input_tokens: int  # the prompt tokens not read from the prefix cache
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    output_tokens: int


class MessageHead(typing_extensions.TypedDict, closed=True):
    """The message's fields before `usage`; closed (no other key), so that a body made of it is checked."""

    id: str
    type: Literal["message"]
    role: Literal["assistant"]
    content: list[ContentBlock]
    model: str
    stop_reason: str | None
    stop_sequence: str | None


class MessageObject(Stamped):
    """`message_start`'s message, and the non-streamed body (with the timing extension)."""

    id: str
    type: Literal["message"]
    role: Literal["assistant"]
    content: list[ContentBlock]
    model: str
    stop_reason: str | None
    stop_sequence: str | None
    usage: MessagesUsage


class ErrorDetail(TypedDict):
    type: str
    message: str


class AnthropicError(typing_extensions.TypedDict, closed=True):
    """Anthropic's error body, also the `error` event's data (with the timing extension)."""

    type: Literal["error"]
    error: ErrorDetail


class EventFields(Stamped, total=False):
    """The fields of an event after `type` (then the timing extension), each present in the events named:
    `message` (message_start), `index` (the content_block_ events), `content_block` (content_block_start),
    `delta` (content_block_delta, message_delta), `usage` (message_delta), `error` (error)."""

    message: MessageObject
    index: int
    content_block: ContentBlock
    delta: ThinkingDelta | SignatureDelta | TextDelta | InputJsonDelta | StopDelta
    usage: MessagesUsage
    error: ErrorDetail


class MessagesEvent(EventFields):
    type: str
