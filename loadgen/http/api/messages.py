"""Anthropic's Messages API (`POST /v1/messages`; served by vLLM, used by coding agents).

Body: `system` apart from the turns, content blocks (`text`, `image` with a base64 source for a data URL
and a url source otherwise, `tool_use` / `tool_result` for a tool call and its result), the required
`max_tokens` (DEFAULT_MAX_TOKENS when the work item has none), tools as `{name, description,
input_schema}`, and vLLM's `ignore_eos` / `min_tokens` extensions. Headers: `anthropic-version`, and the
key as `x-api-key` and as a bearer token (vLLM checks only the latter); never written anywhere, like any
secret header.

Stream: `message_start` carries the input usage (`input_tokens`, `cache_read_input_tokens`,
`cache_creation_input_tokens`: the prompt is their sum, the cached part the cache reads);
`content_block_start/delta/stop` carry `text_delta` (answer), `thinking_delta` (reasoning),
`signature_delta` (nothing: no token), and for a `tool_use` block `input_json_delta` (its arguments,
complete at the block's stop); `message_delta` the `stop_reason` and the output usage; `message_stop`
ends the stream (without it the stream was cut off); `ping` is nothing; `error` an error.
"""

from __future__ import annotations

import json
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
from loadgen.tools import MessagesChoice, MessagesTool, messages_tool_choice, messages_tools, tools_for
from loadgen.types import ClientConfig, ContentPart, Message, ToolCall, WorkItem

VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096  # max_tokens is required; a work item without one asks for this many
STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls"}
_INPUTS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


class Base64Source(TypedDict):
    type: Literal["base64"]
    media_type: str
    data: str


class URLSource(TypedDict):
    type: Literal["url"]
    url: str


class ImageBlock(TypedDict):
    type: Literal["image"]
    source: Base64Source | URLSource


class ToolUseBlock(TypedDict):
    type: Literal["tool_use"]
    id: str
    name: str
    input: object  # the call's arguments as JSON ({} when they are not JSON)


class ToolResultBlock(TypedDict):
    type: Literal["tool_result"]
    tool_use_id: str
    content: str


Block = ContentPart | ImageBlock | ToolUseBlock | ToolResultBlock  # a text part is the same block in both APIs


class AnthropicMessage(TypedDict):
    role: Literal["user", "assistant"]
    content: str | list[Block] | None


class MessagesBody(StreamedBody):
    messages: list[AnthropicMessage]
    max_tokens: int  # required by the API
    system: NotRequired[str]
    tools: NotRequired[list[MessagesTool]]
    tool_choice: NotRequired[MessagesChoice]


class MessagesProbe(ProbeBody):
    max_tokens: int
    messages: list[AnthropicMessage]
    system: NotRequired[str]


def convert(messages: list[Message]) -> tuple[str | None, list[AnthropicMessage]]:
    """Chat messages → (the system text or None, Anthropic messages)."""
    system: list[str] = []
    out: list[AnthropicMessage] = []
    for message in messages:
        role, content = message.get("role", "user"), message.get("content")
        if role in ("system", "developer"):
            system.append(_text(content))
        elif role == "tool":
            out.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": message.get("tool_call_id", ""),
                                                     "content": _text(content)}]})
        else:
            blocks: str | list[Block] | None = [_block(p) for p in content] if isinstance(content, list) else content
            calls = message.get("tool_calls")
            if calls:
                blocks = ([{"type": "text", "text": blocks}] if blocks else []) if isinstance(blocks, str | None) else blocks
                blocks += [_tool_use(call) for call in calls]
            out.append({"role": "assistant" if role == "assistant" else "user", "content": blocks})
    return ("\n\n".join(system) if system else None), out


def _block(part: ContentPart) -> ContentPart | ImageBlock:
    """A content part as a block (anything that is not an image part is passed along as it is)."""
    if not isinstance(part, dict) or part.get("type") != "image_url":
        return part  # {"type": "text", "text"} is the same block in both APIs
    image = part.get("image_url")
    url = str(image.get("url") if isinstance(image, dict) else image)
    if url.startswith("data:") and ";base64," in url:
        media_type, data = url[5:].split(";base64,", 1)
        return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def _tool_use(call: ToolCall) -> ToolUseBlock:
    function = call.get("function", {})
    try:
        arguments = json.loads(function.get("arguments") or "{}")
    except json.JSONDecodeError:
        arguments = {}
    return {"type": "tool_use", "id": call.get("id", ""), "name": function.get("name", ""), "input": arguments}


