"""The console lines of reasoning and tool calls (docs/metrics.md#reasoning-and-tool-calls): printed only
when summary.json has the `reasoning` / `tool_calls` sections (a run where some request reasoned or called
a tool, or with a TTFO SLO), so other runs print what they did. Milliseconds, p50/p99, as the table."""

from __future__ import annotations

from typing import Any


def _ms(block: Any) -> str:
    if not isinstance(block, dict) or not block.get("count"):
        return "-"
    return "/".join("-" if block.get(k) is None else f"{block[k] * 1e3:.1f}" for k in ("p50", "p99"))


def _tokens(block: Any) -> str:
    if not isinstance(block, dict) or not block.get("count"):
        return "-"
    return "/".join("-" if block.get(k) is None else f"{block[k]:.0f}" for k in ("p50", "p99"))


def _count(block: Any) -> int:
    """The requests a block covers (for TTFO: those that answered; a request that reasoned until it was
    cut off has no TTFO and is not among them)."""
    return int(block.get("count") or 0) if isinstance(block, dict) else 0


def answer_lines(summary: dict[str, Any]) -> list[str]:
    """Three lines on reasoning (TTFO beside TTFT, reasoning time, tokens and where their counts came from)
    and one on tool calls; nothing for a summary without these sections."""
    reasoning, tools = summary.get("reasoning"), summary.get("tool_calls")
    if not isinstance(reasoning, dict) or not isinstance(tools, dict):
        return []
    latency = summary.get("latency", {})
    sources = reasoning.get("reasoning_tokens_source") or {}
    requests, known = reasoning.get("requests", 0), reasoning.get("reasoning_tokens_known", 0)
    if known:
        tokens = [
            f"  reasoning tokens: {reasoning.get('reasoning_tokens_total')} in the {known} requests with a count"
            f" ({', '.join(f'{name} {n}' for name, n in sources.items())}); answer tokens:"
            f" {reasoning.get('answer_tokens_total')}",
            f"  per request p50/p99: reasoning tokens {_tokens(reasoning.get('reasoning_tokens'))},"
            f" answer tokens {_tokens(reasoning.get('answer_tokens'))}",
        ]
    else:
        tokens = ["  tokens: no request has a reasoning count (the server reported none and none was counted)"]
    return [
        f"reasoning: {reasoning.get('reasoned', 0)} of {requests} reasoned, {_count(latency.get('ttfo_s'))}"
        f" answered; p50/p99 ms: TTFO"
        f" {_ms(latency.get('ttfo_s'))} (TTFT {_ms(latency.get('ttft_s'))}),"
        f" reasoning time {_ms(latency.get('reasoning_time_s'))}",
        *tokens,
        f"tool calls: {tools.get('calls', 0)} by {tools.get('requests', 0)} of {requests} requests; p50/p99 ms:"
        f" first delta {_ms(latency.get('tool_call_s'))}, complete call {_ms(latency.get('tool_call_done_s'))}",
    ]
