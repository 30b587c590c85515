"""Model hyper-parameters of a Llama-family decoder, read from a Hugging Face `config.json` or built tiny."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

TINY_VOCAB_BYTES = 256
# The tiny model's specials follow the 256 byte tokens; the byte-level tokenizer uses the same ids.
TINY_BOS_ID = 256
TINY_EOS_ID = 257
TINY_SPECIAL_IDS = {"bos": 256, "eos": 257, "system": 258, "user": 259, "assistant": 260}


@dataclass(slots=True, frozen=True)
class RopeScaling:
    """RoPE frequency scaling. `kind` is "linear" or "llama3" (Llama 3.1 style, smooth band)."""

    kind: str
    factor: float
    low_freq_factor: float = 1.0
    high_freq_factor: float = 4.0
    original_max_position_embeddings: int = 8192


@dataclass(slots=True, frozen=True)
class ModelConfig:
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    max_position_embeddings: int
    rms_norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    rope_scaling: RopeScaling | None = None
    tie_word_embeddings: bool = False
    attention_bias: bool = False
    mlp_bias: bool = False
    bos_token_id: int | None = None
    eos_token_ids: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.num_heads % self.num_kv_heads:
            raise ValueError(f"num_heads {self.num_heads} is not a multiple of num_kv_heads {self.num_kv_heads}")
        if self.head_dim % 2:
            raise ValueError(f"head_dim must be even for RoPE, got {self.head_dim}")
        for name in ("vocab_size", "hidden_size", "intermediate_size", "num_layers", "max_position_embeddings"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")

    @property
    def eos_token_id(self) -> int | None:
        """The primary eos id (HF configs may list several; all of them stop generation)."""
        return self.eos_token_ids[0] if self.eos_token_ids else None


def kv_bytes_per_token(config: ModelConfig, dtype_bytes: int) -> int:
    """K and V for one position over all layers: 2 · L · Hkv · d · b (seed F5)."""
    return 2 * config.num_layers * config.num_kv_heads * config.head_dim * dtype_bytes


def kv_bytes_per_block(config: ModelConfig, block_size: int, dtype_bytes: int) -> int:
    return kv_bytes_per_token(config, dtype_bytes) * block_size


def blocks_for_tokens(num_tokens: int, block_size: int) -> int:
    """Blocks needed to hold `num_tokens` positions (a partly filled last block still takes a block)."""
    return math.ceil(num_tokens / block_size)


def tiny_config() -> ModelConfig:
    """A small Llama: 256 byte tokens + 5 specials, GQA 4/2 heads, 2 layers; builds in well under a second."""
    return ModelConfig(
        vocab_size=TINY_VOCAB_BYTES + len(TINY_SPECIAL_IDS),
        hidden_size=64,
        intermediate_size=128,
        num_layers=2,
        num_heads=4,
        num_kv_heads=2,
        head_dim=16,
        max_position_embeddings=4096,
        rms_norm_eps=1e-6,
        rope_theta=10000.0,
        bos_token_id=TINY_BOS_ID,
        eos_token_ids=(TINY_EOS_ID,),
    )


def _rope_from_hf(hf: dict[str, Any]) -> tuple[float, RopeScaling | None]:
    # transformers >= 5 writes `rope_parameters` (theta inside); older configs write rope_theta + rope_scaling.
    params = hf.get("rope_parameters") or {}
    theta = float(params.get("rope_theta", hf.get("rope_theta", 10000.0)))
    scaling = hf.get("rope_scaling") or (params if params else None)
    if not scaling:
        return theta, None
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    if kind == "default":
        return theta, None
    if kind == "linear":
        return theta, RopeScaling(kind="linear", factor=float(scaling["factor"]))
    if kind == "llama3":
        return theta, RopeScaling(
            kind="llama3",
            factor=float(scaling["factor"]),
            low_freq_factor=float(scaling["low_freq_factor"]),
            high_freq_factor=float(scaling["high_freq_factor"]),
            original_max_position_embeddings=int(scaling["original_max_position_embeddings"]),
        )
    raise ValueError(f"unsupported rope scaling type {kind!r}: only 'default', 'linear' and 'llama3' are implemented")


def config_from_hf(hf: dict[str, Any]) -> ModelConfig:
    """Map a Hugging Face Llama `config.json` dict; refuse other families instead of mis-running them."""
    model_type = hf.get("model_type")
    if model_type != "llama":
        raise ValueError(f"unsupported model_type {model_type!r}: this server implements the Llama family only")
    if hf.get("hidden_act", "silu") != "silu":
        raise ValueError(f"unsupported hidden_act {hf['hidden_act']!r}: Llama uses silu (SwiGLU)")
    num_heads = int(hf["num_attention_heads"])
    hidden = int(hf["hidden_size"])
    eos = hf.get("eos_token_id")
    eos_ids = tuple(int(e) for e in eos) if isinstance(eos, list) else (() if eos is None else (int(eos),))
    theta, scaling = _rope_from_hf(hf)
    return ModelConfig(
        vocab_size=int(hf["vocab_size"]),
        hidden_size=hidden,
        intermediate_size=int(hf["intermediate_size"]),
        num_layers=int(hf["num_hidden_layers"]),
        num_heads=num_heads,
        num_kv_heads=int(hf.get("num_key_value_heads") or num_heads),
        head_dim=int(hf.get("head_dim") or hidden // num_heads),
        max_position_embeddings=int(hf.get("max_position_embeddings", 2048)),
        rms_norm_eps=float(hf.get("rms_norm_eps", 1e-5)),
        rope_theta=theta,
        rope_scaling=scaling,
        tie_word_embeddings=bool(hf.get("tie_word_embeddings", False)),
        attention_bias=bool(hf.get("attention_bias", False)),
        mlp_bias=bool(hf.get("mlp_bias", False)),
        bos_token_id=None if hf.get("bos_token_id") is None else int(hf["bos_token_id"]),
        eos_token_ids=eos_ids,
    )
