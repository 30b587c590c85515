"""The report's section on reasoning and tool calls (docs/metrics.md#reasoning-and-tool-calls): a table of
summary.json's figures and the CDFs of TTFO and reasoning time. Only in a run whose summary has them (some
request reasoned or called a tool, or a TTFO SLO); other runs' reports are what they were."""

from __future__ import annotations

from collections.abc import Callable

from exporters.html import fmt
from exporters.html.dist_charts import distribution_chart
from exporters.html.page import Cell, Item, Section, Table
from exporters.html.run_data import RunData
from exporters.html.tables import BLOCK_COLUMNS
from metrics.results import Reasoning, Stats, SummaryView, ToolCalls

TIMES: tuple[tuple[str, str], ...] = (
    ("ttfo_s", "TTFO: first answer token or tool call"), ("ttft_s", "TTFT: first output of any kind"),
    ("reasoning_time_s", "reasoning time"), ("tool_call_s", "time to first tool-call delta"),
    ("tool_call_done_s", "time to complete call"),
)
COUNTS: tuple[tuple[str, str], ...] = (  # block, name
    ("reasoning_tokens", "reasoning tokens per request"), ("answer_tokens", "answer tokens per request"),
    ("calls_per_request", "tool calls per request"),
)
CHARTS: tuple[tuple[str, str, str | None, str], ...] = (
    ("ttfo_s", "TTFO", "ttfo_s", "one per request that answered: first answer token or tool call − send"),
    ("reasoning_time_s", "Reasoning time", None, "one per request that reasoned and answered: first answer "
                                                 "token − first reasoning token"),
)


def _row(name: str, block: Stats | None, value: Callable[[float | None], str]) -> list[str | Cell]:
    block = block if block is not None else Stats()
    return [name, fmt.count(block.count), *(value(getattr(block, k)) for k, _ in BLOCK_COLUMNS)]


def answer_table(summary: SummaryView, reasoning: Reasoning, tools: ToolCalls) -> Table:
    rows = [_row(name, summary.stats(key), fmt.ms) for key, name in TIMES]
    counts = {"reasoning_tokens": reasoning.reasoning_tokens, "answer_tokens": reasoning.answer_tokens,
              "calls_per_request": tools.calls_per_request}
    rows += [_row(name, counts[key], fmt.num) for key, name in COUNTS]
    sources = ", ".join(f"{k} {v}" for k, v in reasoning.reasoning_tokens_source.items()) or "none"
    note = (f"{fmt.count(reasoning.reasoned)} of {fmt.count(reasoning.requests)} measured successful "
            f"requests reasoned: {fmt.count(reasoning.reasoning_tokens_total)} reasoning and "
            f"{fmt.count(reasoning.answer_tokens_total)} answer tokens (reasoning counts from: {sources}). "
            f"{fmt.count(tools.calls)} tool calls by {fmt.count(tools.requests)} requests. TTFT counts "
            "the first thinking token; TTFO waits for the answer.")
    return Table("Reasoning and tool calls: exact statistics over the measured, successful requests",
                 ["figure", "samples", *(title for _, title in BLOCK_COLUMNS)], rows, note)


def answer_section(data: RunData) -> Section | None:
    reasoning, tools = data.view.reasoning, data.view.tool_calls
    if reasoning is None or tools is None:
        return None
    items: list[Item] = [answer_table(data.view, reasoning, tools)]
    items += [distribution_chart(data, *chart) for chart in CHARTS if chart[0] in data.samples]
    return Section("Reasoning and tool calls", items,
                   "Times in ms from the request's send; token counts per request (docs/metrics.md, reasoning and "
                   "tool calls).")
