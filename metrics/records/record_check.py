"""Which lines of a records.jsonl are records: the one definition both readers apply (the Arrow reader in
metrics.records.frame_arrow and the line-by-line reader in metrics.records.jsonl), and the account of what they left out.

A line is a record when it is a JSON object in which
- `id` and `intended_ns` are integers and `status` is "ok", "error" or "cancelled" (all three required;
  null counts as missing);
- every other field goodput writes is absent, null, or of its type: integers (64-bit; `chunk_tokens`
  items 32-bit), strings, true/false, `chunk_ns` / `chunk_tokens` lists of integers, `server_chunk_s` a
  list of numbers, `tags` an object of strings (or nulls), `server` an object;
- `chunk_tokens` has one count per `chunk_ns` entry, and so has `server_chunk_s` when there are chunks;
- `chunk_ns` never goes backwards.
Fields goodput does not write are ignored, whatever they hold. A wrong type in an optional field makes the
whole line unusable rather than nulling the field: goodput never writes one, so such a line was damaged
or edited, and none of its fields can be trusted.

A request has one record, so a record whose `id` an earlier record of the file already has is damage too
(a file concatenated with itself, lines copied twice): the first stays, each later one is skipped, so no
request is counted twice.

Blank lines (spaces, tabs, CR only) are neither records nor damage. The last line of a file, when it has
no newline and is not JSON, is a torn line: a run killed mid-write (SIGKILL, power loss) leaves one, so it
is reported on its own and not counted as skipped. Every other line that is not a record is skipped and
counted, with its 1-based line number and the first reason found.
"""

from __future__ import annotations

import json
import operator
from dataclasses import dataclass, field
from typing import Any, Required, TypedDict, TypeGuard

import orjson

from metrics.records.record import Status
from metrics.results import Json, JsonObject

NOT_JSON = "not valid JSON"
NOT_OBJECT = "not a JSON object"
STATUSES = ("ok", "error", "cancelled")
REQUIRED = ("id", "intended_ns", "status")
INT64_FIELDS = (
    "id", "intended_ns", "sent_ns", "http_status", "output_tokens", "prompt_tokens", "prompt_tokens_target",
    "cached_tokens", "first_byte_ns", "closed_ns", "output_tokens_target", "worker", "session", "turn",
    "output_tokens_by_events", "output_tokens_by_tokenizer", "reasoning_ns", "answer_ns", "reasoning_tokens",
    "tool_calls", "tool_call_ns", "tool_call_done_ns", "images", "image_pixels", "image_bytes", "cancel_at_ns",
)
STRING_FIELDS = (
    "status", "error_kind", "error_message", "token_source", "finish_reason", "reasoning_tokens_source", "model",
)
BOOL_FIELDS = ("output_tokens_estimated", "prompt_tokens_estimated")
LIST_FIELDS = ("chunk_ns", "chunk_tokens", "server_chunk_s")
OBJECT_FIELDS = ("tags", "server")
SHOWN_SKIPPED = 10  # skipped lines listed in summary.json (all of them are counted)
BLANK = b" \t\r\n"

_INT64 = (-(2**63), 2**63 - 1)
_INT32 = (-(2**31), 2**31 - 1)
_INTS = frozenset({int})
_NUMBERS = frozenset({int, float})


class RecordLine(TypedDict, total=False):
    """A line that `record_problem` found to be a record: the fields below hold these types or null (or are
    absent); fields goodput does not write may be there too, unread. The keys are RequestRecord's."""

    id: Required[int]
    intended_ns: Required[int]
    status: Required[Status]
    sent_ns: int | None
    http_status: int | None
    output_tokens: int | None
    prompt_tokens: int | None
    prompt_tokens_target: int | None
    cached_tokens: int | None
    first_byte_ns: int | None
    closed_ns: int | None
    output_tokens_target: int | None
    worker: int | None
    session: int | None
    turn: int | None
    output_tokens_by_events: int | None
    output_tokens_by_tokenizer: int | None
    reasoning_ns: int | None
    answer_ns: int | None
    reasoning_tokens: int | None
    tool_calls: int | None
    tool_call_ns: int | None
    tool_call_done_ns: int | None
    images: int | None
    image_pixels: int | None
    image_bytes: int | None
    cancel_at_ns: int | None
    error_kind: str | None
    error_message: str | None
    token_source: str | None
    finish_reason: str | None
    reasoning_tokens_source: str | None
    model: str | None
    output_tokens_estimated: bool | None
    prompt_tokens_estimated: bool | None
    chunk_ns: list[int] | None
    chunk_tokens: list[int] | None
    server_chunk_s: list[float] | None
    tags: dict[str, str | None] | None
    server: JsonObject | None  # the server's own figures as it sent them (RequestRecord.server)


class SkippedLine(TypedDict):
    line: int
    reason: str


