"""Production traces: when each request arrived and how long its prompt and answer were.

Formats (`--trace-format auto` picks by content):
- `mooncake`: JSON lines `{"timestamp": ms, "input_length": n, "output_length": n, "hash_ids": [...]}`;
  each hash id stands for one block of MOONCAKE_BLOCK_TOKENS prompt tokens, and two requests holding the
  same id at the same position share those tokens (the trace's record of prefix reuse). An optional
  `"model"` names the model that row's request asks for (loadgen.workload.models).
- `azure`: the Azure LLM inference trace CSV (`TIMESTAMP` as a date-time, `ContextTokens`,
  `GeneratedTokens`); no reuse information.
- `burstgpt`: the BurstGPT CSV (`Timestamp` in seconds, `Request tokens`, `Response tokens`, optional
  `Model`, `Log Type`); no reuse information.

A file that fits no format is refused with the columns (or keys) it has; a malformed line is refused
with its line number, as is a length over MAX_TOKENS or a timestamp more than MAX_HORIZON_S from the
trace's start (loadgen.workload.bounds). Text from the file is quoted with its control characters
escaped (loadgen.quoting). Parsed traces are kept per file (path, size, modification time), so the run can
build its workload twice (before and after sizing prompts against the server) at the cost of one read.
"""

from __future__ import annotations

import csv
import functools
import io
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from loadgen.quoting import printable, quoted
from loadgen.workload.bounds import MAX_HORIZON_S, check_tokens
from loadgen.workload.models import row_model

TRACE_FORMATS = ("auto", "mooncake", "azure", "burstgpt")
MOONCAKE_BLOCK_TOKENS = 512
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

_MOONCAKE_KEYS = ("timestamp", "input_length", "output_length")
_CSV_COLUMNS = {
    "azure": ("TIMESTAMP", "ContextTokens", "GeneratedTokens"),
    "burstgpt": ("Timestamp", "Request tokens", "Response tokens"),
}
_NEEDS = ("mooncake needs JSON lines with timestamp, input_length, output_length (and hash_ids); "
          "azure needs TIMESTAMP, ContextTokens, GeneratedTokens; burstgpt needs Timestamp, Request tokens, "
          "Response tokens")


@dataclass(frozen=True, slots=True)
class Trace:
    """A trace's requests in arrival order (sorted by time, stable)."""

    path: str
    format: str
    arrival_s: FloatArray  # seconds on the trace's own clock
    input_tokens: IntArray
    output_tokens: IntArray
    hash_off: IntArray | None = None  # Mooncake: request i's block ids are hash_ids[hash_off[i]:hash_off[i+1]]
    hash_ids: IntArray | None = None
    block_tokens: int = MOONCAKE_BLOCK_TOKENS
    lines: IntArray | None = None  # each request's line in the file (for messages about it)
    models: tuple[str | None, ...] | None = None  # Mooncake: a row's own `model` (None: the run's)

    @property
    def n(self) -> int:
        return int(self.arrival_s.shape[0])

    def where(self, row: int) -> str:
        """`PATH:LINE` of request `row`, for a message about it."""
        return f"{self.path}:{int(self.lines[row])}" if self.lines is not None else f"{self.path} (request {row + 1})"

    def blocks(self, row: int) -> IntArray | None:
        if self.hash_ids is None or self.hash_off is None:
            return None
        return self.hash_ids[self.hash_off[row]: self.hash_off[row + 1]]


def load_trace(path: str, fmt: str = "auto") -> Trace:
    """Read a trace; ValueError (one line, naming the file and line) for anything wrong with it."""
    if fmt not in TRACE_FORMATS:
        raise ValueError(f"unknown --trace-format {fmt!r}; choose {', '.join(TRACE_FORMATS)}")
    try:
        st = os.stat(path)
    except OSError as exc:
        raise ValueError(f"cannot read trace {printable(path, 1000)}: {exc.strerror or exc}") from None
    return _load_cached(str(Path(path).resolve()), fmt, st.st_size, st.st_mtime_ns, printable(path, 1000))


@functools.lru_cache(maxsize=2)
def _load_cached(resolved: str, fmt: str, _size: int, _mtime_ns: int, shown: str) -> Trace:
    try:
        data = Path(resolved).read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read trace {shown}: {exc.strerror or exc}") from None
    if fmt == "auto":
        fmt = detect_format(data, shown)
    trace = _mooncake(data, shown) if fmt == "mooncake" else _csv_trace(data, shown, fmt)
    if trace.n == 0:
        raise ValueError(f"{shown}: the trace holds no requests")
    return _sorted(trace)


