"""The Responses API (`POST /v1/responses`, OpenAI's; served by vLLM and SGLang).

Body: the conversation as input items (`input_text` / `output_text` / `input_image` parts; a tool call
and its result as `function_call` / `function_call_output` items), `max_output_tokens`, `store: false`
(a load test leaves nothing stored on the server), tools in the flat Responses form, and vLLM's
`ignore_eos` / `min_tokens` extensions.

Stream: `response.output_text.delta` (and `refusal.delta`) is answer text; `reasoning_text.delta` and
`reasoning_summary_text.delta` are reasoning; an `output_item.added` of type `function_call` begins a
tool call, `function_call_arguments.delta` streams its arguments, `function_call_arguments.done` or the
item's `output_item.done` closes it. The terminal event (`response.completed`, `response.incomplete`,
`response.failed`) carries the usage (`input_tokens`, `input_tokens_details.cached_tokens`,
`output_tokens`, `output_tokens_details.reasoning_tokens`) and the status: `incomplete` is a finish
(`max_output_tokens` → `length`), `failed` or `cancelled` an error; `error` events are errors. A stream
without a terminal event was cut off.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

from loadgen.http.api.events import (
    END,
    ERROR,
    FINISH,
    NOTHING,
    REASONING,
    TEXT,
    TOOL_ARGS,
    TOOL_DONE,
    TOOL_START,
    USAGE,
    Decoded,
    EventAccumulator,
)
from loadgen.http.api.registry import Api, ProbeAnswer, ProbeBody
from loadgen.http.payload import StreamedBody, add_sampling, chat_messages, merge_body
from loadgen.http.usage import Usage
from loadgen.tools import ResponsesTool, responses_tool_choice, responses_tools, tools_for
from loadgen.types import ClientConfig, ContentPart, Message, ToolChoice, WorkItem

TERMINAL = ("response.completed", "response.incomplete", "response.failed")
_INCOMPLETE = {"max_output_tokens": "length"}


class InputText(TypedDict):
    type: Literal["input_text", "output_text"]
    text: str


class InputImage(TypedDict):
    type: Literal["input_image"]
    image_url: str | None  # None: the part named no image
    detail: NotRequired[str]


class InputMessage(TypedDict):
    role: str
    content: str | list[InputText | InputImage | ContentPart]


class FunctionCall(TypedDict):
    type: Literal["function_call"]
    call_id: str
    name: str
    arguments: str


class FunctionCallOutput(TypedDict):
    type: Literal["function_call_output"]
    call_id: str
    output: str


InputItem = InputMessage | FunctionCall | FunctionCallOutput


class ResponsesBody(StreamedBody):
    input: list[InputItem]
    store: bool  # false: a load test leaves nothing stored on the server
    max_output_tokens: NotRequired[int]
    tools: NotRequired[list[ResponsesTool]]
    tool_choice: NotRequired[ToolChoice]


class ResponsesProbe(ProbeBody):
    max_output_tokens: int
    store: bool
    input: list[InputItem]


def input_items(messages: list[Message]) -> list[InputItem]:
    """Chat messages → Responses input items."""
    items: list[InputItem] = []
    for message in messages:
        role = message.get("role", "user")
        if role == "tool":
            items.append({"type": "function_call_output", "call_id": message.get("tool_call_id", ""),
                          "output": _text(message.get("content"))})
            continue
        content = message.get("content")
        if isinstance(content, list):
            items.append({"role": role, "content": [_part(p, role) for p in content]})
        elif content is not None and content != "":
            items.append({"role": role, "content": content})
        for call in message.get("tool_calls") or ():
            function = call.get("function", {})
            items.append({"type": "function_call", "call_id": call.get("id", ""), "name": function.get("name", ""),
                          "arguments": function.get("arguments", "")})
    return items


def _part(part: ContentPart, role: str) -> InputText | InputImage | ContentPart:
    """A content part in the Responses form (anything that is not a part is passed along as it is)."""
    if not isinstance(part, dict):
        return part
    if part.get("type") == "text":
        return {"type": "output_text" if role == "assistant" else "input_text", "text": part.get("text", "")}
    if part.get("type") == "image_url":
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else image
        out: InputImage = {"type": "input_image", "image_url": url}
        if isinstance(image, dict) and "detail" in image:
            out["detail"] = image["detail"]
        return out
    return part


def _text(content: str | list[ContentPart] | None) -> str:
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def request_body(item: WorkItem, config: ClientConfig) -> dict[str, Any]:
    body: ResponsesBody = {"model": item.model or config.model, "input": input_items(chat_messages(item)),
                            "stream": True, "store": False}
    if item.max_tokens is not None:
        body["max_output_tokens"] = item.max_tokens
    add_sampling(body, item, config)
    tools, choice = tools_for(item, config)
    if tools:
        body["tools"] = responses_tools(tools)
        if choice is not None:
            body["tool_choice"] = responses_tool_choice(choice)
    return merge_body(body, config.extra_body)


class ResponsesDecoder:
    """One stream's decoder: it remembers whether a function call was made (the finish's words)."""

    __slots__ = ("called",)

    def __init__(self) -> None:
        self.called = False

    def __call__(self, obj: dict[str, Any]) -> Decoded:
        kind = obj.get("type")
        if kind == "response.output_text.delta" or kind == "response.refusal.delta":
            return ((TEXT, obj["delta"]),)
        if kind == "response.reasoning_text.delta" or kind == "response.reasoning_summary_text.delta":
            return ((REASONING, obj["delta"]),)
        if kind == "response.function_call_arguments.delta":
            return ((TOOL_ARGS, obj["delta"]),)
        if kind == "response.function_call_arguments.done":
            return ((TOOL_DONE, None),)
        if kind == "response.output_item.added" or kind == "response.output_item.done":
            item = obj.get("item")
            if not isinstance(item, dict) or item.get("type") != "function_call":
                return NOTHING
            if kind == "response.output_item.done":
                return ((TOOL_DONE, None),)
            self.called = True
            arguments = item.get("arguments")
            start = (TOOL_START, (item.get("call_id"), item.get("name")))
            return (start, (TOOL_ARGS, arguments)) if arguments else (start,)
        if kind in TERMINAL:
            return self._terminal(kind, obj.get("response"))
        if kind == "error":
            return ((ERROR, obj.get("error", obj)),)
        return NOTHING

    def _terminal(self, kind: str, response: Any) -> Decoded:
        response = response if isinstance(response, dict) else {}
        events: list[tuple[str, Any]] = []
        usage: ResponsesUsage | None = response.get("usage")
        if isinstance(usage, dict):
            events.append((USAGE, chat_usage(usage)))
        status = response.get("status")
        if kind == "response.failed" or status in ("failed", "cancelled"):
            error = response.get("error")
            events.append((ERROR, error if error else f"the response ended {status or 'failed'}"))
        elif kind == "response.incomplete" or status == "incomplete":
            details = response.get("incomplete_details")
            reason = details.get("reason") if isinstance(details, dict) else None
            events.append((FINISH, _INCOMPLETE.get(str(reason), reason or "incomplete")))
        else:
            events.append((FINISH, "tool_calls" if self.called else "stop"))
        events.append((END, None))
        return tuple(events)


class ResponsesUsage(TypedDict, total=False):
    """A terminal event's `response.usage`, as the server sent it (each value checked where it is read)."""

    input_tokens: object
    output_tokens: object
    input_tokens_details: object  # {"cached_tokens": int}
    output_tokens_details: object  # {"reasoning_tokens": int}


