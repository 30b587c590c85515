"""The tools a request offers and its tool choice, in each API's own form, read into one shape.

Chat: `tools: [{"type": "function", "function": {"name", "parameters"}}]`, `tool_choice` "auto" | "none" |
"required" | `{"type": "function", "function": {"name"}}`. Responses: `tools: [{"type": "function", "name",
"parameters"}]`, `tool_choice` the same strings or `{"type": "function", "name"}`. Messages: `tools: [{"name",
"input_schema"}]`, `tool_choice` `{"type": "auto" | "any" | "none" | "tool", "name"}`. Tools of other kinds
(a Responses `web_search`) are accepted and never called. A simulated call fills one string argument: the
first string property of the tool's schema, else `input`.
"""

from __future__ import annotations

from typing import Literal

from refserver.api.behaviour import Tool, ToolChoice
from refserver.api.errors import bad_request
from refserver.api.json_object import JSONObject

ToolsForm = Literal["chat", "responses", "messages"]


def _arguments_key(schema: object) -> str:
    if isinstance(schema, dict):
        properties = schema.get("properties")
        if isinstance(properties, dict):
            for name, spec in properties.items():
                if isinstance(spec, dict) and spec.get("type") == "string":
                    return str(name)
    return "input"


def _tool(raw: object, form: ToolsForm, param: str) -> Tool | None:
    if not isinstance(raw, dict):
        raise bad_request(f"{param} must be an object", param=param)
    if form == "chat":
        if raw.get("type", "function") != "function":
            return None
        spec = raw.get("function")
        if not isinstance(spec, dict):
            raise bad_request(f"{param}.function must be an object", param=f"{param}.function")
        name, schema = spec.get("name"), spec.get("parameters")
    elif form == "responses":
        if raw.get("type") != "function":
            return None
        name, schema = raw.get("name"), raw.get("parameters")
    else:
        if raw.get("type") not in (None, "custom"):
            return None  # Anthropic's server tools (bash, web_search, ...)
        name, schema = raw.get("name"), raw.get("input_schema")
    if not isinstance(name, str) or not name:
        raise bad_request(f"{param}: a tool needs a non-empty 'name'", param=param)
    return Tool(name=name, arguments_key=_arguments_key(schema))


def parse_tools(body: JSONObject, form: ToolsForm) -> list[Tool]:
    raw = body.get("tools")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise bad_request("'tools' must be a list", param="tools", code="invalid_type")
    tools = [_tool(item, form, f"tools[{i}]") for i, item in enumerate(raw)]
    return [t for t in tools if t is not None]


def _named(raw: JSONObject, form: ToolsForm) -> str | None:
    if form == "chat":
        function = raw.get("function")
        return function.get("name") if isinstance(function, dict) else None
    name = raw.get("name")
    return name if isinstance(name, str) else None


def parse_tool_choice(body: JSONObject, form: ToolsForm, tools: list[Tool]) -> ToolChoice:
    raw = body.get("tool_choice")
    if raw is None:
        return "auto"
    if form == "messages":
        if not isinstance(raw, dict) or raw.get("type") not in ("auto", "any", "none", "tool"):
            raise bad_request("tool_choice.type must be one of auto, any, none, tool", param="tool_choice")
        kind = str(raw["type"])
        if kind != "tool":
            return "required" if kind == "any" else kind
        name = raw.get("name")
    elif isinstance(raw, str):
        if raw not in ("auto", "none", "required"):
            raise bad_request("'tool_choice' must be auto, none, required or a named function", param="tool_choice")
        return raw
    elif isinstance(raw, dict) and raw.get("type") == "function":
        name = _named(JSONObject(raw), form)
    else:
        raise bad_request("'tool_choice' must be auto, none, required or a named function", param="tool_choice")
    if not isinstance(name, str) or name not in {t.name for t in tools}:
        raise bad_request(f"tool_choice names {name!r}, which is not among the request's tools", param="tool_choice")
    return f"function:{name}"
