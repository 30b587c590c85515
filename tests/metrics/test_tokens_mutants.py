"""The `tokens` section, figure by figure, against hand counts: every token source's ITL and estimate basis
(written out from docs/metrics.md, not read from the module's tables), the prompt-length accuracy of first
and later turns, and the counts of unknown and estimated figures."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from metrics.records.frame import frame_from_records
from metrics.records.record import RequestRecord
from metrics.summary.tokens import (
    cache_share,
    itl_token_bases,
    output_estimate_bases,
    prompt_accuracy,
    tokens_section,
)
from tests.metrics._records import rec

# token_source → (ITL-per-token basis, estimate basis of N when N is an estimate)
EXPECTED = {
    "usage_delta": ("reported", "usage_delta"),
    "server": ("reported", "server_chunk_counts"),
    "final_split_by_tokenizer": ("split_by_tokenizer", "final_split_by_tokenizer"),
    "estimate_tokenizer": ("split_by_tokenizer", "tokenizer"),
    "final_split_by_text_length": ("split_by_text_length", "final_split_by_text_length"),
    "estimate_token_events": ("one_token_per_event", "one_token_per_event"),
    "estimate_token_events_tokenizer_low": ("one_token_per_event", "one_token_per_event_tokenizer_low"),
    "estimate_token_events_tokenizer_high": ("one_token_per_event", "one_token_per_event_tokenizer_high"),
    "estimate": ("one_token_per_chunk", "one_token_per_chunk"),
}


@pytest.mark.parametrize("source", sorted(EXPECTED))
def test_each_source_alone_names_its_bases(source: str) -> None:
    frame = frame_from_records([rec(0, chunks=[1, 2], k=[1, 2], token_source=source, output_tokens_estimated=True)])
    everything = np.ones(1, dtype=np.bool_)
    itl, estimate = EXPECTED[source]
    assert itl_token_bases(frame, everything) == {itl: 1}
    assert output_estimate_bases(frame, everything) == {estimate: 1}
    assert tokens_section(frame, everything).to_json()["itl_token_basis"] == itl


def test_bases_count_only_the_included_requests_and_sort_by_name() -> None:
    frame = frame_from_records([
        rec(0, chunks=[1], k=[1], token_source="server", output_tokens_estimated=True),
        rec(1, chunks=[1], k=[1], token_source="estimate", output_tokens_estimated=True),
        rec(2, chunks=[1], k=[1], token_source="estimate", output_tokens_estimated=True),
        rec(3, chunks=[1], k=[1], token_source="estimate_tokenizer", output_tokens_estimated=True),
        rec(4, chunks=[1], k=[1], token_source="usage_delta"),  # N reported: not an estimate
    ])
    include = np.array([True, True, True, False, True])
    assert list(itl_token_bases(frame, include).items()) == [("one_token_per_chunk", 2), ("reported", 2)]
    assert list(output_estimate_bases(frame, include).items()) == [("one_token_per_chunk", 2),
                                                                   ("server_chunk_counts", 1)]


def test_counts_without_a_split_read_as_one_token_per_chunk() -> None:
    # A reported source whose per-chunk split is unknown (chunk_tokens None): one token per chunk.
    frame = frame_from_records([rec(0, chunks=[1, 2], token_source="usage_delta", n=5)])
    assert itl_token_bases(frame, np.ones(1, dtype=np.bool_)) == {"one_token_per_chunk": 1}


def _accuracy_run() -> list[RequestRecord]:
    common: dict[str, Any] = {"prompt_tokens_estimated": False}
    return [
        rec(0, chunks=[1], prompt_tokens=110, prompt_tokens_target=100, **common),  # +10
        rec(1, chunks=[1], prompt_tokens=180, prompt_tokens_target=200, **common),  # −20
        rec(2, chunks=[1], prompt_tokens=3, prompt_tokens_target=0, **common),  # +3, target 0: no relative
        rec(3, chunks=[1], prompt_tokens=500, prompt_tokens_target=400, turn=1, session=1, **common),  # +100
        rec(4, chunks=[1], prompt_tokens=650, prompt_tokens_target=600, turn=2, session=1, **common),  # later
        rec(5, chunks=[1], prompt_tokens=900, prompt_tokens_target=100, images=2, **common),  # imaged: out
        rec(6, chunks=[1], prompt_tokens=90, prompt_tokens_target=100),  # P estimated: out
        rec(7, chunks=[1], prompt_tokens_target=100, **common),  # P unknown: out
    ]


def test_prompt_accuracy_by_hand() -> None:
    frame = frame_from_records(_accuracy_run())
    acc = prompt_accuracy(frame, np.ones(frame.n, dtype=np.bool_)).to_json()
    # First prompts 0–3: errors +10, −20, +3, +100 → mean 23.25; |e| = 10, 20, 3, 100 sorted 3, 10, 20, 100.
    assert acc["count"] == 4
    assert acc["mean_error_tokens"] == pytest.approx(23.25)
    assert acc["abs_error_tokens"] == {"mean": pytest.approx(33.25), "p50": pytest.approx(15.0),
                                       "p99": pytest.approx(20 + 0.97 * 80)}
    # Relative over targets > 0: 0.1, 0.1, 0.25 → mean 0.15, p50 0.1, p99 0.1 + 0.98 × 0.15.
    assert acc["abs_rel_error"] == {"mean": pytest.approx(0.15), "p50": pytest.approx(0.1),
                                    "p99": pytest.approx(0.1 + 0.98 * 0.15)}
    later = acc["later_turns"]
    assert (later["count"], later["mean_error_tokens"]) == (1, 50.0)
    assert later["abs_rel_error"]["p50"] == pytest.approx(50 / 600)
    assert acc["image_requests"] == 1


def test_prompt_accuracy_without_later_turns_or_images_has_neither_key() -> None:
    frame = frame_from_records(_accuracy_run()[:3])
    acc = prompt_accuracy(frame, np.ones(3, dtype=np.bool_)).to_json()
    assert set(acc) == {"count", "mean_error_tokens", "abs_error_tokens", "abs_rel_error"}
    empty = prompt_accuracy(frame, np.zeros(3, dtype=np.bool_)).to_json()
    assert empty["count"] == 0 and empty["mean_error_tokens"] is None
    assert empty["abs_error_tokens"] == {"mean": None, "p50": None, "p99": None}


def test_token_counts_by_hand() -> None:
    frame = frame_from_records([
        rec(0, chunks=[1], k=[1], n=7, prompt_tokens=100, cached_tokens=40, prompt_tokens_estimated=False),
        rec(1, chunks=[1], k=[1], n=5, prompt_tokens=50, prompt_tokens_estimated=True, images=1,
            output_tokens_estimated=True),
        rec(2, chunks=[1], k=[1], n=3),  # P and C unknown
        rec(3, chunks=[1], k=[1], n=1000, prompt_tokens=9000, cached_tokens=9000),  # not included
    ])
    include = np.array([True, True, True, False])
    section = tokens_section(frame, include).to_json()
    assert section["requests"] == 3
    assert (section["output_tokens"], section["prompt_tokens"], section["cached_tokens"]) == (15, 150, 40)
    assert section["output_estimated"] == 1
    assert section["prompt_estimated"] == 1  # request 2's P is unknown, not an estimate
    assert (section["prompt_unknown"], section["cached_unknown"]) == (1, 2)
    assert section["image_requests"] == 1
    assert section["token_source"] == {"server": 3}
    # Only request 0 reported both P and C.
    assert section["prefix_cache"] == {"requests": 1, "prompt_tokens": 100, "cached_tokens": 40, "cached_ratio": 0.4}


def test_cache_share_without_any_prompt_tokens_has_no_ratio() -> None:
    frame = frame_from_records([rec(0, chunks=[1], prompt_tokens=0, cached_tokens=0)])
    assert cache_share(frame, np.ones(1, dtype=np.bool_)).to_json() == {
        "requests": 1, "prompt_tokens": 0, "cached_tokens": 0, "cached_ratio": None}


def test_a_source_outside_the_table_with_counts_is_taken_as_reported() -> None:
    frame = frame_from_records([rec(0, chunks=[1, 2], k=[1, 2], token_source="final_only")])
    assert itl_token_bases(frame, np.ones(1, dtype=np.bool_)) == {"reported": 1}


def test_estimated_prompts_count_only_known_ones_and_the_estimate_bases_are_listed() -> None:
    frame = frame_from_records([
        rec(0, chunks=[1], k=[1], prompt_tokens=50, prompt_tokens_estimated=True),
        rec(1, chunks=[1], k=[1], prompt_tokens=60, prompt_tokens_estimated=True, output_tokens_estimated=True),
        rec(2, chunks=[1], k=[1], prompt_tokens_estimated=True),  # P unknown: not an estimate
    ])
    section = tokens_section(frame, np.ones(3, dtype=np.bool_)).to_json()
    assert (section["prompt_estimated"], section["prompt_unknown"]) == (2, 1)
    assert section["output_estimate_basis"] == {"server_chunk_counts": 1}


def test_a_target_and_a_prompt_of_one_token() -> None:
    frame = frame_from_records([rec(0, chunks=[1], prompt_tokens=2, prompt_tokens_target=1,
                                    prompt_tokens_estimated=False, cached_tokens=1)])
    everything = np.ones(1, dtype=np.bool_)
    assert prompt_accuracy(frame, everything).to_json()["abs_rel_error"]["mean"] == 1.0  # |2 − 1| / 1
    one = frame_from_records([rec(0, chunks=[1], prompt_tokens=1, cached_tokens=1)])
    assert cache_share(one, everything).to_json()["cached_ratio"] == 1.0


def test_a_frame_without_an_images_column_has_no_image_requests() -> None:
    frame = frame_from_records([rec(0, chunks=[1], prompt_tokens=110, prompt_tokens_target=100,
                                    prompt_tokens_estimated=False)])
    frame.images = np.zeros(0)  # a frame read from records written before images existed
    section = tokens_section(frame, np.ones(1, dtype=np.bool_)).to_json()
    assert section["image_requests"] == 0
    assert section["prompt_accuracy"]["count"] == 1
