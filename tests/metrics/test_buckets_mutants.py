"""Bucket dimensions at their edges, against labels written out by hand (docs/metrics.md, "Buckets")."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from metrics.records.frame import frame_from_records
from metrics.summary.buckets import (
    cache_classes,
    image_dimensions,
    model_dimensions,
    output_dimension,
    prompt_dimension,
    range_codes,
    range_labels,
)
from tests.metrics._records import rec

CLASSES = ["none", "partial", "full", "unknown"]


def test_a_first_edge_of_one_gets_a_below_bucket() -> None:
    labels = range_labels((1, 10))
    assert labels == ["<1", "1-10", "10+", "unknown"]
    codes = range_codes(np.array([0.0, 1.0, 9.0, 10.0, np.nan]), (1, 10))
    assert [labels[c] for c in codes] == ["<1", "1-10", "1-10", "10+", "unknown"]


def test_bad_edges_name_their_dimension() -> None:
    frame = frame_from_records([rec(0, chunks=[1], prompt_tokens=5)])
    with pytest.raises(ValueError, match=r"^prompt bucket edges must be non-negative"):
        prompt_dimension(frame, (5, 3))
    with pytest.raises(ValueError, match=r"^output bucket edges must be non-negative"):
        output_dimension(frame, (5, 3))


def test_the_full_ratio_bounds() -> None:
    one = np.array([100.0])
    with pytest.raises(ValueError, match=r"cache full ratio must be in \(0, 1\], got 0.0"):
        cache_classes(one, one, full_ratio=0.0, absent_is_zero=False)
    # A ratio of 1 is allowed: only a whole-prompt hit is full.
    got = cache_classes(np.array([100.0, 99.0]), np.array([100.0, 100.0]), full_ratio=1.0, absent_is_zero=False)
    assert [CLASSES[c] for c in got] == ["full", "partial"]


def test_one_cached_token_of_one_is_full() -> None:
    got = cache_classes(np.array([1.0, 1.0]), np.array([1.0, 2.0]), full_ratio=0.9, absent_is_zero=False)
    assert [CLASSES[c] for c in got] == ["full", "partial"]


def test_a_prompt_of_zero_tokens_is_classed_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = cache_classes(np.array([0.0, 5.0]), np.array([0.0, 0.0]), full_ratio=0.9, absent_is_zero=False)
    # C = 0: none; C > 0 over P = 0: C / P = inf ≥ 0.9, full.
    assert [CLASSES[c] for c in got] == ["none", "full"]


def test_a_model_named_unknown_shares_the_unknown_label() -> None:
    frame = frame_from_records([rec(0, model="a"), rec(1, model="unknown"), rec(2, model=None)])
    (dim,) = model_dimensions(frame)
    assert dim.labels == ["a", "unknown"]
    assert dim.codes.tolist() == [0, 1, 1]


def test_one_image_is_enough_for_the_images_dimension() -> None:
    frame = frame_from_records([rec(0, images=0), rec(1, images=1)])
    (dim,) = image_dimensions(frame)
    assert [dim.labels[c] for c in dim.codes] == ["0", "1"]
    assert image_dimensions(frame_from_records([rec(0, images=0)])) == []
