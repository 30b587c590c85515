"""A damaged records.jsonl: both readers (Arrow and line by line) skip the same lines for the same reasons,
count them, and keep every other record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pytest

from metrics.records.frame_arrow import frame_from_table, read_records_checked
from metrics.records.jsonl import read_jsonl_frame
from metrics.records.record_check import SHOWN_SKIPPED, InputReport
from tests.metrics._frames import assert_same_frame


def record(rid: int, **changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": rid, "intended_ns": 1_000 * rid, "sent_ns": 1_000 * rid + 5, "status": "ok", "error_kind": None,
        "chunk_ns": [10_000 * rid + 100, 10_000 * rid + 200], "chunk_tokens": [1, 2], "token_source": "server",
        "output_tokens": 3, "output_tokens_estimated": False, "prompt_tokens": 12, "prompt_tokens_estimated": False,
        "closed_ns": 10_000 * rid + 300, "server_chunk_s": [0.1, 0.2], "tags": {"t": "a"},
        "server": {"queue_s": 0.001},
    }
    base.update(changes)
    return base


def line(data: Any) -> bytes:
    return orjson.dumps(data) + b"\n"


def write(path: Path, middle: bytes, before: int = 2, after: int = 2) -> Path:
    """`before` good records, the line under test, `after` good records."""
    good = [line(record(i)) for i in range(before + after)]
    path.write_bytes(b"".join(good[:before]) + middle + b"".join(good[before:]))
    return path


def read_both(path: Path) -> tuple[InputReport, InputReport | None]:
    """The line reader's report, and the Arrow reader's (None when Arrow cannot read the file); where both
    read it, their frames must be identical."""
    frame, lines = read_jsonl_frame(path)
    try:
        table, arrow = read_records_checked(path)
    except pa.ArrowException:
        return lines, None
    assert_same_frame(frame_from_table(table), frame)
    return lines, arrow


# Lines Arrow parses into a row, which then must be left out: both readers decide.
READ_BY_BOTH = [
    (b"{}\n", "id is missing or null"),
    (b"null\n", "not a JSON object"),
    (line({"id": 9, "status": "ok"}), "intended_ns is missing or null"),
    (line(record(9, intended_ns=None)), "intended_ns is missing or null"),
    (line(record(9, status=None)), "status is missing or null"),
    (line(record(9, status="weird")), "status is not ok, error or cancelled"),
    (line(record(9, chunk_ns=[5, None])), "chunk_ns is not a list of integers"),
    (line(record(9, chunk_tokens=[1, None])), "chunk_tokens is not a list of integers"),
    (line(record(9, server_chunk_s=[0.1, None])), "server_chunk_s is not a list of numbers"),
    (line(record(9, chunk_ns=[200, 100])), "chunk_ns goes backwards"),
    (line(record(9, chunk_tokens=[1])), "chunk_tokens and chunk_ns differ in length"),
    (line(record(9, server_chunk_s=[0.1])), "server_chunk_s and chunk_ns differ in length"),
    (line(record(9, tags={"other": 5})), "tags is not an object of strings"),
    (line(record(9, tags={"other": {"x": "y"}})), "tags is not an object of strings"),
]

# Lines Arrow cannot parse (or cannot match to lines): the line reader alone decides.
READ_BY_LINES_ONLY = [
    (b"garbage\n", "not valid JSON"),
    (b"[1,2,3]\n", "not a JSON object"),
    (b"5\n", "not a JSON object"),
    (b"\x00\x00\x00\n", "not valid JSON"),
    (line(record(9, intended_ns="abc")), "intended_ns is not an integer"),
    (line(record(9, id=1.5)), "id is not an integer"),
    (line(record(9, id=True)), "id is not an integer"),
    (line(record(9, prompt_tokens="12")), "prompt_tokens is not an integer"),
    (line(record(9, output_tokens_estimated=1)), "output_tokens_estimated is not true or false"),
    (line(record(9, chunk_ns="x")), "chunk_ns is not a list of integers"),
    (line(record(9, tags="x")), "tags is not an object of strings"),
    (line(record(9, server=[1])), "server is not an object"),
    (line(record(9)).rstrip(b"\n") + line(record(10)), "not valid JSON"),  # two records on one line
    (line(record(9, error_kind="x")).replace(b'"x"', b'"\xff"'), "not valid JSON"),  # not UTF-8
    (line(record(9, error_kind="x")).replace(b'"x"', b'"\\ud800"'), "not valid JSON"),  # a lone surrogate
    (b"\xef\xbb\xbf" + line(record(9)), "not valid JSON"),  # a byte-order mark
]


@pytest.mark.parametrize(("middle", "reason"), READ_BY_BOTH)
def test_both_readers_skip_the_same_line_for_the_same_reason(tmp_path: Path, middle: bytes, reason: str) -> None:
    lines, arrow = read_both(write(tmp_path / "records.jsonl", middle))
    assert arrow is not None, "Arrow should read this file"
    assert lines == arrow
    assert lines.skipped == [(3, reason)]
    assert (lines.lines, lines.records, lines.blank, lines.torn_last_line) == (5, 4, 0, None)


@pytest.mark.parametrize(("middle", "reason"), READ_BY_LINES_ONLY)
def test_lines_arrow_cannot_read_are_left_to_the_line_reader(tmp_path: Path, middle: bytes, reason: str) -> None:
    lines, arrow = read_both(write(tmp_path / "records.jsonl", middle))
    assert arrow is None, "Arrow must refuse the file rather than read it differently"
    assert lines.skipped == [(3, reason)]
    assert (lines.lines, lines.records) == (5, 4)


def test_the_records_kept_are_exactly_the_others(tmp_path: Path) -> None:
    damaged = write(tmp_path / "damaged.jsonl", b"{}\n")
    clean = write(tmp_path / "clean.jsonl", b"")
    assert_same_frame(read_jsonl_frame(damaged)[0], read_jsonl_frame(clean)[0])
    assert_same_frame(frame_from_table(read_records_checked(damaged)[0]), read_jsonl_frame(clean)[0])


def test_line_numbers_count_blank_lines_and_a_torn_last_line_is_apart(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_bytes(line(record(0)) + b"\n  \n\t\r\n" + b"{}\n" + line(record(1)) + b"null\n" + b'{"id": 2, "in')
    lines, arrow = read_both(path)
    assert lines == arrow
    assert lines.skipped == [(5, "id is missing or null"), (7, "not a JSON object")]
    assert (lines.lines, lines.records, lines.blank, lines.torn_last_line) == (8, 2, 3, 8)
    assert lines.to_json()["skipped"] == 2


def test_a_whole_last_line_that_is_not_a_record_is_skipped_not_torn(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_bytes(line(record(0)) + b'{"id": 1}')
    lines, arrow = read_both(path)
    assert lines == arrow
    assert lines.skipped == [(2, "intended_ns is missing or null")] and lines.torn_last_line is None


def test_every_skipped_line_is_counted_and_the_first_few_listed(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_bytes(b"".join(line(record(i)) + b"{}\n" for i in range(SHOWN_SKIPPED + 5)))
    lines, arrow = read_both(path)
    assert lines == arrow
    shown = lines.to_json()
    assert shown["skipped"] == SHOWN_SKIPPED + 5 and shown["records"] == SHOWN_SKIPPED + 5
    assert [s["line"] for s in shown["skipped_lines"]] == list(range(2, 2 * SHOWN_SKIPPED + 1, 2))


def test_nan_is_read_alike_by_both(tmp_path: Path) -> None:
    middle = line(record(9)).replace(b"[0.1,0.2]", b"[NaN,0.2]")
    lines, arrow = read_both(write(tmp_path / "records.jsonl", middle))
    assert lines == arrow and not lines.skipped


VALUES: list[Any] = [None, "x", "", 1.5, True, -1, 2**63, 2**31, [], [None], [1.5], ["1"], [True], [0.5, 0.1],
                     [3, 1], [[1], [2]], {}, {"a": 1}, {"a": "b"}, {"a": None}, {"a": {"b": 1}}]


def test_whatever_a_field_holds_arrow_never_reads_it_differently(tmp_path: Path) -> None:
    """Every field goodput writes (and one it does not) set to values of every JSON shape: where Arrow
    reads the file at all, it keeps and skips exactly what the line reader does, for the same reasons."""
    fields = [*record(0), "prompt_tokens_target", "cached_tokens", "finish_reason", "first_byte_ns", "http_status",
              "error_message", "output_tokens_target", "worker", "not_a_field"]
    read_by_arrow = 0
    for name in fields:
        for value in VALUES:
            path = write(tmp_path / "records.jsonl", line(record(9, **{name: value})))
            lines, arrow = read_both(path)
            assert lines.records + len(lines.skipped) == 5, (name, value)
            if arrow is not None:
                read_by_arrow += 1
                assert lines == arrow, (name, value)
    assert read_by_arrow > len(fields) * 3  # the comparison really happened for many of them


def test_the_checks_cover_every_field_a_record_has() -> None:
    from metrics.records.frame_arrow import record_schema
    from metrics.records.record import RequestRecord
    from metrics.records.record_check import (
        BOOL_FIELDS,
        INT64_FIELDS,
        LIST_FIELDS,
        OBJECT_FIELDS,
        STRING_FIELDS,
    )

    typed = {*INT64_FIELDS, *STRING_FIELDS, *BOOL_FIELDS, *LIST_FIELDS}
    assert typed == set(record_schema().names)
    assert typed | set(OBJECT_FIELDS) == set(RequestRecord.__dataclass_fields__)


def test_a_request_recorded_twice_is_kept_once_by_both_readers(tmp_path: Path) -> None:
    first = [line(record(i)) for i in range(4)]
    path = tmp_path / "records.jsonl"
    path.write_bytes(b"".join(first) + first[2] + line(record(7, intended_ns=None)) + first[0] + line(record(4)))
    lines, arrow = read_both(path)
    assert arrow is not None
    for report in (lines, arrow):
        assert report.records == 5  # ids 0, 1, 2, 3, 4: each once
        assert report.skipped == [(5, "duplicate id 2 (first on line 3)"), (6, "intended_ns is missing or null"),
                                  (7, "duplicate id 0 (first on line 1)")]
