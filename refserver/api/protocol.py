"""Request bodies of `/v1/chat/completions` and `/v1/completions`, validated into one `GenerationRequest`.

Unknown fields are ignored (OpenAI clients send many); known fields of the wrong type or out of range,
and a missing `messages`/`prompt`, raise a 400 `APIError` naming the field in `param`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from refserver.api.behaviour import Tool, ToolChoice
from refserver.api.errors import bad_request
from refserver.api.tools import parse_tool_choice, parse_tools
from refserver.text import Message

Kind = Literal["chat", "completion", "responses", "messages"]
_CHAT_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
_INT64_END = 2**63
_TEXT_PARTS = frozenset({"text", "input_text", "output_text"})  # chat's, and the Responses API's


@dataclass(slots=True)
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


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int(body: dict[str, Any], name: str, *, minimum: int | None = None) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer() and abs(value) >= _INT64_END:
        # orjson reads an integer literal past 64 bits as a float: the type the client sent is not known.
        raise bad_request(f"'{name}' must be an integer below 2**63, got {value:.6g}", param=name)
    if not _is_int(value):
        raise bad_request(f"'{name}' must be an integer, got {type(value).__name__}", param=name, code="invalid_type")
    if abs(value) >= _INT64_END:
        raise bad_request(f"'{name}' must be an integer below 2**63, got {value}", param=name)
    if minimum is not None and value < minimum:
        raise bad_request(f"'{name}' must be >= {minimum}, got {value}", param=name)
    return int(value)


def _float(body: dict[str, Any], name: str, *, low: float, high: float, low_open: bool = False) -> float | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise bad_request(f"'{name}' must be a number, got {type(value).__name__}", param=name, code="invalid_type")
    number = float(value)
    too_low = number <= low if low_open else number < low
    if too_low or number > high:
        bracket = "(" if low_open else "["
        raise bad_request(f"'{name}' must be in {bracket}{low}, {high}], got {value}", param=name)
    return number


def _bool(body: dict[str, Any], name: str) -> bool | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise bad_request(f"'{name}' must be a boolean, got {type(value).__name__}", param=name, code="invalid_type")
    return value


def _stop(body: dict[str, Any]) -> list[str]:
    value = body.get("stop")
    if value is None:
        return []
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(s, str) and s for s in items):
        raise bad_request("'stop' must be a non-empty string or a list of non-empty strings", param="stop")
    return list(items)


def _messages(body: dict[str, Any], images: list[str] | None = None) -> list[Message]:
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


def read_int(body: dict[str, Any], name: str, *, minimum: int | None = None) -> int | None:
    """An optional integer field, validated as every endpoint validates them."""
    return _int(body, name, minimum=minimum)


def read_bool(body: dict[str, Any], name: str) -> bool | None:
    return _bool(body, name)


def read_stop_list(body: dict[str, Any], name: str) -> list[str]:
    """A list of stop strings under another name (the Messages API's `stop_sequences`)."""
    value = body.get(name)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(s, str) and s for s in value):
        raise bad_request(f"'{name}' must be a list of non-empty strings", param=name)
    return list(value)


def content_text(content: object, param: str) -> str:
    """Text of a content field: a string, null, or a list of text parts (`type` text, input_text, output_text)."""
    return _content_text(content, param)


def parse_messages(body: dict[str, Any]) -> list[Message]:
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


def _prompt(body: dict[str, Any]) -> str | list[int]:
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
    if isinstance(raw, list) and raw and all(_is_int(t) and t >= 0 for t in raw):
        return [int(t) for t in raw]
    raise bad_request("'prompt' must be a non-empty string or a list of token ids", param="prompt")


def _unsupported(body: dict[str, Any]) -> None:
    n = body.get("n")
    if n is not None and n != 1:
        raise bad_request("only 'n': 1 is supported", param="n")
    if body.get("logprobs") not in (None, False) or body.get("echo") not in (None, False):
        param = "logprobs" if body.get("logprobs") not in (None, False) else "echo"
        raise bad_request(f"'{param}' is not supported by this server", param=param)


def parse_request(body: object, kind: Kind) -> GenerationRequest:
    """Validate a decoded JSON body; raises a 400 `APIError` on the first problem found."""
    if not isinstance(body, dict):
        raise bad_request("the request body must be a JSON object", code="invalid_body")
    _unsupported(body)
    request = GenerationRequest(kind=kind)
    if kind == "chat":
        request.messages = _messages(body, request.image_urls)
        request.tools = parse_tools(body, "chat")
        request.tool_choice = parse_tool_choice(body, "chat", request.tools)
    else:
        request.prompt = _prompt(body)
    model = body.get("model")
    if model is not None and not isinstance(model, str):
        raise bad_request("'model' must be a string", param="model", code="invalid_type")
    request.model = model
    max_tokens = _int(body, "max_completion_tokens", minimum=1)
    request.max_tokens = max_tokens if max_tokens is not None else _int(body, "max_tokens", minimum=1)
    read_sampling(body, request)
    request.stop = _stop(body)
    request.stream = bool(_bool(body, "stream"))
    _stream_options(body, request)
    return request


def read_sampling(body: dict[str, Any], request: GenerationRequest) -> None:
    """The sampling fields every API shares: temperature, top_p, top_k, seed, ignore_eos, min_tokens."""
    temperature = _float(body, "temperature", low=0.0, high=2.0)
    request.temperature = 1.0 if temperature is None else temperature
    top_p = _float(body, "top_p", low=0.0, high=1.0, low_open=True)
    request.top_p = 1.0 if top_p is None else top_p
    top_k = _int(body, "top_k", minimum=-1)
    request.top_k = 0 if top_k is None or top_k == -1 else top_k
    request.seed = _int(body, "seed")
    request.ignore_eos = bool(_bool(body, "ignore_eos"))
    request.min_tokens = _int(body, "min_tokens", minimum=0) or 0
    if request.max_tokens is not None and request.min_tokens > request.max_tokens:
        raise bad_request("'min_tokens' must not exceed 'max_tokens'", param="min_tokens")


def _stream_options(body: dict[str, Any], request: GenerationRequest) -> None:
    options = body.get("stream_options")
    if options is None:
        return
    if not isinstance(options, dict):
        raise bad_request("'stream_options' must be an object", param="stream_options", code="invalid_type")
    if not request.stream:
        raise bad_request("'stream_options' is only allowed when 'stream' is true", param="stream_options")
    request.include_usage = bool(_bool(options, "include_usage"))
    request.continuous_usage_stats = bool(_bool(options, "continuous_usage_stats"))
