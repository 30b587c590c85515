"""Request bodies of `/v1/chat/completions` and `/v1/completions`, validated into one `GenerationRequest`.

Unknown fields are ignored (OpenAI clients send many); known fields of the wrong type or out of range,
and a missing `messages`/`prompt`, raise a 400 `APIError` naming the field in `param`. The body is read
here (and in responses_protocol.py, messages_protocol.py) into a frozen `GenerationRequest`, which is all
the rest of the server reads of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypedDict

from metrics.results import is_int
from refserver.api.behaviour import Tool, ToolChoice
from refserver.api.errors import bad_request
from refserver.api.json_object import JSONObject
from refserver.api.tools import parse_tool_choice, parse_tools
from refserver.text import Message

Kind = Literal["chat", "completion", "responses", "messages"]
_CHAT_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
_TEXT_PARTS = frozenset({"text", "input_text", "output_text"})  # chat's, and the Responses API's


@dataclass(frozen=True, slots=True)
class GenerationRequest:
    kind: Kind
    messages: list[Message] | None = None  # chat
    image_urls: list[str] = field(default_factory=list)  # chat: the image_url parts, in order (api/images.py)
    prompt: str | list[int] | None = None  # completion: text or token ids
    model: str | None = None
    max_tokens: int | None = None  # None: the rest of the context (vLLM's default)
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    seed: int | None = None
    stop: list[str] = field(default_factory=list)
    ignore_eos: bool = False
    min_tokens: int = 0
    stream: bool = False
    include_usage: bool = False
    continuous_usage_stats: bool = False
    tools: list[Tool] = field(default_factory=list)
    tool_choice: ToolChoice = "auto"
    max_tokens_param: str = "max_tokens"  # the field's name in this API, for errors


class Sampling(TypedDict):
    """The sampling fields every API shares, read by `read_sampling`."""

    temperature: float
    top_p: float
    top_k: int
    seed: int | None
    ignore_eos: bool
    min_tokens: int


def _stop(body: JSONObject) -> list[str]:
    value = body.get("stop")
    if value is None:
        return []
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(s, str) and s for s in items):
        raise bad_request("'stop' must be a non-empty string or a list of non-empty strings", param="stop")
    return list(items)


def _messages(body: JSONObject, images: list[str] | None = None) -> list[Message]:
    raw = body.get("messages")
    if raw is None:
        raise bad_request("'messages' is required", param="messages", code="missing_required_parameter")
    if not isinstance(raw, list) or not raw:
        raise bad_request("'messages' must be a non-empty list", param="messages")
    messages: list[Message] = []
    for i, item in enumerate(raw):
        param = f"messages[{i}]"
        if not isinstance(item, dict):
            raise bad_request(f"{param} must be an object", param=param)
        role = item.get("role")
        if role not in _CHAT_ROLES:
            raise bad_request(f"{param}.role must be one of {sorted(_CHAT_ROLES)}", param=f"{param}.role")
        messages.append({"role": role, "content": _content_text(item.get("content"), f"{param}.content", images)})
    return messages


def content_text(content: object, param: str) -> str:
    """Text of a content field: a string, null, or a list of text parts (`type` text, input_text, output_text)."""
    return _content_text(content, param)


def parse_messages(body: JSONObject) -> list[Message]:
    """A body's chat `messages`, validated as the chat endpoint validates them (a 400 APIError otherwise)."""
    return _messages(body)


