"""`POST /v1/messages` request bodies (Anthropic's Messages API) read into a chat `GenerationRequest`.

`max_tokens` is required, as Anthropic requires it. `system` (a string or text blocks) leads as a system
message; `messages` alternate user and assistant, their `content` a string or blocks: `text`,
`tool_use` (a call the assistant made: chat renders an assistant message's text, not its calls, so it
adds no text), `tool_result` (in a user message: a `tool` message with its text, before the message's
own text), `thinking` and `redacted_thinking` (dropped, as chat drops earlier reasoning). So the same
conversation sent as chat or here is rendered by the one chat template to the same tokens.
`stop_sequences`, `temperature`, `top_p`, `top_k`, `tools`, `tool_choice`, `stream` are honoured, and
the extensions `seed`, `ignore_eos`, `min_tokens` (as in chat);
`metadata` and `thinking` are accepted and ignored (the server reasons as `--reasoning-tokens` says).
"""

from __future__ import annotations

from refserver.api.errors import bad_request
from refserver.api.json_object import JSONObject
from refserver.api.protocol import GenerationRequest, read_sampling
from refserver.api.tools import parse_tool_choice, parse_tools
from refserver.text import Message

_SKIPPED_BLOCKS = frozenset({"thinking", "redacted_thinking", "tool_use"})


def _text_blocks(content: object, param: str) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise bad_request(f"{param} must be a string or a list of content blocks", param=param, code="invalid_type")
    texts = []
    for i, block in enumerate(content):
        if not (isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)):
            raise bad_request(f"{param}[{i}]: only text blocks are supported here", param=f"{param}[{i}]")
        texts.append(block["text"])
    return "".join(texts)


def _message(raw: object, param: str, messages: list[Message]) -> None:
    if not isinstance(raw, dict):
        raise bad_request(f"{param} must be an object", param=param)
    role = raw.get("role")
    if role not in ("user", "assistant"):
        raise bad_request(f"{param}.role must be 'user' or 'assistant'", param=f"{param}.role")
    content = raw.get("content")
    if isinstance(content, str):
        messages.append({"role": role, "content": content})
        return
    if not isinstance(content, list):
        raise bad_request(f"{param}.content must be a string or a list of content blocks", param=f"{param}.content")
    texts: list[str] = []
    for i, block in enumerate(content):
        where = f"{param}.content[{i}]"
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "tool_result" and role == "user":
            messages.append({"role": "tool", "content": _text_blocks(block.get("content", ""), f"{where}.content")})
        elif kind not in _SKIPPED_BLOCKS:
            raise bad_request(f"{where}: content blocks of type {kind!r} are not supported", param=where)
    if texts or role == "assistant":
        messages.append({"role": role, "content": "".join(texts)})


def parse_messages_request(raw: object) -> GenerationRequest:
    """Validate a decoded `/v1/messages` body; raises a 400 `APIError` on the first problem found."""
    body = JSONObject.of_body(raw)
    messages: list[Message] = []
    system = body.get("system")
    if system is not None:
        messages.append({"role": "system", "content": _text_blocks(system, "system")})
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise bad_request("'messages' must be a non-empty list", param="messages")
    for i, item in enumerate(raw):
        _message(item, f"messages[{i}]", messages)
    model = body.read_str("model")
    max_tokens = body.read_int("max_tokens", minimum=1)
    if max_tokens is None:
        raise bad_request("'max_tokens' is required", param="max_tokens", code="missing_required_parameter")
    sampling = read_sampling(body, max_tokens)
    stop = body.read_stop_list("stop_sequences")
    tools = parse_tools(body, "messages")
    tool_choice = parse_tool_choice(body, "messages", tools)
    return GenerationRequest(
        kind="messages", messages=messages, model=model, max_tokens=max_tokens, stop=stop, tools=tools,
        tool_choice=tool_choice, stream=bool(body.read_bool("stream")), **sampling,
    )
