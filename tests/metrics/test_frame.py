from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from metrics.records.frame import frame_from_jsonl, frame_from_records
from metrics.records.record import RequestRecord, read_records
from metrics.records.synthetic import write_synthetic
from metrics.summary.build import SummaryConfig, summarize
from tests.metrics._records import rec


def test_columns_and_csr_layout() -> None:
    frame = frame_from_records([
        rec(0, a=0, d=1, chunks=[10, 20], k=[1, 2], prompt_tokens=7, cached_tokens=None, tags={"t": "x"}),
        rec(1, a=5, d=None, chunks=[], n=0, status="error", error_kind="connect_error"),
        rec(2, a=9, d=9, chunks=[30], closed=40, cached_tokens=0),
    ])
    assert frame.n == 3
    assert frame.chunk_off.tolist() == [0, 2, 2, 3]
    assert frame.chunk_ns.tolist() == [10_000_000, 20_000_000, 30_000_000]
    assert frame.chunk_tok.tolist() == [1, 2, 1]  # request 2 has no split: one token per chunk
    assert frame.tokens_known.tolist() == [True, False, False]
    assert frame.has_sent.tolist() == [True, False, True]
    assert frame.status.tolist() == [0, 1, 0]
    assert np.isnan(frame.cached_tokens[0]) and frame.cached_tokens[2] == 0  # absent is not zero
    assert frame.tags == {"t": ["x", None, None]}


def test_missing_output_tokens_fall_back_to_chunk_tokens_as_estimate() -> None:
    record = rec(d=0, chunks=[10, 20], k=[2, 3])
    record.output_tokens = None
    frame = frame_from_records([record])
    assert frame.output_tokens.tolist() == [5.0]
    assert frame.output_estimated.tolist() == [True]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"status": "weird"}, "unknown status"),
        ({"chunk_tokens": [1]}, "1 chunk_tokens for 2 chunk_ns"),
        ({"server_chunk_s": [0.1]}, "1 server_chunk_s for 2 chunk_ns"),
        ({"chunk_ns": [20_000_000, 10_000_000]}, "goes backwards"),
    ],
)
def test_bad_records_are_rejected_clearly(fields: dict[str, object], message: str) -> None:
    record = rec(7, d=0, chunks=[10, 20], k=[1, 1])
    for key, value in fields.items():
        setattr(record, key, value)
    with pytest.raises(ValueError, match=message):
        frame_from_records([rec(0, d=0, chunks=[5]), record])


def test_jsonl_fast_path_matches_records_and_skips_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    write_synthetic(path, requests=300, chunks=12, seed=3)
    with path.open("ab") as f:
        f.write(b'{"id": 300, "intended_ns": 5, "chunk_')  # killed mid-write
    records: list[RequestRecord] = read_records(str(path))
    assert len(records) == 300
    config = SummaryConfig()
    assert summarize(frame_from_jsonl(path), config, {}) == summarize(records, config, {})
