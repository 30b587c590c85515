"""The torch model of the reference server: a Llama-family decoder over a paged KV cache.

`ModelConfig` and `RopeScaling` are `metrics.model.config`'s (re-exported here for callers of this package).
"""

from __future__ import annotations

from metrics.model.config import ModelConfig, RopeScaling
from refserver.model.config import config_from_hf, tiny_config
from refserver.model.loader import load_model, read_model_config, resolve_device, resolve_dtype, tiny_model

__all__ = [
    "ModelConfig",
    "RopeScaling",
    "config_from_hf",
    "load_model",
    "read_model_config",
    "resolve_device",
    "resolve_dtype",
    "tiny_config",
    "tiny_model",
]
