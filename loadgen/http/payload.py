"""Request bodies of the chat and completions APIs, and URLs (`loadgen.http.api` holds every API's own).

The body asks for everything the metrics need (docs/metrics.md, token accounting): `stream: true`, running usage
(`stream_options.include_usage` + vLLM's `continuous_usage_stats`) so each chunk's token count is
known, and `ignore_eos`/`min_tokens` (vLLM extensions) so output lengths follow the workload.
The user's `extra_body` is merged last and wins, recursively for nested objects. No body over
MAX_BODY_BYTES is sent (loadgen.workload.bounds): such a request ends as `invalid_request`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict
from urllib.parse import urlsplit

import orjson

from loadgen.tools import ChatNamedChoice, chat_tool_choice, tools_for
from loadgen.types import ClientConfig, Message, Tool, WorkItem
from loadgen.workload import MAX_BODY_BYTES

if TYPE_CHECKING:
    from metrics.results import JsonObject


class StreamedBody(TypedDict):
    """What every API's streamed body carries (each API's own body adds its fields)."""

    model: str
    stream: bool
    min_tokens: NotRequired[int]  # vLLM's extensions
    ignore_eos: NotRequired[bool]
    temperature: NotRequired[float]


class StreamOptions(TypedDict):
    include_usage: bool
    continuous_usage_stats: bool  # vLLM's: usage on every chunk


class ChatBody(StreamedBody):
    """The chat (`messages`) and completions (`prompt`) body."""

    messages: NotRequired[list[Message]]
    prompt: NotRequired[str]
    stream_options: NotRequired[StreamOptions]
    max_tokens: NotRequired[int]
    tools: NotRequired[list[Tool]]
    tool_choice: NotRequired[Literal["auto", "required", "none"] | ChatNamedChoice]


def public_url(url: str) -> str:
    """A URL as it may be written down or shown: no userinfo, no query (either can hold a secret)."""
    import httpx

    try:
        return str(httpx.URL(url).copy_with(username=None, password=None, query=None))
    except (httpx.InvalidURL, TypeError, ValueError):
        return "<unparsable URL>"


def scrub_userinfo(text: str) -> str:
    """Remove `user:password@` from every URL inside a message (httpx puts URLs in its errors)."""
    return re.sub(r"(\w+://)[^/@\s'\"]+@", r"\1", text)


def needs_tls(url: str) -> bool:
    """For a one-URL httpx client's `verify=`: certificates are checked on https, and a plain-http client
    gets no TLS context at all (httpx builds one with the CA bundle by default: ~40-70 ms per client)."""
    return urlsplit(url).scheme.lower() != "http"


def add_sampling(body: StreamedBody, item: WorkItem, config: ClientConfig) -> None:
    """vLLM's `min_tokens` and `ignore_eos` and the temperature, in this order, as every API's body
    carries them (the order is the bytes sent)."""
    if item.min_tokens is not None:
        body["min_tokens"] = item.min_tokens
    if config.ignore_eos:
        body["ignore_eos"] = True
    if config.temperature is not None:
        body["temperature"] = config.temperature


def chat_messages(item: WorkItem) -> list[Message]:
    if item.messages:
        return item.messages
    if item.prompt is not None:
        return [{"role": "user", "content": item.prompt}]
    raise ValueError("work item has neither messages nor a prompt")


def completion_prompt(item: WorkItem) -> str:
    if item.prompt is not None:
        return item.prompt
    if item.messages:
        # A completions endpoint applies no chat template: plain concatenation of the turns.
        return "\n".join(message_text(m) for m in item.messages)
    raise ValueError("work item has neither a prompt nor messages")


def message_text(message: Message) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts: keep the text ones
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def request_body(item: WorkItem, config: ClientConfig) -> dict[str, Any]:
    body: ChatBody
    if config.endpoint == "chat":
        body = {"model": item.model or config.model, "messages": chat_messages(item), "stream": True}
    else:
        body = {"model": item.model or config.model, "prompt": completion_prompt(item), "stream": True}
    if config.include_usage or config.continuous_usage_stats:
        body["stream_options"] = {
            "include_usage": config.include_usage,
            "continuous_usage_stats": config.continuous_usage_stats,
        }
    if item.max_tokens is not None:
        body["max_tokens"] = item.max_tokens
    add_sampling(body, item, config)
    tools, choice = tools_for(item, config)
    if tools:
        if config.endpoint != "chat":
            raise ValueError(f"the {config.endpoint} API takes no tools")
        body["tools"] = tools
        if choice is not None:
            body["tool_choice"] = chat_tool_choice(choice)
    return merge_body(body, config.extra_body)


def merge_body(base: StreamedBody | JsonObject, extra: dict[str, Any]) -> dict[str, Any]:
    """`extra` over `base`: a JSON object to send (an API's body under the user's `--extra-body`, or that
    under a probe's body); nested objects merge key by key, anything else is replaced."""
    merged = dict(base)
    for key, value in extra.items():
        old = merged.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            merged[key] = merge_body(old, value)
        else:
            merged[key] = value
    return merged


def encode_body(item: WorkItem, config: ClientConfig, *, limit: int = MAX_BODY_BYTES,
                build: Callable[[WorkItem, ClientConfig], dict[str, Any]] = request_body) -> bytes:
    """The request's JSON body (`build`: the API's body, chat's or completions' by default); ValueError when
    it is over `limit` bytes. A prompt longer than the limit (a long conversation's history) is refused
    before the body is encoded, and no body over the limit is sent."""
    chars = _text_chars(item)
    if chars > limit:
        raise ValueError(f"the prompt holds {chars:,} characters: the body would be over the {limit:,}-byte limit")
    body = orjson.dumps(build(item, config))
    if len(body) > limit:
        raise ValueError(f"the body is {len(body):,} bytes, over the {limit:,}-byte limit")
    return body


def _text_chars(item: WorkItem) -> int:
    """Characters of the prompt's text (a lower bound on its bytes in the body)."""
    if item.messages:
        return sum(len(content) for m in item.messages if isinstance(content := m.get("content"), str))
    return len(item.prompt) if item.prompt is not None else 0
