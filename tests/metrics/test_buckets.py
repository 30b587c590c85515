from __future__ import annotations

import numpy as np
import pytest

from metrics.summary.buckets import (
    DEFAULT_PROMPT_EDGES,
    cache_classes,
    check_edges,
    range_codes,
    range_labels,
)
from metrics.units import token_label

nan = np.nan


def test_default_prompt_labels() -> None:
    assert range_labels(DEFAULT_PROMPT_EDGES) == ["0-128", "128-512", "512-2k", "2k-8k", "8k-32k", "32k+", "unknown"]


def test_prompt_codes_half_open() -> None:
    values = np.array([0, 127, 128, 2047, 2048, 32767, 32768, 100_000, nan])
    labels = range_labels(DEFAULT_PROMPT_EDGES)
    got = [labels[c] for c in range_codes(values, DEFAULT_PROMPT_EDGES)]
    assert got == ["0-128", "0-128", "128-512", "512-2k", "2k-8k", "8k-32k", "32k+", "32k+", "unknown"]


def test_custom_edges_above_zero_get_a_below_bucket() -> None:
    edges = (100, 1000)
    labels = range_labels(edges)
    assert labels == ["<100", "100-1k", "1k+", "unknown"]
    assert [labels[c] for c in range_codes(np.array([5, 100, 999, 1000, nan]), edges)] == [
        "<100", "100-1k", "100-1k", "1k+", "unknown"
    ]


def test_token_labels() -> None:
    assert [token_label(v) for v in (0, 128, 1000, 1024, 2048, 32768, 1500)] == ["0", "128", "1k", "1k", "2k", "32k", "1500"]


@pytest.mark.parametrize("edges", [(), (0, 0), (5, 3), (-1, 10)])
def test_bad_edges(edges: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="bucket edges"):
        check_edges(edges, "prompt")


def test_cache_classes() -> None:
    cached = np.array([0, 50, 90, 100, nan, 10])
    prompt = np.array([100, 100, 100, 100, 100, nan])
    classes = ["none", "partial", "full", "unknown"]
    got = [classes[c] for c in cache_classes(cached, prompt, full_ratio=0.9, absent_is_zero=False)]
    assert got == ["none", "partial", "full", "full", "unknown", "partial"]
    zero = [classes[c] for c in cache_classes(cached, prompt, full_ratio=0.9, absent_is_zero=True)]
    assert zero[4] == "none"
    with pytest.raises(ValueError, match="full ratio"):
        cache_classes(cached, prompt, full_ratio=1.5, absent_is_zero=False)
