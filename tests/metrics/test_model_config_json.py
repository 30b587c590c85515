"""A config.json's values are JSON of any shape: the ones read as integers or as the list of layer kinds
are checked where they are read, and a value of the wrong shape is refused with a one-line
`UnsupportedModelError` naming the key, never a TypeError from deep inside."""

from __future__ import annotations

from typing import Any

import pytest

from metrics.model import UnsupportedModelError, model_from_hf_config

LLAMA31_8B_JSON: dict[str, Any] = {
    "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 131072, "model_type": "llama",
    "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 128256,
}


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({"num_key_value_heads": [8]}, "needs an integer 'num_key_value_heads', got \\[8\\]"),
        ({"head_dim": {"size": 128}}, "needs an integer 'head_dim'"),
        ({"layer_types": 32}, "layer_types must be a list of strings, got 32"),
        ({"layer_types": ["full_attention"] * 31 + [None]}, "layer_types must be a list of strings"),
        ({"max_position_embeddings": "131072"}, "max_position_embeddings must be a positive integer or None"),
    ],
)
def test_a_value_of_the_wrong_shape_is_refused_by_name(extra: dict[str, Any], words: str) -> None:
    with pytest.raises(UnsupportedModelError, match=words):
        model_from_hf_config({**LLAMA31_8B_JSON, **extra})


def test_qwen_window_layers_read_as_int_reads_them() -> None:
    qwen = {"model_type": "qwen2", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 4,
            "intermediate_size": 128, "vocab_size": 100, "sliding_window": 8, "use_sliding_window": True}
    assert model_from_hf_config({**qwen, "max_window_layers": "2"}).layer_windows == (None, None, 8, 8)
    with pytest.raises(UnsupportedModelError, match="needs an integer 'max_window_layers'"):
        model_from_hf_config({**qwen, "max_window_layers": None})
