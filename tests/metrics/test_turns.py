"""Conversation turns in records: `session` and `turn` read alike by both readers, the `turn` bucket
dimension, the measured prefix-cache share per bucket, and the `sessions` section."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from metrics.records.frame import frame_from_jsonl, frame_from_records
from metrics.records.frame_arrow import frame_from_table, read_records_checked
from metrics.records.jsonl import read_jsonl_frame
from metrics.records.record import RequestRecord
from metrics.summary.buckets import TURN_LABELS, turn_codes
from metrics.summary.build import SummaryConfig, summarize
from metrics.summary.tokens import cache_share
from tests.metrics._frames import assert_same_frame


def _turn(rid: int, session: int, turn: int, *, cached: int, prompt: int = 100, status: str = "ok") -> RequestRecord:
    ok = status == "ok"
    return RequestRecord(id=rid, intended_ns=rid * 1000, sent_ns=rid * 1000 + 10 if ok else None, status=status,  # type: ignore[arg-type]
                         error_kind={"ok": None, "error": "http_status"}.get(status, "session_ended"), chunk_ns=[rid * 1000 + 50] if ok else [],
                         chunk_tokens=[1] if ok else None, output_tokens=1 if ok else None,
                         prompt_tokens=prompt if ok else None, prompt_tokens_estimated=False,
                         cached_tokens=cached if ok else None, closed_ns=rid * 1000 + 60 if ok else None,
                         session=session, turn=turn)


RECORDS = [
    _turn(0, 0, 1, cached=0), _turn(1, 0, 2, cached=48), _turn(2, 0, 3, cached=64), _turn(3, 0, 4, cached=80),
    _turn(4, 1, 1, cached=0), _turn(5, 1, 2, cached=32, status="error"),
    _turn(6, 1, 3, cached=0, status="cancelled"),
    _turn(7, 2, 9, cached=96),
]


def test_both_readers_read_session_and_turn(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    lone = RequestRecord(id=8, intended_ns=9000, sent_ns=9001, chunk_ns=[9002], closed_ns=9003)
    path.write_bytes(b"".join(r.to_json() for r in [*RECORDS, lone]))
    arrow, lines = frame_from_table(read_records_checked(path)[0]), frame_from_jsonl(path)
    assert_same_frame(arrow, lines)
    assert_same_frame(lines, frame_from_records([*RECORDS, lone]))
    assert lines.turn[:8].tolist() == [1, 2, 3, 4, 1, 2, 3, 9] and np.isnan(lines.turn[8])
    assert lines.session[:8].tolist() == [0, 0, 0, 0, 1, 1, 1, 2] and np.isnan(lines.session[8])


def test_a_turn_that_is_not_an_integer_makes_the_line_unusable_for_both_readers(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_bytes(RECORDS[0].to_json() + b'{"id": 1, "intended_ns": 0, "status": "ok", "turn": "2"}\n')
    _, report = read_jsonl_frame(path)
    assert report.skipped == [(2, "turn is not an integer")]
    import pyarrow as pa

    with pytest.raises(pa.ArrowInvalid):  # Arrow cannot type the column: the report falls back to the line reader
        read_records_checked(path)


def test_turn_labels() -> None:
    turns = np.array([1, 2, 3, 4, 5, 8, 9, 40, np.nan, 0])
    labels = [TURN_LABELS[c] for c in turn_codes(turns)]
    assert labels == ["1", "2", "3-4", "3-4", "5-8", "5-8", "9+", "9+", "unknown", "unknown"]


def test_turn_buckets_and_their_prefix_cache_share() -> None:
    summary = summarize(RECORDS, SummaryConfig(), {})
    turn = {b["label"]: b for b in summary["buckets"] if b["dimension"] == "turn"}
    assert list(turn) == ["1", "2", "3-4", "9+"]
    assert turn["2"]["measured"] == 2 and turn["2"]["failed"] == 1
    assert turn["2"]["prefix_cache"] == {"requests": 1, "prompt_tokens": 100, "cached_tokens": 48, "cached_ratio": 0.48}
    assert turn["3-4"]["prefix_cache"]["cached_ratio"] == pytest.approx(144 / 200)
    assert summary["tokens"]["prefix_cache"]["cached_tokens"] == 48 + 64 + 80 + 96
    assert summary["sessions"]["sessions"] == 3 and summary["sessions"]["ended_early"] == 1
    assert summary["sessions"]["completed"] == 2 and summary["sessions"]["turns_not_sent"] == 1


def test_a_run_without_turns_has_neither_the_dimension_nor_the_section() -> None:
    lone = [RequestRecord(id=i, intended_ns=i, sent_ns=i, chunk_ns=[i + 5], closed_ns=i + 6) for i in range(3)]
    summary = summarize(lone, SummaryConfig(), {})
    assert "sessions" not in summary and not any(b["dimension"] == "turn" for b in summary["buckets"])


def test_cache_share_counts_only_requests_that_report_both() -> None:
    frame = frame_from_records([
        RequestRecord(id=0, intended_ns=0, sent_ns=0, prompt_tokens=100, cached_tokens=50),
        RequestRecord(id=1, intended_ns=0, sent_ns=0, prompt_tokens=100, cached_tokens=None),
    ])
    assert cache_share(frame, np.array([True, True])).to_json() == {"requests": 1, "prompt_tokens": 100, "cached_tokens": 50,
                                                          "cached_ratio": 0.5}
    assert cache_share(frame, np.array([False, True])).to_json()["cached_ratio"] is None


def test_thresholds_filter_by_turn_and_refuse_an_impossible_turn_label() -> None:
    from metrics.gate.thresholds import ThresholdError, check_labels, parse_threshold

    ok = parse_threshold("ttft{turn:3-4}:p(95) < 2s")
    assert ok.query.filters == (("turn", "3-4"),)
    check_labels([ok], prompt_edges=(0, 128), output_edges=(0, 128))
    with pytest.raises(ThresholdError, match="turn"):
        check_labels([parse_threshold("ttft{turn:3-5}:p(95) < 2s")], prompt_edges=(0, 128), output_edges=(0, 128))
