"""The frame's columns of reasoning and tool calls (docs/metrics.md#reasoning-and-tool-calls).

A record's reasoning and tool-call fields become one tuple per request while columns are built
(`answer_row`, from a RequestRecord or a records.jsonl line alike) and seven columns at the end
(`answer_fields`): the four stamps as float64 nanoseconds with NaN where absent (exact: a stamp stays
below 2^53 ns, 104 days), the reasoning count with NaN for "unknown" (never read as zero), its source,
and the number of tool calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from metrics.records.record import RequestRecord

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

# Record field → frame column, in the order of an answer row.
STAMPS: tuple[str, ...] = ("reasoning_ns", "answer_ns", "tool_call_ns", "tool_call_done_ns")
AnswerRow = tuple[Any, ...]  # the four stamps, reasoning_tokens, reasoning_tokens_source, tool_calls
_NONE: AnswerRow = (None, None, None, None, None, None, 0)


def answer_row(record: RequestRecord) -> AnswerRow:
    return (record.reasoning_ns, record.answer_ns, record.tool_call_ns, record.tool_call_done_ns,
            record.reasoning_tokens, record.reasoning_tokens_source, record.tool_calls)


def answer_row_of_line(line: Mapping[str, Any]) -> AnswerRow:
    """The same from a decoded records.jsonl line (fields written before these existed are absent)."""
    return (line.get("reasoning_ns"), line.get("answer_ns"), line.get("tool_call_ns"), line.get("tool_call_done_ns"),
            line.get("reasoning_tokens"), line.get("reasoning_tokens_source"), line.get("tool_calls") or 0)


def answer_fields(rows: Sequence[AnswerRow | None]) -> dict[str, Any]:
    """The RequestFrame keyword arguments of these rows (None: a request without any of these fields)."""
    full = [_NONE if r is None else r for r in rows]
    columns = list(zip(*full, strict=True)) if full else [()] * len(_NONE)
    out: dict[str, Any] = {name: _floats(columns[i]) for i, name in enumerate(STAMPS)}
    out["reasoning_tokens"] = _floats(columns[4])
    out["reasoning_source"] = list(columns[5])
    out["tool_calls"] = np.array([v or 0 for v in columns[6]], dtype=np.int64)
    return out


def _floats(values: Sequence[int | None]) -> FloatArray:
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)
