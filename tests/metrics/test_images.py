"""Requests with images in the metrics: the image count read alike by every reader, the `images` bucket
dimension, and the prompt-length check that leaves image requests out (their P holds image tokens)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from exporters.console_notes import estimate_notes, prompt_warning
from metrics.records.frame import frame_from_jsonl, frame_from_records
from metrics.records.frame_arrow import frame_from_table, read_records_checked
from metrics.records.record import RequestRecord
from metrics.results.summary_run import Run
from metrics.results.summary_tokens import Tokens
from metrics.summary.buckets import IMAGE_LABELS, image_codes
from metrics.summary.build import SummaryConfig, summarize
from tests.metrics._frames import assert_same_frame


def _req(rid: int, images: int, *, prompt: int, target: int = 100, ttft_ms: int = 10) -> RequestRecord:
    t0 = rid * 1_000_000_000
    return RequestRecord(id=rid, intended_ns=t0, sent_ns=t0, chunk_ns=[t0 + ttft_ms * 1_000_000, t0 + (ttft_ms + 10) * 1_000_000],
                         chunk_tokens=[1, 1], output_tokens=2, token_source="server", prompt_tokens=prompt,
                         prompt_tokens_estimated=False, prompt_tokens_target=target, closed_ns=t0 + (ttft_ms + 11) * 1_000_000,
                         images=images, image_pixels=images * 4096, image_bytes=images * 900)


# Text prompts on target (101 of 100 tokens); image prompts far over it (64 image tokens per image).
RECORDS = [_req(0, 0, prompt=101), _req(1, 1, prompt=165, ttft_ms=30), _req(2, 2, prompt=229, ttft_ms=50),
           _req(3, 4, prompt=357, ttft_ms=90), _req(4, 0, prompt=101)]


def test_every_reader_reads_the_image_count(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_bytes(b"".join(r.to_json() for r in RECORDS))
    lines = frame_from_jsonl(path)
    assert_same_frame(frame_from_table(read_records_checked(path)[0]), lines)
    assert_same_frame(lines, frame_from_records(RECORDS))
    assert lines.images.tolist() == [0, 1, 2, 4, 0]


def test_image_labels() -> None:
    labels = [IMAGE_LABELS[c] for c in image_codes(np.array([0, 1, 2, 3, 4, 5, 8, 9, 30, np.nan]))]
    assert labels == ["0", "1", "2", "3-4", "3-4", "5-8", "5-8", "9+", "9+", "0"]


def test_images_is_a_bucket_dimension_when_a_request_carried_one() -> None:
    buckets = [b for b in summarize(RECORDS, SummaryConfig(), {})["buckets"] if b["dimension"] == "images"]
    assert [(b["label"], b["measured"]) for b in buckets] == [("0", 2), ("1", 1), ("2", 1), ("3-4", 1)]
    ttft_p50 = {b["label"]: b["latency"]["ttft_s"]["p50"] for b in buckets}
    assert ttft_p50 == {"0": 0.01, "1": 0.03, "2": 0.05, "3-4": 0.09}
    text_only = summarize([_req(0, 0, prompt=101)], SummaryConfig(), {})
    assert "images" not in {b["dimension"] for b in text_only["buckets"]}


def test_the_prompt_check_leaves_image_requests_out_and_says_so() -> None:
    tokens = summarize(RECORDS, SummaryConfig(), {})["tokens"]
    accuracy = tokens["prompt_accuracy"]
    assert accuracy["count"] == 2 and accuracy["mean_error_tokens"] == 1.0  # the two text prompts only
    assert accuracy["image_requests"] == 3
    assert tokens["image_requests"] == 3
    assert prompt_warning(Tokens.from_json(tokens), Run.from_json({})) is None  # image tokens would read as a 65-257 % miss
    notes = [n for n in estimate_notes(Tokens.from_json(tokens)) if "images" in n]
    assert notes == ["note: 3 of 5 requests carried images: their prompt tokens are the server's count, image tokens"
                     " included; the prompt-length check leaves them out"]
    text_only = summarize([_req(0, 0, prompt=101)], SummaryConfig(), {})["tokens"]
    assert "image_requests" not in text_only["prompt_accuracy"]
    assert not [n for n in estimate_notes(Tokens.from_json(text_only)) if "images" in n]


def test_thresholds_filter_by_image_count_and_refuse_an_impossible_label() -> None:
    import pytest

    from metrics.gate.evaluate import summary_value
    from metrics.gate.thresholds import ThresholdError, check_labels, parse_threshold

    summary = summarize(RECORDS, SummaryConfig(), {})
    t = parse_threshold("ttft{images:3-4}:p(50) < 100ms")
    assert t.query.filters == (("images", "3-4"),)
    check_labels([t], prompt_edges=(0, 128), output_edges=(0, 128))
    assert summary_value(summary, t.query) == 0.09
    assert summary_value(summary, parse_threshold("ttft{images:0}:p(50) < 100ms").query) == 0.01
    with pytest.raises(ThresholdError, match="no images bucket '3'"):
        check_labels([parse_threshold("ttft{images:3}:p(95) < 2s")], prompt_edges=(0, 128), output_edges=(0, 128))
