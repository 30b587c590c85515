"""Per-request figures of reasoning models and tool calls (docs/metrics.md#reasoning-and-tool-calls),
vectorised over a RequestFrame like metrics.latency.derive: one value per request, NaN where the figure
is undefined for it.

Stamps (on the run's one clock, like d and c_j): r = `reasoning_ns` (first reasoning delta),
o = `answer_ns` (first answer text or tool-call delta), t = `tool_call_ns` (first tool-call delta),
u = `tool_call_done_ns` (the first call's arguments complete). R = `reasoning_tokens`, N = `output_tokens`.
TTFT keeps its meaning (c_1 − d: the first output of any kind, reasoning included).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from metrics.latency import derive
from metrics.records import RequestFrame
from metrics.units import NS_PER_S

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

# Finish reasons of a request that ended by calling a tool (chat `tool_calls`, Messages `tool_use`).
TOOL_FINISH_REASONS: frozenset[str] = frozenset({"tool_calls", "tool_use", "function_call"})


def _sent(frame: RequestFrame) -> FloatArray:
    return np.where(frame.has_sent, frame.sent_ns.astype(np.float64), np.nan)


def first_answer_ns(frame: RequestFrame) -> FloatArray:
    """o per request: the `answer_ns` stamp; for a request without it that streamed no reasoning (records
    of an API without reasoning, or written before the stamp existed), c_1, since its every content chunk
    is answer; NaN when the request never answered."""
    streamed_answer_only = np.isnan(frame.answer_ns) & np.isnan(frame.reasoning_ns) & derive.has_content(frame)
    return np.where(streamed_answer_only, derive.first_chunk_ns(frame).astype(np.float64), frame.answer_ns)


def ttfo_s(frame: RequestFrame) -> FloatArray:
    """TTFO = o − d: from the send to the first answer token or tool call (reasoning not counted)."""
    return (first_answer_ns(frame) - _sent(frame)) / NS_PER_S


def reasoning_time_s(frame: RequestFrame) -> FloatArray:
    """Reasoning time = o − r: from the first reasoning token to the first answer token (both needed)."""
    return (frame.answer_ns - frame.reasoning_ns) / NS_PER_S


def reasoning_tokens(frame: RequestFrame) -> FloatArray:
    """R: the server's `reasoning_tokens` detail, else the client's count (NaN: unknown)."""
    return frame.reasoning_tokens.copy()


def answer_tokens(frame: RequestFrame) -> FloatArray:
    """N − R: output tokens that were not reasoning. NaN when R or N is unknown, and when a counted R
    exceeds N (the two counts disagree; no figure is better than a negative one)."""
    answer = frame.output_tokens - frame.reasoning_tokens
    return np.where(answer < 0, np.nan, answer)


def tool_calls(frame: RequestFrame) -> FloatArray:
    """Tool calls the request made (0 included)."""
    return frame.tool_calls.astype(np.float64)


def tool_call_s(frame: RequestFrame) -> FloatArray:
    """Time to the first tool-call delta = t − d."""
    return (frame.tool_call_ns - _sent(frame)) / NS_PER_S


def tool_call_done_s(frame: RequestFrame) -> FloatArray:
    """Time to the complete call = u − d: the first call's arguments closed."""
    return (frame.tool_call_done_ns - _sent(frame)) / NS_PER_S


def reasoned(frame: RequestFrame) -> BoolArray:
    """The request streamed reasoning, or the server counted reasoning tokens for it."""
    return ~np.isnan(frame.reasoning_ns) | (frame.reasoning_tokens > 0)  # NaN compares False


def ended_in_tool_call(frame: RequestFrame) -> BoolArray:
    """The request's answer was a tool call: a tool-call finish reason, or at least one call made."""
    by_reason = np.fromiter((f in TOOL_FINISH_REASONS for f in frame.finish_reason), np.bool_, frame.n)
    return by_reason | (frame.tool_calls > 0)


def shows_answer_figures(frame: RequestFrame) -> bool:
    """Whether a run's outputs carry these figures: some request reasoned or called a tool. Other runs'
    outputs are exactly what they were before these figures existed."""
    if frame.n == 0 or frame.answer_ns.shape[0] != frame.n:
        return False
    if reasoned(frame).any() or (frame.tool_calls > 0).any() or (~np.isnan(frame.tool_call_ns)).any():
        return True
    return not TOOL_FINISH_REASONS.isdisjoint(frame.finish_reason)  # no per-request array: the common case
