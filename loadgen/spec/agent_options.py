"""The options of tool calls, read for the spec: `--tools FILE` (checked, its list kept as canonical JSON so
a worker needs no file) and `--tool-choice`, checked against it. The agent loop's `--tool-latency`,
`--tool-result-tokens` and `--max-tool-turns` (loadgen.workload.agent) are derived options
(loadgen.spec.derived, their codecs in loadgen.spec.codecs)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from loadgen.spec.values import OptionValues


class ToolFields(TypedDict, total=False):
    """`RequestSpec`'s tool fields (`tools` and `tool_list` only with --tools)."""

    tools: str
    tool_list: str
    tool_choice: str | None


def tool_values(v: OptionValues) -> ToolFields:
    """`--tools FILE` read and checked (its list kept as canonical JSON), `--tool-choice` checked against it."""
    if v.tools is None:
        return {"tool_choice": v.tool_choice}
    from loadgen.tools import parse_tool_choice, read_tools

    tools = read_tools(str(v.tools))
    parse_tool_choice(v.tool_choice, tools)
    return {"tools": str(v.tools), "tool_list": json.dumps(tools, sort_keys=True), "tool_choice": v.tool_choice}
