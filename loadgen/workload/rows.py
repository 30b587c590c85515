"""A dataset's rows as read (`DatasetRow`, `ShareGPTTurn`: each value checked by the function that takes
it), and their chat messages, checked once where the file is read (`loadgen.types.Message`).

A message is an object with a string `role`; its `content` a string, null, or a list of content parts
(objects with a string `type`; a part's `text` a string; an `image_url` part's image a URL or `{"url",
"detail"?}`); its `tool_calls` a list of `{"id", "type"?, "function": {"name", "arguments"}}` (strings: the
arguments are JSON text); its `tool_call_id` a string. Anything else is refused with its line and the
message's number: a server would refuse the request, or an API's conversion of it would fail.
"""

from __future__ import annotations

from typing import TypedDict, TypeGuard

from loadgen.tools import check_tools, parse_tool_choice
from loadgen.types import Message, Tool, ToolChoice


class DatasetRow(TypedDict, total=False):
    """A JSONL line's object or a ShareGPT entry (loadgen.workload.sources and conversations say which keys
    each form reads); the values are the file's, each checked where it is read."""

    messages: object
    prompt: object
    max_tokens: object
    tags: object
    model: object
    tools: object
    tool_choice: object
    images: object
    image: object
    turns: object
    conversations: object


# A ShareGPT turn: {"from": "human" | "gpt" | "system" | ..., "value": text} (the values checked where read).
ShareGPTTurn = TypedDict("ShareGPTTurn", {"from": object, "value": object}, total=False)


def is_row(value: object) -> TypeGuard[DatasetRow]:
    """A JSON object is a row (every key optional, every value still to be checked)."""
    return isinstance(value, dict)


def is_turn(value: object) -> TypeGuard[ShareGPTTurn]:
    return isinstance(value, dict)


def row_images(row: DatasetRow) -> object:
    """A row's image references as the file gives them: `images`, or `image` (loadgen.workload.images.dataset)."""
    return row.get("images", row.get("image"))


def row_tools(row: DatasetRow, where: str) -> tuple[list[Tool] | None, ToolChoice | None]:
    """A dataset row's own `tools` (checked) and `tool_choice`; (None, None) when it has none."""
    if row.get("tools") is None:
        return None, None
    tools = check_tools(row.get("tools"), where)
    choice = row.get("tool_choice")
    if choice is not None and not isinstance(choice, str):
        raise ValueError(f"{where}: 'tool_choice' must be auto, required, none or a tool's name")
    return tools, parse_tool_choice(choice, tools)


def checked_messages(value: object, where: str, need: str) -> list[Message]:
    """`value` as chat messages: ValueError `WHERE: NEED` when it is not a non-empty list of objects with a
    role, naming the first message that is not one otherwise."""
    if not isinstance(value, list) or not value or not all(isinstance(m, dict) and "role" in m for m in value):
        raise ValueError(f"{where}: {need}")
    if _are_messages(value):
        return value
    number, problem = next((i, p) for i, m in enumerate(value, 1) if (p := _problem(m)) is not None)
    raise ValueError(f"{where}: message {number}: {problem}")


def _are_messages(messages: list[object]) -> TypeGuard[list[Message]]:
    return all(_problem(m) is None for m in messages)


def _problem(message: object) -> str | None:
    """What keeps `message` from being a `Message`; None when nothing does."""
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        return "'role' must be a string"
    content = message.get("content")
    if isinstance(content, list):
        return next((p for p in map(_part_problem, content) if p is not None), None)
    if content is not None and not isinstance(content, str):
        return "'content' must be a string, null or a list of content parts"
    calls = message.get("tool_calls")
    if calls is not None and not (isinstance(calls, list) and all(_is_call(c) for c in calls)):
        return "'tool_calls' must be a list of {\"id\", \"function\": {\"name\", \"arguments\"}} (strings)"
    if "tool_call_id" in message and not isinstance(message["tool_call_id"], str):
        return "'tool_call_id' must be a string"
    return None


def _part_problem(part: object) -> str | None:
    if not isinstance(part, dict) or not isinstance(part.get("type"), str):
        return 'each content part must be an object with a string "type"'
    if "text" in part and not isinstance(part["text"], str):
        return "a part's 'text' must be a string"
    if "image_url" in part or part["type"] == "image_url":
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else image
        if not isinstance(url, str) or not url.strip():
            return "an image_url part needs image_url.url, a path or URL"
        if isinstance(image, dict) and "detail" in image and not isinstance(image["detail"], str):
            return "an image_url part's 'detail' must be a string"
    return None


def _is_call(call: object) -> bool:
    if not isinstance(call, dict) or not isinstance(call.get("id"), str):
        return False
    if "type" in call and not isinstance(call["type"], str):
        return False
    function = call.get("function")
    return (isinstance(function, dict) and isinstance(function.get("name"), str)
            and isinstance(function.get("arguments"), str))