def _text(content: str | list[ContentPart] | None) -> str:
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def request_body(item: WorkItem, config: ClientConfig) -> dict[str, Any]:
    system, messages = convert(chat_messages(item))
    body: MessagesBody = {"model": item.model or config.model, "messages": messages,
                            "max_tokens": item.max_tokens if item.max_tokens is not None else DEFAULT_MAX_TOKENS,
                            "stream": True}
    if system is not None:
        body["system"] = system
    add_sampling(body, item, config)
    tools, choice = tools_for(item, config)
    if tools:
        body["tools"] = messages_tools(tools)
        if choice is not None:
            body["tool_choice"] = messages_tool_choice(choice)
    return merge_body(body, config.extra_body)


class MessagesDecoder:
    """One stream's decoder: the type of each open content block, and the input counts so far."""

    __slots__ = ("blocks", "inputs")

    def __init__(self) -> None:
        self.blocks: dict[Any, str] = {}
        self.inputs: dict[str, int] = {}

    def __call__(self, obj: dict[str, Any]) -> Decoded:
        kind = obj.get("type")
        if kind == "content_block_delta":
            delta = obj["delta"]
            what = delta.get("type")
            if what == "text_delta":
                return ((TEXT, delta["text"]),)
            if what == "thinking_delta":
                return ((REASONING, delta["thinking"]),)
            if what == "input_json_delta":
                return ((TOOL_ARGS, delta["partial_json"]),)
            return NOTHING  # signature_delta, citations: no output token
        if kind == "content_block_start":
            block = obj["content_block"]
            what = block.get("type")
            self.blocks[obj.get("index")] = what
            if what in ("tool_use", "server_tool_use"):
                return ((TOOL_START, (block.get("id"), block.get("name"))),)
            if what == "text" and block.get("text"):
                return ((TEXT, block["text"]),)
            if what == "thinking" and block.get("thinking"):
                return ((REASONING, block["thinking"]),)
            return NOTHING
        if kind == "content_block_stop":
            return ((TOOL_DONE, None),) if self.blocks.get(obj.get("index")) in ("tool_use", "server_tool_use") else NOTHING
        if kind == "message_start":
            return self._usage(obj["message"].get("usage"), output=False)
        if kind == "message_delta":
            reason = obj.get("delta", {}).get("stop_reason")
            events = self._usage(obj.get("usage"), output=True)
            return (*events, (FINISH, STOP_REASONS.get(reason, reason))) if reason is not None else events
        if kind == "message_stop":
            return ((END, None),)
        if kind == "error":
            return ((ERROR, obj.get("error", obj)),)
        return NOTHING  # ping, and anything newer

    def _usage(self, usage: Any, *, output: bool) -> Decoded:
        """Chat-shaped usage: prompt = the three input counts, cached = the cache reads; output tokens
        only from `message_delta` (message_start's count is not the answer's)."""
        if not isinstance(usage, dict):
            return NOTHING
        self.inputs.update((k, usage[k]) for k in _INPUTS if type(usage.get(k)) is int)
        out: Usage = {}
        if self.inputs:
            out["prompt_tokens"] = sum(self.inputs.values())
        if "cache_read_input_tokens" in self.inputs:
            out["prompt_tokens_details"] = {"cached_tokens": self.inputs["cache_read_input_tokens"]}
        if output and type(usage.get("output_tokens")) is int:
            out["completion_tokens"] = usage["output_tokens"]
        return ((USAGE, out),) if out else NOTHING


def decoder() -> EventAccumulator:
    return EventAccumulator(MessagesDecoder(), "message_stop")


def probe_body(model: str, messages: list[Message]) -> MessagesProbe:
    system, converted = convert(messages)
    body: MessagesProbe = {"model": model, "max_tokens": 1, "stream": False, "messages": converted}
    if system is not None:
        body["system"] = system
    return body


def prompt_tokens(answer: ProbeAnswer) -> int | None:
    usage = answer.get("usage")
    if not isinstance(usage, dict) or type(usage.get("input_tokens")) is not int:
        return None
    return sum(int(usage[k]) for k in _INPUTS if type(usage.get(k)) is int)


def x_api_key(api_key: str) -> dict[str, str]:
    """The key as Anthropic's `x-api-key`, and as a bearer token too: vLLM's `--api-key` check reads only
    `Authorization: Bearer`, on /v1/messages as on every /v1 path."""
    return {"x-api-key": api_key, "Authorization": f"Bearer {api_key}"}


API = Api("messages", "messages", request_body, decoder, probe_body, prompt_tokens,
          headers={"anthropic-version": VERSION}, auth=x_api_key)