def _content_text(content: object, param: str, images: list[str] | None = None) -> str:
    """A message's content: a string, null (assistant tool calls), or a list of text and image_url parts
    (each image's URL is added to `images`; the text is the text parts joined)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts: list[str] = []
        for part in content:
            url = _image_url(part, param)
            if url is not None:
                if images is not None:
                    images.append(url)
                continue
            if not (isinstance(part, dict) and part.get("type") in _TEXT_PARTS and isinstance(part.get("text"), str)):
                raise bad_request(f"{param}: only text and image_url parts are supported", param=param)
            texts.append(part["text"])
        return "".join(texts)
    raise bad_request(f"{param} must be a string or a list of content parts", param=param, code="invalid_type")


def _image_url(part: object, param: str) -> str | None:
    """An `image_url` part's URL (`{"url": ...}` or, as some clients send it, the URL alone); None for
    any other part."""
    if not (isinstance(part, dict) and part.get("type") == "image_url"):
        return None
    value = part.get("image_url")
    url = value.get("url") if isinstance(value, dict) else value
    if not isinstance(url, str) or not url:
        raise bad_request(f"{param}: an image_url part needs image_url.url, a non-empty string", param=param)
    return url


def _prompt(body: JSONObject) -> str | list[int]:
    raw = body.get("prompt")
    if raw is None:
        raise bad_request("'prompt' is required", param="prompt", code="missing_required_parameter")
    # A batch of one is accepted; larger batches would need n choices per response.
    if isinstance(raw, list) and len(raw) == 1 and isinstance(raw[0], str | list):
        raw = raw[0]
    if isinstance(raw, str):
        if not raw:
            raise bad_request("'prompt' must not be empty", param="prompt")
        return raw
    if isinstance(raw, list) and raw and all(is_int(t) and t >= 0 for t in raw):
        return [int(t) for t in raw]
    raise bad_request("'prompt' must be a non-empty string or a list of token ids", param="prompt")


def _unsupported(body: JSONObject) -> None:
    n = body.get("n")
    if n is not None and n != 1:
        raise bad_request("only 'n': 1 is supported", param="n")
    if body.get("logprobs") not in (None, False) or body.get("echo") not in (None, False):
        param = "logprobs" if body.get("logprobs") not in (None, False) else "echo"
        raise bad_request(f"'{param}' is not supported by this server", param=param)


def parse_request(raw: object, kind: Kind) -> GenerationRequest:
    """Validate a decoded JSON body; raises a 400 `APIError` on the first problem found."""
    body = JSONObject.of_body(raw)
    _unsupported(body)
    messages: list[Message] | None = None
    image_urls: list[str] = []
    tools: list[Tool] = []
    tool_choice: ToolChoice = "auto"
    prompt: str | list[int] | None = None
    if kind == "chat":
        messages = _messages(body, image_urls)
        tools = parse_tools(body, "chat")
        tool_choice = parse_tool_choice(body, "chat", tools)
    else:
        prompt = _prompt(body)
    model = body.read_str("model")
    max_tokens = body.read_int("max_completion_tokens", minimum=1)
    if max_tokens is None:
        max_tokens = body.read_int("max_tokens", minimum=1)
    sampling = read_sampling(body, max_tokens)
    stop = _stop(body)
    stream = bool(body.read_bool("stream"))
    include_usage, continuous_usage_stats = _stream_options(body, stream)
    return GenerationRequest(
        kind=kind, messages=messages, image_urls=image_urls, prompt=prompt, model=model, max_tokens=max_tokens,
        stop=stop, stream=stream, include_usage=include_usage, continuous_usage_stats=continuous_usage_stats,
        tools=tools, tool_choice=tool_choice, **sampling,
    )


def read_sampling(body: JSONObject, max_tokens: int | None) -> Sampling:
    """The sampling fields every API shares: temperature, top_p, top_k, seed, ignore_eos, min_tokens."""
    temperature = body.read_float("temperature", low=0.0, high=2.0)
    top_p = body.read_float("top_p", low=0.0, high=1.0, low_open=True)
    top_k = body.read_int("top_k", minimum=-1)
    seed = body.read_int("seed")
    ignore_eos = bool(body.read_bool("ignore_eos"))
    min_tokens = body.read_int("min_tokens", minimum=0) or 0
    if max_tokens is not None and min_tokens > max_tokens:
        raise bad_request("'min_tokens' must not exceed 'max_tokens'", param="min_tokens")
    return {
        "temperature": 1.0 if temperature is None else temperature,
        "top_p": 1.0 if top_p is None else top_p,
        "top_k": 0 if top_k is None or top_k == -1 else top_k,
        "seed": seed,
        "ignore_eos": ignore_eos,
        "min_tokens": min_tokens,
    }


def _stream_options(body: JSONObject, stream: bool) -> tuple[bool, bool]:
    """`stream_options`' include_usage and continuous_usage_stats."""
    options = body.get("stream_options")
    if options is None:
        return False, False
    if not isinstance(options, dict):
        raise bad_request("'stream_options' must be an object", param="stream_options", code="invalid_type")
    if not stream:
        raise bad_request("'stream_options' is only allowed when 'stream' is true", param="stream_options")
    fields = JSONObject(options)
    return bool(fields.read_bool("include_usage")), bool(fields.read_bool("continuous_usage_stats"))
