"""records.jsonl → an Arrow table → RequestFrame, for `goodput report` on large runs.

Arrow's JSON reader parses the file in C++ on every core, and its list columns already are the CSR
layout the frame uses (flat values + offsets), so the 20 M chunk times of a 100k × 200 run never become
Python objects. The same table then writes records.parquet, so the file is parsed once for both.
The frame is identical to `frame_from_jsonl`'s, and the lines left out are the same, for the same
reasons (the tests hold them equal); records Arrow cannot type consistently make the reader fail, and
callers fall back to that slower path.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from metrics.records import arrow_columns as columns
from metrics.records.answer_columns import STAMPS
from metrics.records.arrow_check import check_decoded, damaged_rows
from metrics.records.frame import SERVER_PHASES, STATUS_CODES, RequestFrame, check_chunk_order
from metrics.records.line_index import LineIndex, index_lines
from metrics.records.record_check import InputReport, duplicate_id, line_problem

IntArray = npt.NDArray[np.int64]


def record_schema() -> Any:
    """Arrow types of the fixed record fields; `tags` and `server` are inferred (their keys vary by run)."""
    import pyarrow as pa

    i64, f64, text, flag = pa.int64(), pa.float64(), pa.string(), pa.bool_()
    return pa.schema([
        ("id", i64), ("intended_ns", i64), ("sent_ns", i64), ("status", text), ("error_kind", text),
        ("error_message", text), ("http_status", i64), ("chunk_ns", pa.list_(i64)),
        ("chunk_tokens", pa.list_(pa.int32())), ("token_source", text), ("output_tokens", i64),
        ("output_tokens_estimated", flag), ("prompt_tokens", i64), ("prompt_tokens_estimated", flag),
        ("prompt_tokens_target", i64), ("cached_tokens", i64), ("finish_reason", text),
        ("first_byte_ns", i64), ("closed_ns", i64), ("output_tokens_target", i64),
        ("server_chunk_s", pa.list_(f64)), ("worker", i64), ("session", i64), ("turn", i64),
        ("output_tokens_by_events", i64), ("output_tokens_by_tokenizer", i64), ("reasoning_ns", i64),
        ("answer_ns", i64), ("reasoning_tokens", i64), ("reasoning_tokens_source", text), ("tool_calls", i64),
        ("tool_call_ns", i64), ("tool_call_done_ns", i64), ("model", text), ("images", i64),
        ("image_pixels", i64), ("image_bytes", i64), ("cancel_at_ns", i64),
    ])


def read_records_table(path: str | Path) -> Any:
    """The records of a records.jsonl as an Arrow table (`read_records_checked` without its report)."""
    return read_records_checked(path)[0]


def read_records_checked(path: str | Path) -> tuple[Any, InputReport]:
    """The records of a records.jsonl as an Arrow table, and what reading it found: lines that are not
    records (metrics.records.record_check) are left out of the table and listed, as the line reader lists them.

    Raises pyarrow.ArrowException when the lines cannot be typed consistently, or when Arrow's parse
    cannot be matched line for line with the file (a line holding two objects, text that is not UTF-8):
    the line reader (metrics.records.jsonl) then reads the file instead.
    """
    import pyarrow as pa
    import pyarrow.json as pj

    path = Path(path)
    if _ends_with_newline(path):  # the usual case: numpy indexes the lines while Arrow parses the file itself
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="line-index") as pool:
            indexing = pool.submit(index_lines, path)
            table = pj.read_json(path, parse_options=_parse_options())
            index = indexing.result()
    else:  # empty, or no newline at the end: whether the last line is torn decides what Arrow is given
        index = index_lines(path)
        table = _parse_unterminated(path, index) if index.record_lines().size else record_schema().empty_table()
    numbers = index.record_lines()  # the line each row comes from
    if table.num_rows != numbers.size:
        raise pa.ArrowInvalid(f"{table.num_rows} rows from {numbers.size} lines: a line holds more than one value")
    check_decoded(table)
    report = InputReport(path.name, lines=index.lines, blank=int(index.blank.sum()),
                         torn_last_line=index.lines if index.torn else None)
    bad = damaged_rows(table)
    if bad.any():
        for number, raw in zip(numbers[bad].tolist(), index.read(path, numbers[bad]), strict=True):
            reason = line_problem(raw)
            if reason is None:  # the column checks and the line check disagree: let the line reader decide
                raise pa.ArrowInvalid(f"line {number}: refused by the column checks only")
            report.skip(number, reason)
        table = table.filter(pa.array(~bad))
        numbers = numbers[~bad]
    table = _drop_duplicates(table, numbers, report)
    report.records = table.num_rows
    return table, report


def _drop_duplicates(table: Any, numbers: npt.NDArray[np.int64], report: InputReport) -> Any:
    """The table without the records whose id an earlier record has (listed in `report`, in line order
    with the other skipped lines, as the line reader lists them)."""
    import pyarrow as pa

    if table.num_rows < 2:
        return table
    ids = table.column("id").to_numpy(zero_copy_only=False)
    _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    later = np.ones(ids.size, dtype=np.bool_)
    later[first] = False
    if not later.any():
        return table
    first_lines = numbers[first[inverse]]
    for number, rid, first_line in zip(numbers[later].tolist(), ids[later].tolist(), first_lines[later].tolist(),
                                       strict=True):
        report.skip(number, duplicate_id(rid, first_line))
    report.skipped.sort()
    return table.filter(pa.array(~later))


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as f:
        size = f.seek(0, 2)
        f.seek(max(size - 1, 0))
        return f.read(1) == b"\n"


def _parse_options() -> Any:
    import pyarrow.json as pj

    return pj.ParseOptions(explicit_schema=record_schema(), unexpected_field_behavior="infer")


def _parse_unterminated(path: Path, index: LineIndex) -> Any:
    """Keep a whole last line, leave a torn or blank one out (a copy of the file in memory: the case of a
    killed run only)."""
    import pyarrow as pa
    import pyarrow.json as pj

    data = path.read_bytes()
    cut = int(index.starts[-1])
    data = data[:cut] if index.torn or index.blank[-1] else data + b"\n"
    return pj.read_json(pa.BufferReader(data), parse_options=_parse_options())


def _ints(table: Any, name: str, fill: int) -> tuple[IntArray, npt.NDArray[np.bool_]]:
    values, valid = columns.numbers(table.column(name), np.int64, fill)
    return values, valid


def _floats(table: Any, name: str) -> npt.NDArray[np.float64]:
    return columns.numbers(table.column(name), np.float64, np.nan)[0]


def _bools(table: Any, name: str, default: bool) -> npt.NDArray[np.bool_]:
    return columns.numbers(table.column(name), np.bool_, default)[0]


def _lists(table: Any, name: str) -> tuple[npt.NDArray[Any], IntArray, npt.NDArray[np.bool_]]:
    """(flat values, per-row lengths with null = 0, per-row validity) of a list column."""
    try:
        return columns.lists(table.column(name))
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from None


def _per_chunk(values: npt.NDArray[Any], lengths: IntArray, valid: npt.NDArray[np.bool_], k: IntArray,
               fill: float, dtype: Any, ids: IntArray, what: str) -> npt.NDArray[Any]:
    """A per-chunk column from an optional list column that must match chunk_ns row by row."""
    bad = valid & (lengths != k)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"record {ids[i]}: {lengths[i]} {what} for {k[i]} chunk_ns")
    if valid[k > 0].all():  # every request with chunks has the list: the values are the column
        return np.asarray(values, dtype=dtype)
    out = np.full(int(k.sum()), fill, dtype=dtype)
    out[np.repeat(valid, k)] = values
    return out


def frame_from_table(table: Any) -> RequestFrame:
    ids, _ = _ints(table, "id", 0)
    statuses = table.column("status").to_pylist()
    codes = np.empty(len(statuses), dtype=np.int8)
    for i, status in enumerate(statuses):
        code = STATUS_CODES.get(status if status is not None else "ok")
        if code is None:
            raise ValueError(f"record {ids[i]}: unknown status {status!r} (expected ok, error or cancelled)")
        codes[i] = code
    chunk_ns, k, _ = _lists(table, "chunk_ns")
    chunk_ns = chunk_ns.astype(np.int64, copy=False)
    chunk_off = np.concatenate(([0], np.cumsum(k))).astype(np.int64)
    check_chunk_order(chunk_ns, chunk_off, ids.tolist())
    tok_values, tok_len, tokens_known = _lists(table, "chunk_tokens")
    chunk_tok = _per_chunk(tok_values, tok_len, tokens_known, k, 1, np.int32, ids, "chunk_tokens")
    del tok_values
    srv_values, srv_len, srv_valid = _lists(table, "server_chunk_s")
    has_server = srv_valid & (k > 0)
    server_s = _per_chunk(srv_values, srv_len, has_server, k, np.nan, np.float64, ids, "server_chunk_s") \
        if has_server.any() else np.zeros(0)
    output = _floats(table, "output_tokens")
    missing = np.isnan(output)
    output_estimated = _bools(table, "output_tokens_estimated", True) | missing
    if missing.any():  # a hand-made record without N: Σk_j, an estimate (as the other builders do)
        output[missing] = 0
        rows = np.flatnonzero(missing & (k > 0))
        if rows.size:  # rare: only such records pay for the cumulative sum
            csum = np.concatenate(([0], np.cumsum(chunk_tok, dtype=np.int64)))
            output[rows] = csum[chunk_off[rows + 1]] - csum[chunk_off[rows]]
    sent, has_sent = _ints(table, "sent_ns", -1)
    closed, has_closed = _ints(table, "closed_ns", -1)
    names = table.column_names
    return RequestFrame(
        ids=ids, intended_ns=_ints(table, "intended_ns", 0)[0], sent_ns=sent, has_sent=has_sent,
        closed_ns=closed, has_closed=has_closed, status=codes,
        error_kind=table.column("error_kind").to_pylist(),
        output_tokens=output, output_estimated=output_estimated,
        prompt_tokens=_floats(table, "prompt_tokens"),
        prompt_estimated=_bools(table, "prompt_tokens_estimated", True),
        prompt_target=_floats(table, "prompt_tokens_target"), cached_tokens=_floats(table, "cached_tokens"),
        token_source=[s if s is not None else "estimate" for s in table.column("token_source").to_pylist()],
        tokens_known=tokens_known, chunk_off=chunk_off, chunk_ns=chunk_ns, chunk_tok=chunk_tok,
        server_s=server_s, has_server=has_server,
        session=_floats(table, "session"), turn=_floats(table, "turn"),
        server_phases=_phases(table.column("server") if "server" in names else None, table.num_rows),
        tags=_tags(table.column("tags") if "tags" in names else None),
        error_message=table.column("error_message").to_pylist(), http_status=table.column("http_status").to_pylist(),
        finish_reason=table.column("finish_reason").to_pylist(), output_target=_floats(table, "output_tokens_target"),
        model=table.column("model").to_pylist() if "model" in names else [None] * table.num_rows,
        **{name: _floats(table, name) for name in STAMPS}, reasoning_tokens=_floats(table, "reasoning_tokens"),
        reasoning_source=table.column("reasoning_tokens_source").to_pylist(),
        tool_calls=_ints(table, "tool_calls", 0)[0],
        images=np.nan_to_num(_floats(table, "images")),
    )


def _phases(column: Any, n: int) -> dict[str, npt.NDArray[np.float64]]:
    import pyarrow as pa

    out = {p: np.full(n, np.nan) for p in SERVER_PHASES}
    if column is None or not pa.types.is_struct(column.type):
        return out
    fields = columns.struct_fields(column)
    for phase in SERVER_PHASES:
        index = column.type.get_field_index(phase)
        if index >= 0 and (pa.types.is_integer(column.type[index].type) or pa.types.is_floating(column.type[index].type)):
            chunks = pa.chunked_array(fields[phase], type=column.type[index].type)
            out[phase] = columns.numbers(chunks, np.float64, np.nan)[0]
    return out


def _tags(column: Any) -> dict[str, list[str | None]]:
    """Each tag's value per request; a tag no request sets is left out (as Columns leaves it out)."""
    import pyarrow as pa

    if column is None or not pa.types.is_struct(column.type):
        return {}
    out = {}
    for key, chunks in sorted(columns.struct_fields(column).items()):
        values = pa.chunked_array(chunks, type=column.type.field(key).type)
        if values.null_count < len(values):
            out[key] = [None if v is None else str(v) for v in values.to_pylist()]
    return out