def chat_usage(usage: ResponsesUsage) -> Usage:
    """Responses usage → chat's names (the fields it has)."""
    out: Usage = {}
    if "input_tokens" in usage:
        out["prompt_tokens"] = usage["input_tokens"]
    if "output_tokens" in usage:
        out["completion_tokens"] = usage["output_tokens"]
    details = usage.get("input_tokens_details")
    if isinstance(details, dict) and "cached_tokens" in details:
        out["prompt_tokens_details"] = {"cached_tokens": details["cached_tokens"]}
    details = usage.get("output_tokens_details")
    if isinstance(details, dict) and "reasoning_tokens" in details:
        out["completion_tokens_details"] = {"reasoning_tokens": details["reasoning_tokens"]}
    return out


def decoder() -> EventAccumulator:
    return EventAccumulator(ResponsesDecoder(), "response.completed, response.incomplete or response.failed")


def probe_body(model: str, messages: list[Message]) -> ResponsesProbe:
    return {"model": model, "max_output_tokens": 1, "stream": False, "store": False, "input": input_items(messages)}


def prompt_tokens(answer: ProbeAnswer) -> int | None:
    usage = answer.get("usage")
    prompt = usage.get("input_tokens") if isinstance(usage, dict) else None
    return prompt if type(prompt) is int else None


API = Api("responses", "responses", request_body, decoder, probe_body, prompt_tokens)
