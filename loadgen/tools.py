"""Tool lists: read and checked once (`--tools FILE`, a dataset row's `tools`), sent in each API's form.

The common form is OpenAI's chat tool list, `[{"type": "function", "function": {"name", "description"?,
"parameters"?}}]` (`loadgen.types.Tool`); `tool_choice` is `auto`, `required`, `none` or a tool's name
(held as `{"type": "function", "name": NAME}`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict

from loadgen.types import ClientConfig, NamedChoice, Tool, ToolChoice, WorkItem

if TYPE_CHECKING:
    from metrics.results import JsonObject

CHOICES = ("auto", "required", "none")
_CHOICES: dict[str, Literal["auto", "required", "none"]] = {"auto": "auto", "required": "required", "none": "none"}


class ResponsesTool(TypedDict):
    """The Responses API's flat function tool: the chat tool's function with the type beside its name."""

    type: Literal["function"]
    name: str
    description: NotRequired[str]
    parameters: NotRequired[JsonObject]


class MessagesTool(TypedDict):
    """Anthropic's tool: the schema is required there."""

    name: str
    description: NotRequired[str]
    input_schema: JsonObject


class ChatFunctionName(TypedDict):
    name: str


class ChatNamedChoice(TypedDict):
    type: Literal["function"]
    function: ChatFunctionName


class MessagesChoice(TypedDict):
    type: str  # auto, any, none, or tool
    name: NotRequired[str]


class ToolOptions(TypedDict, total=False):
    """The client configuration's run-wide tools, as keyword arguments of `ClientConfig`."""

    tools: list[Tool]
    tool_choice: ToolChoice | None


def check_tools(tools: object, where: str) -> list[Tool]:
    """`tools` as a checked tool list; ValueError with a one-line reason naming `where` otherwise."""
    if not isinstance(tools, list) or not tools:
        raise ValueError(f"{where}: a tool list must be a non-empty JSON array")
    names: set[str] = set()
    for i, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(function, dict):
            raise ValueError(f'{where}: tool {i} is not {{"type": "function", "function": {{...}}}}')
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"{where}: tool {i} has no function name")
        if name in names:
            raise ValueError(f"{where}: tool name {name!r} appears twice")
        names.add(name)
        if "parameters" in function and not isinstance(function["parameters"], dict):
            raise ValueError(f"{where}: tool {name!r}: parameters must be a JSON object (a JSON schema)")
        if "description" in function and not isinstance(function["description"], str):
            raise ValueError(f"{where}: tool {name!r}: description must be a string")
    return tools


def read_tools(path: str) -> list[Tool]:
    """`--tools FILE`: ValueError with a one-line reason when it cannot be used."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"--tools {path}: cannot read it ({type(exc).__name__})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--tools {path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    return check_tools(data, f"--tools {path}")


def parse_tool_choice(value: str | None, tools: list[Tool] | None) -> ToolChoice | None:
    """`--tool-choice auto|required|none|NAME` → the work item's tool_choice; ValueError when it names no
    tool of the list or comes without one."""
    if value is None:
        return None
    if tools is None:
        raise ValueError("--tool-choice needs --tools")
    keyword = _CHOICES.get(value)
    if keyword is not None:
        return keyword
    if value not in {t["function"]["name"] for t in tools}:
        raise ValueError(f"--tool-choice {value!r}: no tool of that name in --tools (or use auto, required, none)")
    return {"type": "function", "name": value}


def _named(choice: ToolChoice) -> str | None:
    return str(choice["name"]) if isinstance(choice, dict) and "name" in choice else None


def chat_tool_choice(choice: ToolChoice) -> Literal["auto", "required", "none"] | ChatNamedChoice:
    if isinstance(choice, dict):
        return {"type": "function", "function": {"name": str(choice["name"])}}
    return choice


def responses_tools(tools: list[Tool]) -> list[ResponsesTool]:
    """The Responses API's flat function tools: `{"type": "function", "name", "description", "parameters"}`."""
    return [{"type": "function", **t["function"]} for t in tools]


def responses_tool_choice(choice: ToolChoice) -> ToolChoice:
    if isinstance(choice, dict):
        return NamedChoice(type="function", name=str(choice["name"]))
    return choice


def messages_tools(tools: list[Tool]) -> list[MessagesTool]:
    """Anthropic's tools: `{"name", "description"?, "input_schema"}` (a schema is required there)."""
    out = []
    for t in tools:
        function = t["function"]
        schema = function.get("parameters") or {"type": "object", "properties": {}}
        if "description" in function:
            out.append(MessagesTool(name=function["name"], description=function["description"], input_schema=schema))
        else:
            out.append(MessagesTool(name=function["name"], input_schema=schema))
    return out


def messages_tool_choice(choice: ToolChoice) -> MessagesChoice:
    name = _named(choice)
    if name is not None:
        return {"type": "tool", "name": name}
    return {"type": {"required": "any"}.get(str(choice), str(choice))}


def tool_options(tool_list: str | None, choice: str | None) -> ToolOptions:
    """The client's run-wide `tools` / `tool_choice` from the spec's (checked) tool list text."""
    if tool_list is None:
        return {}
    tools = check_tools(json.loads(tool_list), "--tools")
    return {"tools": tools, "tool_choice": parse_tool_choice(choice, tools)}


def tools_for(item: WorkItem, config: ClientConfig) -> tuple[list[Tool] | None, ToolChoice | None]:
    """The tools a request sends and its tool choice: the work item's own (a dataset row's), else the run's."""
    if item.tools:
        return item.tools, item.tool_choice
    return config.tools, config.tool_choice

