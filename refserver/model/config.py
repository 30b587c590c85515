"""The reference server's side of model configs: the tiny test model, and which configs it can run.

`ModelConfig`, `RopeScaling` and the Hugging Face reader live in `metrics.model.config`: one description
of a model for the capacity arithmetic, the sim engine and this server. This module adds what only the
torch model needs: the tiny model's shape with the byte-level tokenizer's special ids, and the refusal
of configs this Llama implementation cannot run (other families, other activations, other RoPE scalings).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

from metrics.model import ModelConfig, model_from_hf_config

if TYPE_CHECKING:
    from metrics.results import Json

TINY_VOCAB_BYTES = 256
# The tiny model's specials follow the 256 byte tokens; the byte-level tokenizer uses the same ids.
TINY_BOS_ID = 256
TINY_EOS_ID = 257
TINY_SPECIAL_IDS = {"bos": 256, "eos": 257, "system": 258, "user": 259, "assistant": 260}
# What a Llama config.json without max_position_embeddings means (transformers' LlamaConfig default).
DEFAULT_MAX_POSITIONS = 2048
SUPPORTED_ROPE_SCALINGS = ("linear", "llama3")


def tiny_config() -> ModelConfig:
    """A small Llama: 256 byte tokens + 5 specials, GQA 4/2 heads, 2 layers; builds in well under a second."""
    return ModelConfig(
        name="tiny",
        num_layers=2,
        hidden_size=64,
        num_heads=4,
        num_kv_heads=2,
        head_dim=16,
        intermediate_size=128,
        vocab_size=TINY_VOCAB_BYTES + len(TINY_SPECIAL_IDS),
        max_position_embeddings=4096,
        rms_norm_eps=1e-6,
        rope_theta=10000.0,
        bos_token_id=TINY_BOS_ID,
        eos_token_ids=(TINY_EOS_ID,),
    )


def max_positions(config: ModelConfig) -> int:
    """Positions the model can attend: the upper bound of any request's prompt + output."""
    if config.max_position_embeddings is None:
        raise ValueError(f"{config.name}: max_position_embeddings is not set; the server needs it to bound requests")
    return config.max_position_embeddings


def check_servable(config: ModelConfig) -> None:
    """Refuse what this Llama implementation would mis-run instead of running it wrongly."""
    if config.head_dim % 2:
        raise ValueError(f"head_dim must be even for RoPE, got {config.head_dim}")
    scaling = config.rope_scaling
    if scaling is not None and scaling.kind not in SUPPORTED_ROPE_SCALINGS:
        raise ValueError(f"unsupported rope scaling type {scaling.kind!r}: "
                         "only 'default', 'linear' and 'llama3' are implemented")
    max_positions(config)


def config_from_hf(hf: Mapping[str, Json], *, name: str | None = None) -> ModelConfig:
    """Read a Hugging Face Llama `config.json` dict; refuse other families instead of mis-running them."""
    model_type = hf.get("model_type")
    if model_type != "llama":
        raise ValueError(f"unsupported model_type {model_type!r}: this server implements the Llama family only")
    if hf.get("hidden_act", "silu") != "silu":
        raise ValueError(f"unsupported hidden_act {hf['hidden_act']!r}: Llama uses silu (SwiGLU)")
    config = model_from_hf_config(hf, name=name)
    if config.max_position_embeddings is None:
        config = dataclasses.replace(config, max_position_embeddings=DEFAULT_MAX_POSITIONS)
    check_servable(config)
    return config
