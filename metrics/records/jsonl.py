"""records.jsonl → RequestFrame without RequestRecord objects, line by line (the reader for files Arrow
cannot type; metrics.records.frame_arrow reads the others).

Each line is decoded by orjson and goes straight into the frame's column builder; no RequestRecord is
made, and chunk lists are copied into flat numpy buffers as they are read, so memory holds one line's
Python objects at a time instead of 20 M Python ints. Lines that are not records (metrics.records.record_check)
are skipped and accounted for in an InputReport; a torn last line is reported apart.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO, TypeVar

from metrics.collector import gc_paused
from metrics.records.answer_columns import answer_row_of_line
from metrics.records.columns import Columns, RequestFrame
from metrics.records.record_check import (
    NOT_JSON,
    InputReport,
    RecordLine,
    decode,
    duplicate_id,
    is_blank,
    record_problem,
)

T = TypeVar("T")


def _or(value: T | None, default: T) -> T:
    """A field's value, null read as absent (as the Arrow reader reads it)."""
    return default if value is None else value


def _add(cols: Columns, d: RecordLine) -> None:
    cols.add(
        rid=d["id"], intended_ns=d["intended_ns"], sent_ns=d.get("sent_ns"), closed_ns=d.get("closed_ns"),
        status=d["status"], error_kind=d.get("error_kind"), chunk_ns=d.get("chunk_ns") or [],
        chunk_tokens=d.get("chunk_tokens"), token_source=_or(d.get("token_source"), "estimate"),
        output_tokens=d.get("output_tokens"), output_estimated=_or(d.get("output_tokens_estimated"), True),
        prompt_tokens=d.get("prompt_tokens"), prompt_estimated=_or(d.get("prompt_tokens_estimated"), True),
        prompt_target=d.get("prompt_tokens_target"), cached_tokens=d.get("cached_tokens"),
        server_chunk_s=d.get("server_chunk_s"), server=d.get("server"), tags=d.get("tags"),
        session=d.get("session"), turn=d.get("turn"), error_message=d.get("error_message"),
        http_status=d.get("http_status"), finish_reason=d.get("finish_reason"),
        output_target=d.get("output_tokens_target"), model=d.get("model"),
        answer=answer_row_of_line(d),
        images=d.get("images"),
    )


def frame_from_lines(lines: Iterable[bytes], report: InputReport) -> RequestFrame:
    """A frame from a file's lines (each ends with a newline but perhaps the last); `report` is filled in."""
    cols = Columns()
    first_line: dict[int, int] = {}  # request id → the line of its record
    with gc_paused():
        for number, raw in enumerate(lines, start=1):
            report.lines = number
            if is_blank(raw):
                report.blank += 1
                continue
            try:
                data = decode(raw)
            except ValueError:
                if raw.endswith(b"\n"):
                    report.skip(number, NOT_JSON)
                else:  # only a file's last line can lack its newline: a run killed mid-write
                    report.torn_last_line = number
                continue
            problem = record_problem(data)
            if problem is not None:
                report.skip(number, problem)
                continue
            line: RecordLine = data  # a record: record_problem checked every field RecordLine names
            first = first_line.setdefault(line["id"], number)
            if first != number:
                report.skip(number, duplicate_id(line["id"], first))
                continue
            _add(cols, line)
            report.records += 1
        return cols.build()


def read_jsonl_frame(path: str | Path) -> tuple[RequestFrame, InputReport]:
    """The records of a records.jsonl as a frame, and what reading it found."""
    path = Path(path)
    report = InputReport(path.name)
    with path.open("rb") as f:
        return frame_from_lines(f, report), report


def copy_records(path: Path, report: InputReport, out: BinaryIO) -> None:
    """Copy the lines of `path` that `report` (from reading it) counted as records, each with a newline."""
    skipped = {line for line, _ in report.skipped}
    with path.open("rb") as f:
        for number, raw in enumerate(f, start=1):
            if number in skipped or number == report.torn_last_line or is_blank(raw):
                continue
            out.write(raw if raw.endswith(b"\n") else raw + b"\n")
