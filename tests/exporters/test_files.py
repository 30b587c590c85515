from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from exporters.console import format_summary
from exporters.files import summary_csv_rows, write_records_parquet, write_summary_csv
from metrics.records.frame_arrow import read_records_table
from metrics.records.record import RequestRecord
from metrics.results import write_json
from metrics.summary.build import SummaryConfig, summarize

RECORDS = [
    RequestRecord(id=0, intended_ns=0, sent_ns=1_000, chunk_ns=[11_000_000, 21_000_000], chunk_tokens=[1, 2],
                  token_source="usage_delta", output_tokens=3, output_tokens_estimated=False, prompt_tokens=10,
                  prompt_tokens_estimated=False, cached_tokens=0, finish_reason="length", closed_ns=21_500_000,
                  tags={"scenario": "a"}, server={"queue_s": 0.001, "timings": {"prompt_n": 10}}),
    RequestRecord(id=1, intended_ns=5_000_000, sent_ns=5_001_000, status="error", error_kind="http_status",
                  http_status=500, error_message="boom", closed_ns=6_000_000),
]


def _parquet(tmp_path: Path, src: Path) -> None:
    """As `write_outputs` does it: one Arrow parse when Arrow can type the lines, else none."""
    try:
        table = read_records_table(src)
    except pa.ArrowException:
        table = None
    write_records_parquet(tmp_path / "records.parquet", src, table)


def _jsonl(path: Path, records: list[RequestRecord], tail: bytes = b"") -> Path:
    path.write_bytes(b"".join(r.to_json() for r in records) + tail)
    return path


def test_parquet_has_one_row_per_record_and_skips_a_torn_line(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "records.jsonl", RECORDS, tail=b'{"id": 2, "intended_')
    _parquet(tmp_path, src)
    rows = pq.read_table(tmp_path / "records.parquet").to_pylist()
    assert [r["id"] for r in rows] == [0, 1]
    assert rows[0]["chunk_ns"] == [11_000_000, 21_000_000] and rows[0]["chunk_tokens"] == [1, 2]
    assert rows[0]["tags"] == {"scenario": "a"} and rows[0]["server"]["timings"] == {"prompt_n": 10}
    assert rows[1]["status"] == "error" and rows[1]["http_status"] == 500 and rows[1]["chunk_ns"] == []


def test_parquet_without_any_tag(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "records.jsonl", [RECORDS[1]])
    _parquet(tmp_path, src)
    assert pq.read_table(tmp_path / "records.parquet").num_rows == 1


def test_parquet_falls_back_when_arrow_cannot_type_a_field(tmp_path: Path) -> None:
    odd = [RequestRecord(id=0, intended_ns=0, sent_ns=0, server={"x": {"a": 1}}),
           RequestRecord(id=1, intended_ns=0, sent_ns=0, server={"x": [1, 2]})]
    _parquet(tmp_path, _jsonl(tmp_path / "records.jsonl", odd))
    rows = pq.read_table(tmp_path / "records.parquet").to_pylist()
    assert [json.loads(r["server"]) for r in rows] == [{"x": {"a": 1}}, {"x": [1, 2]}]


def test_parquet_falls_back_when_parquet_cannot_store_a_field(tmp_path: Path) -> None:
    odd = [RequestRecord(id=0, intended_ns=0, sent_ns=0, server={"timings": {}})]  # an empty nested object
    _parquet(tmp_path, _jsonl(tmp_path / "records.jsonl", odd))
    assert [json.loads(r["server"]) for r in pq.read_table(tmp_path / "records.parquet").to_pylist()] == [{"timings": {}}]


def test_empty_records_file(tmp_path: Path) -> None:
    _parquet(tmp_path, _jsonl(tmp_path / "records.jsonl", []))
    assert pq.read_table(tmp_path / "records.parquet").num_rows == 0


def test_csv_and_console_from_a_real_summary(tmp_path: Path) -> None:
    summary = summarize(RECORDS, SummaryConfig(), {"target": "http://x", "model": "m", "load": "poisson@1.00",
                                                   "complete": True})
    write_summary_csv(tmp_path / "summary.csv", summary)
    rows = list(csv.reader((tmp_path / "summary.csv").open()))
    assert rows[0][:3] == ["scope", "label", "metric"] and rows[0][3:] == ["count", "mean", "std", "min", "p50",
                                                                           "p90", "p95", "p99", "p999", "max"]
    ttft = next(r for r in rows if r[:3] == ["overall", "all", "ttft_s"])
    assert float(ttft[3]) == 1 and float(ttft[7]) == pytest.approx(0.010999)
    assert any(r[0] == "tag:scenario" and r[1] == "a" for r in rows)
    assert len(rows) == len(list(summary_csv_rows(summary)))
    text = format_summary(summary)
    assert "http_status=1" in text and "latency p50/p99 in ms:" in text and "11.0/11.0" in text


def test_json_refuses_nan_and_is_atomic(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    write_json(path, {"a": 1})
    with pytest.raises(ValueError):
        write_json(path, {"a": float("nan")})
    assert json.loads(path.read_text()) == {"a": 1}  # the old file survives a failed write
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]  # no temp file left behind
