"""The torch model of the reference server: a Llama-family decoder over a paged KV cache.

`ModelConfig` and `RopeScaling` are `metrics.model`'s (re-exported here for callers of this package); the
other names are imported on first use (metrics.lazy_face).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics import lazy_names
from metrics.model import ModelConfig, RopeScaling

if TYPE_CHECKING:
    from refserver.model.attention import PagedAttentionMetadata
    from refserver.model.config import config_from_hf, max_positions, tiny_config
    from refserver.model.llama import LlamaForCausalLM
    from refserver.model.loader import (
        load_model,
        read_model_config,
        resolve_device,
        resolve_dtype,
        tiny_model,
    )

__all__ = [
    "LlamaForCausalLM",
    "ModelConfig",
    "PagedAttentionMetadata",
    "RopeScaling",
    "config_from_hf",
    "load_model",
    "max_positions",
    "read_model_config",
    "resolve_device",
    "resolve_dtype",
    "tiny_config",
    "tiny_model",
]

__getattr__ = lazy_names(__name__, {
    "PagedAttentionMetadata": "attention",
    "config_from_hf": "config", "max_positions": "config",
    "tiny_config": "config",
    "LlamaForCausalLM": "llama",
    "load_model": "loader", "read_model_config": "loader", "resolve_device": "loader",
    "resolve_dtype": "loader", "tiny_model": "loader",
})
