"""The options of tool calls and agent loops, read for the spec: `--tools FILE` (checked, its list kept as
canonical JSON so a worker needs no file), `--tool-choice`, and the agent loop's `--tool-latency`,
`--tool-result-tokens` (loadgen.workload.agent; `--max-tool-turns` is a plain copy, loadgen.spec.derived). Parsers' messages name the flags."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, TypedDict

from loadgen.spec.sections import SpecError
from loadgen.workload import ThinkTime, parse_length, parse_think_time

if TYPE_CHECKING:
    from loadgen.spec.values import OptionValues
    from loadgen.workload import LengthDist


class AgentFields(TypedDict):
    """`WorkloadSpec`'s agent-loop fields that need parsing."""

    tool_latency: ThinkTime
    tool_result_tokens: LengthDist


class ToolFields(TypedDict, total=False):
    """`RequestSpec`'s tool fields (`tools` and `tool_list` only with --tools)."""

    tools: str
    tool_list: str
    tool_choice: str | None


def agent_values(v: OptionValues) -> AgentFields:
    """The agent loop's options; their parsers' messages name the flags."""
    try:
        latency = parse_think_time(str(v.tool_latency))
    except ValueError as exc:
        raise SpecError(str(exc).replace("--think-time", "--tool-latency", 1)) from None
    try:
        tokens = parse_length(str(v.tool_result_tokens))
    except ValueError as exc:
        raise SpecError(f"--tool-result-tokens: {exc}") from None
    return {"tool_latency": latency, "tool_result_tokens": tokens}


def tool_values(v: OptionValues) -> ToolFields:
    """`--tools FILE` read and checked (its list kept as canonical JSON), `--tool-choice` checked against it."""
    if v.tools is None:
        return {"tool_choice": v.tool_choice}
    from loadgen.tools import parse_tool_choice, read_tools

    tools = read_tools(str(v.tools))
    parse_tool_choice(v.tool_choice, tools)
    return {"tools": str(v.tools), "tool_list": json.dumps(tools, sort_keys=True), "tool_choice": v.tool_choice}
