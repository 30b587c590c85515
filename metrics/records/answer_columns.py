"""The frame's columns of reasoning and tool calls (docs/metrics.md#reasoning-and-tool-calls).

A record's reasoning and tool-call fields become one tuple per request while columns are built
(`answer_row`, from a RequestRecord or a records.jsonl line alike) and seven columns at the end
(`answer_fields`): the four stamps as float64 nanoseconds with NaN where absent (exact: a stamp stays
below 2^53 ns, 104 days), the reasoning count with NaN for "unknown" (never read as zero), its source,
and the number of tool calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

import numpy as np
import numpy.typing as npt

from metrics.records.record import RequestRecord
from metrics.records.record_check import RecordLine

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

# Record field → frame column, in the order of an answer row.
STAMPS: tuple[str, ...] = ("reasoning_ns", "answer_ns", "tool_call_ns", "tool_call_done_ns")
# the four stamps, reasoning_tokens, reasoning_tokens_source, tool_calls
AnswerRow = tuple[int | None, int | None, int | None, int | None, int | None, str | None, int]
_NONE: AnswerRow = (None, None, None, None, None, None, 0)


def answer_row(record: RequestRecord) -> AnswerRow:
    return (record.reasoning_ns, record.answer_ns, record.tool_call_ns, record.tool_call_done_ns,
            record.reasoning_tokens, record.reasoning_tokens_source, record.tool_calls)


class AnswerColumns(TypedDict):
    """The RequestFrame fields made from the answer rows."""

    reasoning_ns: FloatArray
    answer_ns: FloatArray
    tool_call_ns: FloatArray
    tool_call_done_ns: FloatArray
    reasoning_tokens: FloatArray
    reasoning_source: list[str | None]
    tool_calls: IntArray


def answer_row_of_line(line: RecordLine) -> AnswerRow:
    """The same from a decoded records.jsonl line (fields written before these existed are absent)."""
    return (line.get("reasoning_ns"), line.get("answer_ns"), line.get("tool_call_ns"), line.get("tool_call_done_ns"),
            line.get("reasoning_tokens"), line.get("reasoning_tokens_source"), line.get("tool_calls") or 0)


def answer_fields(rows: Sequence[AnswerRow | None]) -> AnswerColumns:
    """The RequestFrame keyword arguments of these rows (None: a request without any of these fields)."""
    full = [_NONE if r is None else r for r in rows]
    columns = list(zip(*full, strict=True)) if full else [()] * len(_NONE)
    return {
        "reasoning_ns": _floats(columns[0]), "answer_ns": _floats(columns[1]),
        "tool_call_ns": _floats(columns[2]), "tool_call_done_ns": _floats(columns[3]),
        "reasoning_tokens": _floats(columns[4]),
        "reasoning_source": list(columns[5]),
        "tool_calls": np.array([v or 0 for v in columns[6]], dtype=np.int64),
    }


def _floats(values: Sequence[int | None]) -> FloatArray:
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)
