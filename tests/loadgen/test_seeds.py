"""item_rng draws exactly what default_rng([words]) draws: prompts stay reproducible across versions."""

from __future__ import annotations

import numpy as np
import pytest

from loadgen.seeds import item_rng


@pytest.mark.parametrize("words", [(0,), (0, 0), (0, 1), (7, 12345), (2**32 - 1, 5), (3, 0), (1, 0, 0),
                                   (5, 3_000_017, 9), (2**40, 3), (123, 2**32)])
def test_same_stream_as_a_list_seed(words: tuple[int, ...]) -> None:
    expected = np.random.default_rng(list(words))
    got = item_rng(*words)
    assert got.integers(0, 1 << 62, 8).tolist() == expected.integers(0, 1 << 62, 8).tolist()
    assert got.random(4).tolist() == expected.random(4).tolist()


def test_neighbouring_indices_differ() -> None:
    draws = {tuple(item_rng(42, i).integers(0, 1 << 62, 2).tolist()) for i in range(1000)}
    assert len(draws) == 1000


def test_a_negative_word_is_refused_as_numpy_refuses_it() -> None:
    with pytest.raises(ValueError):
        np.random.default_rng([-1, 2])
    with pytest.raises(ValueError):
        item_rng(-1, 2)
