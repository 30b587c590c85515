"""The console lines of reasoning and tool calls (docs/metrics.md#reasoning-and-tool-calls): printed only
when summary.json has the `reasoning` / `tool_calls` sections (a run where some request reasoned or called
a tool, or with a TTFO SLO), so other runs print what they did. Milliseconds, p50/p99, as the table."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the summary's view is imported where a summary is read, not at start-up
    from metrics.results import Stats, SummaryView



def _ms(block: Stats | None) -> str:
    if block is None or not block.count:
        return "-"
    return "/".join("-" if v is None else f"{v * 1e3:.1f}" for v in (block.p50, block.p99))


def _tokens(block: Stats | None) -> str:
    if block is None or not block.count:
        return "-"
    return "/".join("-" if v is None else f"{v:.0f}" for v in (block.p50, block.p99))


def _count(block: Stats | None) -> int:
    """The requests a block covers (for TTFO: those that answered; a request that reasoned until it was
    cut off has no TTFO and is not among them)."""
    return int(block.count or 0) if block is not None else 0


def answer_lines(summary: SummaryView) -> list[str]:
    """Three lines on reasoning (TTFO beside TTFT, reasoning time, tokens and where their counts came from)
    and one on tool calls; nothing for a summary without these sections."""
    reasoning, tools = summary.reasoning, summary.tool_calls
    if reasoning is None or tools is None:
        return []
    latency = summary.stats
    sources = reasoning.reasoning_tokens_source
    requests, known = reasoning.requests, reasoning.reasoning_tokens_known
    if known:
        tokens = [
            f"  reasoning tokens: {reasoning.reasoning_tokens_total} in the {known} requests with a count"
            f" ({', '.join(f'{name} {n}' for name, n in sources.items())}); answer tokens:"
            f" {reasoning.answer_tokens_total}",
            f"  per request p50/p99: reasoning tokens {_tokens(reasoning.reasoning_tokens)},"
            f" answer tokens {_tokens(reasoning.answer_tokens)}",
        ]
    else:
        tokens = ["  tokens: no request has a reasoning count (the server reported none and none was counted)"]
    return [
        f"reasoning: {reasoning.reasoned} of {requests} reasoned, {_count(latency('ttfo_s'))}"
        f" answered; p50/p99 ms: TTFO"
        f" {_ms(latency('ttfo_s'))} (TTFT {_ms(latency('ttft_s'))}),"
        f" reasoning time {_ms(latency('reasoning_time_s'))}",
        *tokens,
        f"tool calls: {tools.calls} by {tools.requests} of {requests} requests; p50/p99 ms:"
        f" first delta {_ms(latency('tool_call_s'))}, complete call {_ms(latency('tool_call_done_s'))}",
    ]
