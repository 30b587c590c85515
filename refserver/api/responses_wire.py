"""The JSON the Responses API (`POST /v1/responses`) sends: the response object, its output items and
parts, and its streamed events (responses_stream.py builds them).

Types only: a TypedDict is a plain dict at run time. The order of the keys on the wire is the order the
builders insert them, not the order declared here. Lists this server always sends empty (`annotations`,
`logprobs`, a reasoning item's `summary`) are `list[Never]`.
"""

from __future__ import annotations

from typing import Literal, Never, TypedDict

import typing_extensions

from refserver.api.timing import Stamped


class ReasoningTextPart(TypedDict):
    type: Literal["reasoning_text"]
    text: str


class OutputTextPart(TypedDict):
    type: Literal["output_text"]
    text: str
    annotations: list[Never]
    logprobs: list[Never]


Part = ReasoningTextPart | OutputTextPart
Status = Literal["in_progress", "completed", "incomplete", "failed"]


class FunctionCallItem(TypedDict):
    id: str
    type: Literal["function_call"]
    status: Status
    call_id: str
    name: str
    arguments: str


class ReasoningItem(TypedDict):
    id: str
    type: Literal["reasoning"]
    summary: list[Never]
    content: list[Part]
    status: Status


class MessageItem(TypedDict):
    id: str
    type: Literal["message"]
    status: Status
    role: Literal["assistant"]
    content: list[Part]


OutputItem = FunctionCallItem | ReasoningItem | MessageItem


class InputTokensDetails(TypedDict):
    cached_tokens: int


class OutputTokensDetails(TypedDict):
    reasoning_tokens: int


class ResponsesUsage(TypedDict):
    input_tokens: int
    input_tokens_details: InputTokensDetails
    output_tokens: int
    output_tokens_details: OutputTokensDetails
    total_tokens: int


class ResponseError(TypedDict):
    code: str
    message: str


class IncompleteDetails(TypedDict):
    reason: Literal["max_output_tokens"]


class ResponseObject(Stamped):
    """The response: in events' `response`, and the non-streamed body (with the timing extension)."""

    id: str
    object: Literal["response"]
    created_at: int
    status: Status
    model: str
    output: list[OutputItem]
    max_output_tokens: int | None
    error: ResponseError | None
    incomplete_details: IncompleteDetails | None
    usage: ResponsesUsage | None


class ItemPlace(TypedDict):
    """Where an event's output item is: its id and its index in `output`."""

    item_id: str
    output_index: int


class Logprobs(typing_extensions.TypedDict, total=False, closed=True):
    """output_text's `.delta` and `.done` events carry `logprobs`, reasoning_text's do not."""

    logprobs: list[Never]


class EventFields(Stamped, total=False):
    """The fields of an event after `type` and `sequence_number` (then the timing extension), each present
    in the events named: `response` (response.created, .in_progress, .completed, .incomplete, .failed), `item` (output_item.added,
    .done), `part` (content_part.added, .done), `delta` (the .delta events), `text` (output_text.done,
    reasoning_text.done), `name` and `arguments` (function_call_arguments.done), `code`, `message`,
    `param` (error)."""

    response: ResponseObject
    output_index: int
    item: OutputItem
    item_id: str
    content_index: int
    part: Part
    delta: str
    text: str
    logprobs: list[Never]  # output_text's .delta and .done
    name: str
    arguments: str
    code: str | int
    message: str
    param: str | None


class ResponsesEvent(EventFields):
    type: str
    sequence_number: int
