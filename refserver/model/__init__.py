"""The torch model of the reference server: a Llama-family decoder over a paged KV cache."""

from __future__ import annotations

from refserver.model.config import ModelConfig, RopeScaling, config_from_hf, tiny_config
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