class InputSection(TypedDict):
    """summary.json's `input`."""

    records_file: str
    lines: int
    records: int
    blank_lines: int
    skipped: int
    skipped_lines: list[SkippedLine]
    torn_last_line: int | None


@dataclass(slots=True)
class InputReport:
    """What reading a records.jsonl found: `lines` = `records` + skipped + `blank` (+ 1 for a torn last line)."""

    records_file: str
    lines: int = 0
    records: int = 0
    blank: int = 0
    skipped: list[tuple[int, str]] = field(default_factory=list)  # (1-based line number, reason), every one
    torn_last_line: int | None = None  # its line number

    def skip(self, line: int, reason: str) -> None:
        self.skipped.append((line, reason))

    def to_json(self) -> InputSection:
        """The `input` section of summary.json."""
        return {
            "records_file": self.records_file,
            "lines": self.lines,
            "records": self.records,
            "blank_lines": self.blank,
            "skipped": len(self.skipped),
            "skipped_lines": [{"line": line, "reason": reason} for line, reason in self.skipped[:SHOWN_SKIPPED]],
            "torn_last_line": self.torn_last_line,
        }


def duplicate_id(rid: int, first_line: int) -> str:
    """The reason a record is skipped when an earlier line holds its request."""
    return f"duplicate id {rid} (first on line {first_line})"


def is_blank(raw: bytes) -> bool:
    return not raw.strip(BLANK)


def decode(raw: bytes) -> Any:
    """One line as JSON. Raises ValueError when it is not JSON.

    orjson first; what it refuses, the standard library gets a second look at, so that the few spellings
    Arrow also reads (NaN, Infinity) do not make the two readers disagree. What orjson could not write
    back (a lone surrogate) stays refused, as orjson and Arrow refuse it.
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    try:
        data = json.loads(raw.decode("utf-8"))
        orjson.dumps(data)
    except (ValueError, RecursionError, orjson.JSONEncodeError):  # UnicodeDecodeError is a ValueError
        raise ValueError(NOT_JSON) from None
    return data


def line_problem(raw: bytes) -> str | None:
    """Why one (non-blank) line is not a record, or None when it is one."""
    try:
        data = decode(raw)
    except ValueError:
        return NOT_JSON
    return record_problem(data)


def record_problem(data: Any) -> str | None:
    """Why a decoded line is not a record, or None when it is one (checks in a fixed order, first failure)."""
    if not isinstance(data, dict):
        return NOT_OBJECT
    for name in REQUIRED:
        if data.get(name) is None:
            return f"{name} is missing or null"
    for name in INT64_FIELDS:
        if not _is_int(data.get(name), _INT64):
            return f"{name} is not an integer"
    for name in STRING_FIELDS:
        value = data.get(name)
        if value is not None and type(value) is not str:
            return f"{name} is not a string"
    for name in BOOL_FIELDS:
        value = data.get(name)
        if value is not None and type(value) is not bool:
            return f"{name} is not true or false"
    if data["status"] not in STATUSES:
        return "status is not ok, error or cancelled"
    return _lists_problem(data) or _objects_problem(data)


def _is_int(value: Any, bounds: tuple[int, int]) -> bool:
    return value is None or (type(value) is int and bounds[0] <= value <= bounds[1])


def _ints(value: Json) -> TypeGuard[list[int]]:
    """A list of integers (a bool is not one)."""
    return type(value) is list and set(map(type, value)) <= _INTS


def _numbers(value: Json) -> TypeGuard[list[int | float]]:
    """A list of numbers (a bool is not one)."""
    return type(value) is list and set(map(type, value)) <= _NUMBERS


def _lists_problem(data: JsonObject) -> str | None:
    chunks, tokens, server = (data.get(name) for name in LIST_FIELDS)
    if chunks is not None:
        if not _ints(chunks):
            return "chunk_ns is not a list of integers"
        if not all(map(operator.le, chunks, chunks[1:])):
            return "chunk_ns goes backwards"
        if chunks and not (_INT64[0] <= chunks[0] and chunks[-1] <= _INT64[1]):  # in order: the ends bound it
            return "chunk_ns is not a list of integers"
    if tokens is not None:
        if not _ints(tokens) or (tokens and not (_INT32[0] <= min(tokens) and max(tokens) <= _INT32[1])):
            return "chunk_tokens is not a list of integers"
        if len(tokens) != len(chunks or ()):
            return "chunk_tokens and chunk_ns differ in length"
    if server is not None:
        if not _numbers(server):
            return "server_chunk_s is not a list of numbers"
        if chunks and len(server) != len(chunks):
            return "server_chunk_s and chunk_ns differ in length"
    return None


def _objects_problem(data: JsonObject) -> str | None:
    tags, server = (data.get(name) for name in OBJECT_FIELDS)
    if tags is not None and not (type(tags) is dict and all(v is None or type(v) is str for v in tags.values())):
        return "tags is not an object of strings"
    if server is not None and type(server) is not dict:
        return "server is not an object"
    return None

