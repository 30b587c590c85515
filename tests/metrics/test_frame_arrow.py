"""The Arrow reader builds exactly the frame the line-by-line reader builds, and refuses the same bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from metrics.records.frame import frame_from_jsonl
from metrics.records.frame_arrow import (
    frame_from_table,
    read_records_checked,
    read_records_table,
    record_schema,
)
from metrics.records.jsonl import read_jsonl_frame
from metrics.records.record import RequestRecord
from metrics.records.synthetic import write_synthetic
from metrics.summary.build import SummaryConfig, summarize
from tests.metrics._frames import assert_same_frame

EDGE_CASES = [
    RequestRecord(id=0, intended_ns=0, sent_ns=10, chunk_ns=[20, 30, 30], chunk_tokens=None, output_tokens=None,
                  tags={"tenant": "a"}, server={"queue_s": 1, "prefill_s": 0.5, "other": "x"}),
    RequestRecord(id=1, intended_ns=5, sent_ns=None, status="cancelled", error_kind="client_cancelled"),
    RequestRecord(id=2, intended_ns=7, sent_ns=8, chunk_ns=[9], chunk_tokens=[4], output_tokens=4,
                  output_tokens_estimated=False, server_chunk_s=[0.001], cached_tokens=0, prompt_tokens=12,
                  prompt_tokens_estimated=False, prompt_tokens_target=10, tags={"scenario": "s"}),
    RequestRecord(id=3, intended_ns=9, sent_ns=9, status="error", error_kind="http_status", http_status=429),
]


def test_same_frame_on_a_varied_run(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    write_synthetic(path, requests=400, chunks=15, seed=5)
    assert_same_frame(frame_from_table(read_records_table(path)), frame_from_jsonl(path))


def test_same_frame_on_edge_cases_and_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_bytes(b"".join(r.to_json() for r in EDGE_CASES) + b'{"id": 9, "intended_ns": 1, "chunk_ns": [1,')
    arrow, lines = frame_from_table(read_records_table(path)), frame_from_jsonl(path)
    assert_same_frame(arrow, lines)
    assert arrow.output_tokens[0] == 3 and arrow.output_estimated[0]  # N missing: Σk_j, an estimate
    assert arrow.server_phases["queue_s"][0] == 1.0 and np.isnan(arrow.server_phases["decode_s"][0])
    assert arrow.tags == {"scenario": [None, None, "s", None], "tenant": ["a", None, None, None]}
    config = SummaryConfig()
    assert summarize(arrow, config, {}) == summarize(lines, config, {})


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_bytes(b"")
    assert frame_from_table(read_records_table(path)).n == 0


@pytest.mark.parametrize(("record", "reason"), [
    ({"id": 4, "intended_ns": 0, "status": "weird"}, "status is not ok, error or cancelled"),
    ({"id": 4, "intended_ns": 0, "status": "ok", "chunk_ns": [1, 2], "chunk_tokens": [1]},
     "chunk_tokens and chunk_ns differ in length"),
    ({"id": 4, "intended_ns": 0, "status": "ok", "chunk_ns": [5, 2]}, "chunk_ns goes backwards"),
])
def test_bad_records_are_skipped_by_both_readers_for_the_same_reason(tmp_path: Path, record: dict[str, object],
                                                                      reason: str) -> None:
    import orjson

    path = tmp_path / "records.jsonl"
    path.write_bytes(EDGE_CASES[0].to_json() + orjson.dumps(record) + b"\n")
    table, arrow = read_records_checked(path)
    frame, lines = read_jsonl_frame(path)
    assert arrow.skipped == lines.skipped == [(2, reason)]
    assert_same_frame(frame_from_table(table), frame)
    assert frame.ids.tolist() == [0]


@pytest.mark.parametrize(("record", "message"), [
    ({"id": 4, "intended_ns": 0, "status": "weird"}, "unknown status"),
    ({"id": 4, "intended_ns": 0, "chunk_ns": [1, 2], "chunk_tokens": [1]}, "1 chunk_tokens for 2 chunk_ns"),
    ({"id": 4, "intended_ns": 0, "chunk_ns": [5, 2]}, "backwards"),
])
def test_the_frame_builder_still_refuses_a_table_nobody_checked(record: dict[str, object], message: str) -> None:
    import pyarrow as pa

    with pytest.raises(ValueError, match=message):
        frame_from_table(pa.Table.from_pylist([record], schema=record_schema()))


def test_a_whole_last_record_without_a_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_bytes(b"".join(r.to_json() for r in EDGE_CASES).rstrip(b"\n"))
    arrow, lines = frame_from_table(read_records_table(path)), frame_from_jsonl(path)
    assert arrow.n == lines.n == len(EDGE_CASES)
    assert_same_frame(arrow, lines)
