"""`POST /v1/responses` request bodies (the OpenAI Responses API) read into a chat `GenerationRequest`.

`input` is a string (one user message) or a list of items: messages (`role` user, system, developer or
assistant; `content` a string or `input_text`/`output_text` parts), `function_call` items (a call the
model made earlier) and `function_call_output` items (its result); `reasoning` items are dropped. The
conversation becomes the chat messages a chat client would send for it, so it is rendered by the same
chat template to the same tokens: `instructions` is a leading system message, a function call is part
of the assistant message before it (chat renders an assistant message's text, not its tool calls), and
its output is a `tool` message. `max_output_tokens` caps the output. `previous_response_id` is refused:
this server keeps no responses.
"""

from __future__ import annotations

from refserver.api.errors import bad_request
from refserver.api.json_object import JSONObject
from refserver.api.protocol import GenerationRequest, content_text, read_sampling
from refserver.api.tools import parse_tool_choice, parse_tools
from refserver.text import Message

_ROLES = frozenset({"user", "system", "developer", "assistant"})


def _item_message(item: JSONObject, param: str, messages: list[Message]) -> None:
    kind = item.get("type") if "type" in item else "message"
    if kind == "message":
        role = item.get("role")
        if role not in _ROLES:
            raise bad_request(f"{param}.role must be one of {sorted(_ROLES)}", param=f"{param}.role")
        messages.append({"role": role, "content": content_text(item.get("content"), f"{param}.content")})
    elif kind == "function_call":
        if not isinstance(item.get("name"), str) or not isinstance(item.get("arguments"), str):
            raise bad_request(f"{param}: a function_call needs 'name' and 'arguments' strings", param=param)
        if not messages or messages[-1]["role"] != "assistant":
            messages.append({"role": "assistant", "content": ""})
    elif kind == "function_call_output":
        output = item.get("output")
        messages.append({"role": "tool", "content": content_text(output, f"{param}.output")})
    elif kind != "reasoning":
        raise bad_request(f"{param}: input items of type {kind!r} are not supported", param=f"{param}.type")


def input_messages(body: JSONObject) -> list[Message]:
    messages: list[Message] = []
    instructions = body.get("instructions")
    if instructions is not None:
        if not isinstance(instructions, str):
            raise bad_request("'instructions' must be a string", param="instructions", code="invalid_type")
        messages.append({"role": "system", "content": instructions})
    raw = body.get("input")
    if raw is None:
        raise bad_request("'input' is required", param="input", code="missing_required_parameter")
    if isinstance(raw, str):
        messages.append({"role": "user", "content": raw})
    elif isinstance(raw, list) and raw:
        for i, item in enumerate(raw):
            if not isinstance(item, dict):
                raise bad_request(f"input[{i}] must be an object", param=f"input[{i}]")
            _item_message(JSONObject(item), f"input[{i}]", messages)
    else:
        raise bad_request("'input' must be a string or a non-empty list of items", param="input")
    if not any(m["role"] != "system" for m in messages):
        raise bad_request("'input' holds no message", param="input")
    return messages


def parse_responses_request(raw: object) -> GenerationRequest:
    """Validate a decoded `/v1/responses` body; raises a 400 `APIError` on the first problem found."""
    body = JSONObject.of_body(raw)
    if body.get("previous_response_id") is not None:
        raise bad_request("'previous_response_id' is not supported: this server stores no responses; send the "
                          "conversation in 'input'", param="previous_response_id")
    messages = input_messages(body)
    model = body.read_str("model")
    max_tokens = body.read_int("max_output_tokens", minimum=1)
    sampling = read_sampling(body, max_tokens)
    tools = parse_tools(body, "responses")
    tool_choice = parse_tool_choice(body, "responses", tools)
    return GenerationRequest(
        kind="responses", messages=messages, model=model, max_tokens=max_tokens, max_tokens_param="max_output_tokens",
        tools=tools, tool_choice=tool_choice, stream=bool(body.read_bool("stream")), **sampling,
    )
