"""Reasoning and tool-call figures in summary.json (docs/metrics.md#reasoning-and-tool-calls).

They appear only in a run where some request reasoned or called a tool, or that was given a TTFO SLO
(`shown`); every other run's summary is exactly what it was before they existed. Then:

- `latency` gains `ttfo_s`, `reasoning_time_s`, `tool_call_s` and `tool_call_done_s` (blocks in seconds,
  per bucket too, like every latency block);
- a `reasoning` section: how many measured successful requests reasoned, the reasoning and answer tokens
  in all and per request (`reasoning_tokens`, `answer_tokens` blocks), and where the reasoning counts came
  from (`reasoning_tokens_source`, as `tokens.token_source` does for N);
- a `tool_calls` section: requests that called a tool, calls in all, turns that ended in a call, and the
  calls per request (`calls_per_request` block, requests without a call included as 0).

Each bucket gains `reasoning` and `tool_calls` holding the same blocks over its requests.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from metrics.latency import answer
from metrics.records import RequestFrame
from metrics.slo import SLO

BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]
if TYPE_CHECKING:  # a run imports this module before its first request; the blocks are made after its last
    from metrics.results import Reasoning, Stats, ToolCalls

    Rows = list[list[Stats]]  # a metric's blocks: [[whole run], then one row per bucket dimension]

# Sample set → its formula; the section of summary.json (and of each bucket) that holds its blocks.
FORMULAS: dict[str, Callable[[RequestFrame], FloatArray]] = {
    "ttfo_s": answer.ttfo_s,
    "reasoning_time_s": answer.reasoning_time_s,
    "tool_call_s": answer.tool_call_s,
    "tool_call_done_s": answer.tool_call_done_s,
    "reasoning_tokens": answer.reasoning_tokens,
    "answer_tokens": answer.answer_tokens,
    "calls_per_request": answer.tool_calls,
}
SECTIONS: dict[str, str] = {
    "ttfo_s": "latency", "reasoning_time_s": "latency", "tool_call_s": "latency", "tool_call_done_s": "latency",
    "reasoning_tokens": "reasoning", "answer_tokens": "reasoning", "calls_per_request": "tool_calls",
}


def shown(frame: RequestFrame, slo: SLO) -> bool:
    """Whether the run's outputs carry these figures."""
    return slo.ttfo_s is not None or answer.shows_answer_figures(frame)


def answer_values(frame: RequestFrame) -> dict[str, FloatArray]:
    """Every figure of every request (NaN where undefined)."""
    return {name: formula(frame) for name, formula in FORMULAS.items()}


def split_blocks(blocks: dict[str, Rows]) -> dict[str, Rows]:
    """Take the blocks of the `reasoning` and `tool_calls` sections out of `blocks` (the latency ones stay)."""
    return {name: blocks.pop(name) for name in list(blocks) if SECTIONS.get(name, "latency") != "latency"}


def _section_blocks(own: dict[str, Rows], section: str, d: int, code: int) -> dict[str, Stats]:
    return {name: rows[d][code] for name, rows in own.items() if SECTIONS[name] == section}


def answer_sections(frame: RequestFrame, sampled: BoolArray,
                    own: dict[str, Rows]) -> tuple[Reasoning | None, ToolCalls | None]:
    """The `reasoning` and `tool_calls` sections over the sampled requests, or neither when not shown (`own`,
    from `split_blocks`, is empty then)."""
    if not own:
        return None, None
    from metrics.results import Reasoning, ToolCalls

    reasoning = frame.reasoning_tokens[sampled]
    known = ~np.isnan(reasoning)
    answers = answer.answer_tokens(frame)[sampled]
    sources = Counter(src for src, keep in zip(frame.reasoning_source, sampled.tolist(), strict=True)
                      if keep and src is not None)
    calls = frame.tool_calls[sampled]
    blocks = _section_blocks(own, "reasoning", 0, 0)
    reasoning_section = Reasoning(
        requests=int(sampled.sum()),
        reasoned=int((answer.reasoned(frame) & sampled).sum()),
        reasoning_tokens_known=int(known.sum()),
        reasoning_tokens_total=int(reasoning[known].sum()) if known.any() else None,  # unknown is not 0
        answer_tokens_total=int(np.nansum(answers)) if known.any() else None,
        reasoning_tokens_source=dict(sorted(sources.items())),
        reasoning_tokens=blocks.get("reasoning_tokens"),
        answer_tokens=blocks.get("answer_tokens"),
    )
    tool_calls = ToolCalls(
        requests=int((calls > 0).sum()),
        calls=int(calls.sum()),
        ended_in_tool_call=int((answer.ended_in_tool_call(frame) & sampled).sum()),
        calls_per_request=_section_blocks(own, "tool_calls", 0, 0).get("calls_per_request"),
    )
    return reasoning_section, tool_calls


def bucket_sections(own: dict[str, Rows], d: int, code: int) -> dict[str, dict[str, Stats]]:
    """A bucket's `reasoning` and `tool_calls` blocks (none when not shown): label `code` of the blocks' row `d`
    (the bucket dimensions' rows start at 1)."""
    if not own:
        return {}
    return {section: _section_blocks(own, section, d, code) for section in ("reasoning", "tool_calls")}
