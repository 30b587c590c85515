"""records.jsonl lines come from `encode_record`, which must be `RequestRecord.to_json()` byte for byte."""

from __future__ import annotations

from loadgen.dispatch.recorder import encode_record
from metrics.records.record import RequestRecord

RECORDS = [
    RequestRecord(id=0, intended_ns=0, sent_ns=None, status="error", error_kind="connect_error",
                  error_message="cannot connect: «refused» \u2028 \"quoted\""),
    RequestRecord(id=3, intended_ns=10, sent_ns=12, chunk_ns=[20, 30, 2**40], chunk_tokens=[1, 3, 0],
                  token_source="usage_delta", output_tokens=4, output_tokens_estimated=False, prompt_tokens=7,
                  prompt_tokens_estimated=False, prompt_tokens_target=8, cached_tokens=0, finish_reason="length",
                  first_byte_ns=15, closed_ns=31, output_tokens_target=4, tags={"scenario": "a", "tenant": "é"},
                  server_chunk_s=[0.001, 0.0025, 1e-9], server={"queue_s": 0.1, "timings": {"n": [1, 2.5, None]}},
                  worker=2, session=5, turn=1, http_status=200),
    RequestRecord(id=9, intended_ns=-5, sent_ns=1, status="cancelled", error_kind="client_cancelled",
                  chunk_tokens=None, server_chunk_s=None, server=None),
]


def test_encode_record_is_to_json_byte_for_byte() -> None:
    for record in RECORDS:
        assert encode_record(record) == record.to_json()