def _first_line(data: bytes) -> tuple[int, bytes]:
    for number, line in enumerate(data.splitlines(), start=1):
        if line.strip():
            return number, line.strip()
    return 0, b""


def detect_format(data: bytes, shown: str) -> str:
    """The format a file's first non-blank line says it is in; ValueError naming what was found."""
    number, line = _first_line(data.lstrip(b"\xef\xbb\xbf"))
    if not line:
        raise ValueError(f"{shown}: the trace is empty")
    if line.startswith(b"{"):
        try:
            first = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise ValueError(f"{shown}:{number}: not valid JSON") from None
        keys = sorted(first) if isinstance(first, dict) else []
        if all(k in keys for k in _MOONCAKE_KEYS):
            return "mooncake"
        raise ValueError(f"{shown}: fits no trace format; keys found: {_names(keys)} ({_NEEDS})")
    header = _header(line)
    for fmt, needed in _CSV_COLUMNS.items():
        if all(c in header for c in needed):
            return fmt
    raise ValueError(f"{shown}: fits no trace format; columns found: {_names(header)} ({_NEEDS})")


def _names(names: list[str]) -> str:
    """Keys or columns found in a file, for an error line: escaped, and not too many."""
    shown = [printable(str(n), 40) for n in names[:20]]
    return ", ".join(shown) + (f", … ({len(names)} in all)" if len(names) > 20 else "") if shown else "(none)"


def _header(line: bytes) -> list[str]:
    text = line.decode("utf-8", "replace")
    try:
        return [c.strip() for c in next(csv.reader([text]), [])]
    except csv.Error:
        return []


def _count(value: Any, where: str, name: str, *, minimum: int) -> int:
    if (isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value)
            or value != int(value) or value < minimum):
        raise ValueError(f"{where}: {name} must be an integer >= {minimum}, got {quoted(value)}")
    check_tokens(value, where, name)
    return int(value)


def _within_horizon(seconds: float, where: str, text: Any, *, since: float = 0.0) -> float:
    """A timestamp (seconds) no further than MAX_HORIZON_S from `since` (the trace's start)."""
    if abs(seconds - since) > MAX_HORIZON_S:
        raise ValueError(f"{where}: timestamp {quoted(text)} lies more than {MAX_HORIZON_S / 86_400:.0f} days "
                         "from the trace's start")
    return seconds


def _mooncake(data: bytes, shown: str) -> Trace:
    arrival: list[float] = []
    inputs: list[int] = []
    outputs: list[int] = []
    ids: list[int] = []
    off = [0]
    lines: list[int] = []
    models: list[str | None] = []
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{shown}:{number}"
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise ValueError(f"{where}: not valid JSON") from None
        if not isinstance(row, dict):
            raise ValueError(f"{where}: each line must be a JSON object")
        missing = [k for k in _MOONCAKE_KEYS if k not in row]
        if missing:
            raise ValueError(f"{where}: missing {', '.join(missing)} (keys found: {_names(sorted(row))})")
        stamp = row["timestamp"]
        if isinstance(stamp, bool) or not isinstance(stamp, int | float) or not np.isfinite(stamp):
            raise ValueError(f"{where}: timestamp must be a number of milliseconds, got {quoted(stamp)}")
        arrival.append(_within_horizon(float(stamp) / 1000.0, where, stamp))
        inputs.append(_count(row["input_length"], where, "input_length", minimum=1))
        outputs.append(_count(row["output_length"], where, "output_length", minimum=0))
        hashes = row.get("hash_ids", [])
        if not isinstance(hashes, list) or not all(type(h) is int and 0 <= h < 2**63 for h in hashes):
            raise ValueError(f"{where}: hash_ids must be a list of non-negative 64-bit integers")
        ids.extend(hashes)
        off.append(len(ids))
        lines.append(number)
        models.append(row_model(row.get("model"), where))
    return Trace(shown, "mooncake", np.array(arrival, dtype=np.float64), np.array(inputs, dtype=np.int64),
                 np.array(outputs, dtype=np.int64), np.array(off, dtype=np.int64), np.array(ids, dtype=np.int64),
                 lines=np.array(lines, dtype=np.int64), models=tuple(models) if any(models) else None)


