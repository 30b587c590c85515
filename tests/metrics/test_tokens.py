"""The `tokens` section says how k_j and N were obtained, request by request."""

from __future__ import annotations

import numpy as np

from metrics.records.frame import frame_from_records
from metrics.summary.tokens import itl_token_bases, itl_token_basis, output_estimate_bases, tokens_section
from tests.metrics._records import rec


def test_each_source_has_its_itl_basis() -> None:
    frame = frame_from_records([
        rec(0, chunks=[1, 2], k=[1, 2], token_source="usage_delta"),
        rec(1, chunks=[1, 2], k=[2, 3], token_source="final_split_by_tokenizer"),
        rec(2, chunks=[1, 2], k=[2, 3], token_source="estimate_tokenizer", output_tokens_estimated=True),
        rec(3, chunks=[1, 2], k=[4, 1], token_source="final_split_by_text_length"),
        rec(4, chunks=[1, 2], k=[1, 2], token_source="estimate_token_events", output_tokens_estimated=True),
        rec(5, chunks=[1, 2], k=[1, 1], token_source="estimate", output_tokens_estimated=True),  # older record
        rec(6, chunks=[1, 2], n=7),  # final_only: no split
    ])
    everything = np.ones(frame.n, dtype=np.bool_)
    assert itl_token_bases(frame, everything) == {
        "one_token_per_chunk": 2, "one_token_per_event": 1, "reported": 1, "split_by_text_length": 1,
        "split_by_tokenizer": 2,
    }
    assert itl_token_basis(frame, everything) == "mixed"
    assert output_estimate_bases(frame, everything) == {
        "one_token_per_chunk": 1, "one_token_per_event": 1, "tokenizer": 1,
    }
    only = np.zeros(frame.n, dtype=np.bool_)
    only[[1, 2]] = True
    assert itl_token_basis(frame, only) == "split_by_tokenizer"
    assert itl_token_basis(frame, np.zeros(frame.n, dtype=np.bool_)) is None


def test_an_older_one_token_per_chunk_estimate_is_not_reported_as_counted() -> None:
    # Older clients wrote chunk_tokens = [1, ...] for "estimate": the counts are known but were never counted.
    frame = frame_from_records([rec(0, chunks=[1, 2, 3], k=[1, 1, 1], token_source="estimate")])
    section = tokens_section(frame, np.ones(1, dtype=np.bool_)).to_json()
    assert section["itl_token_basis"] == "one_token_per_chunk"
    assert section["itl_token_bases"] == {"one_token_per_chunk": 1}


def test_prompt_accuracy_ignores_the_clients_estimates() -> None:
    frame = frame_from_records([
        rec(0, chunks=[1], prompt_tokens=80, prompt_tokens_estimated=False, prompt_tokens_target=64),
        rec(1, chunks=[1], prompt_tokens=70, prompt_tokens_estimated=True, prompt_tokens_target=64),
    ])
    accuracy = tokens_section(frame, np.ones(2, dtype=np.bool_)).to_json()["prompt_accuracy"]
    assert accuracy["count"] == 1
    assert accuracy["abs_rel_error"]["p50"] == 16 / 64


def test_a_request_without_content_chunks_has_no_itl_basis() -> None:
    # transformers serve: every answer split by the tokenizer, and one that finished with usage but no text
    # (final_only, no chunk): it has no ITL, so the run's basis is not "mixed".
    frame = frame_from_records([
        rec(0, chunks=[1, 2], k=[2, 3], token_source="final_split_by_tokenizer"),
        rec(1, chunks=[1, 2, 3], k=[1, 1, 2], token_source="final_split_by_tokenizer"),
        rec(2, chunks=[], n=4, token_source="final_only"),
    ])
    section = tokens_section(frame, np.ones(frame.n, dtype=np.bool_)).to_json()
    assert section["itl_token_bases"] == {"split_by_tokenizer": 2}
    assert section["itl_token_basis"] == "split_by_tokenizer"
    assert section["token_source"] == {"final_only": 1, "final_split_by_tokenizer": 2}  # still counted there