def _csv_trace(data: bytes, shown: str, fmt: str) -> Trace:
    text = data.decode("utf-8-sig", "replace")
    reader = csv.reader(io.StringIO(text))
    rows = _csv_rows(reader, shown)
    header: list[str] = []
    for row in rows:
        if any(c.strip() for c in row):
            header = [c.strip() for c in row]
            break
    t_col, in_col, out_col = _CSV_COLUMNS[fmt]
    missing = [c for c in (t_col, in_col, out_col) if c not in header]
    if missing:
        raise ValueError(f"{shown}: not a {fmt} trace: missing column(s) {', '.join(missing)}; "
                         f"columns found: {_names(header)}")
    ti, ii, oi = header.index(t_col), header.index(in_col), header.index(out_col)
    parse_time = _azure_time if fmt == "azure" else _seconds
    arrival: list[float] = []
    inputs: list[int] = []
    outputs: list[int] = []
    lines: list[int] = []
    width = max(ti, ii, oi) + 1
    for row in rows:
        if not any(c.strip() for c in row):
            continue
        where = f"{shown}:{reader.line_num}"
        if len(row) < width:
            raise ValueError(f"{where}: {len(row)} columns, the header has {len(header)}")
        stamp = parse_time(row[ti].strip(), where)
        # Azure stamps are dates: the horizon is measured from the first request; the others are offsets.
        since = (arrival[0] if arrival else stamp) if fmt == "azure" else 0.0
        arrival.append(_within_horizon(stamp, where, row[ti].strip(), since=since))
        lines.append(reader.line_num)
        # BurstGPT logs failed requests with 0 response tokens: one token keeps them a valid request.
        inputs.append(max(1, _int_cell(row[ii], where, in_col)))
        outputs.append(max(1, _int_cell(row[oi], where, out_col)))
    return Trace(shown, fmt, np.array(arrival, dtype=np.float64), np.array(inputs, dtype=np.int64),
                 np.array(outputs, dtype=np.int64), lines=np.array(lines, dtype=np.int64))


def _csv_rows(reader: Any, shown: str) -> Iterator[list[str]]:
    """The reader's rows; ValueError naming the line the csv module cannot read (a field over its size
    limit, a stray quote in strict mode)."""
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise ValueError(f"{shown}:{reader.line_num}: not readable as CSV ({exc})") from None
        yield row


def _int_cell(text: str, where: str, name: str) -> int:
    try:
        value = float(text.strip())
    except ValueError:
        raise ValueError(f"{where}: {name} is not a number: {quoted(text.strip())}") from None
    return _count(value, where, name, minimum=0)


def _seconds(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{where}: the timestamp is not a number of seconds: {quoted(text)}") from None
    if not np.isfinite(value):
        raise ValueError(f"{where}: the timestamp is not finite: {quoted(text)}")
    return value


def _azure_time(text: str, where: str) -> float:
    """`2023-11-16 18:15:46.6805900` (seven fractional digits in the published trace) → POSIX seconds
    (UTC when the text names no zone)."""
    import re
    from datetime import UTC

    # Python reads at most six fractional digits: the seventh (100 ns) is below any dispatch precision.
    cleaned = re.sub(r"(\.\d{6})\d+", r"\1", text)
    try:
        stamp = datetime.fromisoformat(cleaned)
    except ValueError:
        raise ValueError(f"{where}: TIMESTAMP is not a date-time (YYYY-MM-DD HH:MM:SS[.fff]): {quoted(text)}") from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp.timestamp()


def _sorted(trace: Trace) -> Trace:
    order = np.argsort(trace.arrival_s, kind="stable")
    if np.array_equal(order, np.arange(trace.n)):
        return trace
    hash_off, hash_ids = trace.hash_off, trace.hash_ids
    if hash_off is not None and hash_ids is not None:
        lengths = np.diff(hash_off)[order]
        pieces = [hash_ids[hash_off[i]: hash_off[i + 1]] for i in order.tolist()]
        hash_ids = np.concatenate(pieces) if pieces else hash_ids
        hash_off = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    lines = trace.lines[order] if trace.lines is not None else None
    models = tuple(trace.models[i] for i in order.tolist()) if trace.models is not None else None
    return Trace(trace.path, trace.format, trace.arrival_s[order], trace.input_tokens[order],
                 trace.output_tokens[order], hash_off, hash_ids, trace.block_tokens, lines, models)
