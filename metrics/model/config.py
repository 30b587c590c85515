"""The shape of a dense decoder model, as the capacity and roofline formulas need it (seed F2, F5).

`ModelConfig` is built from a Hugging Face `config.json` (Llama, Mistral, Qwen2, Qwen3 families) or
taken from `metrics.model.presets`. Configs whose memory or compute the formulas here cannot describe are
refused with `UnsupportedModelError` rather than approximated:

- MLA (DeepSeek-V2/V3, Kimi): the cache holds a compressed latent of `kv_lora_rank + qk_rope_head_dim`
  per token per layer, not 2·Hkv·d — the F5 formula would overstate it several-fold.
- Mamba / hybrid (Jamba, Zamba, Falcon-H1, Nemotron-H, Qwen3-Next's linear attention): recurrent layers
  keep a fixed-size state per sequence that does not grow with tokens, so "bytes per token" is wrong.
- Mixture of experts: weights held and weights read per token differ (only active experts are read),
  which changes both F6 and F7.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SUPPORTED_MODEL_TYPES = ("llama", "mistral", "qwen2", "qwen3")

_MLA_KEYS = ("kv_lora_rank", "q_lora_rank")
_SSM_KEYS = ("ssm_cfg", "mamba_d_state", "mamba_expand", "hybrid_override_pattern", "layers_block_type",
             "attn_layer_indices", "linear_num_value_heads")
_MOE_KEYS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_intermediate_size")


class UnsupportedModelError(ValueError):
    """The config describes an architecture the capacity formulas cannot model faithfully."""


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """Dimensions of a dense GQA decoder. Symbols as in seed F2: L, D, Hq, Hkv, d, F, V."""

    name: str
    num_layers: int  # L
    hidden_size: int  # D
    num_heads: int  # Hq
    num_kv_heads: int  # Hkv
    head_dim: int  # d (not always D / Hq: Qwen3 and some Mistrals set it explicitly)
    intermediate_size: int  # F
    vocab_size: int  # V
    tie_word_embeddings: bool = False
    qkv_bias: bool = False  # Qwen2 has biases on q/k/v
    qk_norm: bool = False  # Qwen3 normalises q and k per head (2·d weights per layer)
    # Per layer: None = full attention, n = sliding window of n tokens (keeps at most n tokens of KV).
    layer_windows: tuple[int | None, ...] = ()
    max_position_embeddings: int | None = None

    def __post_init__(self) -> None:
        for field_name in ("num_layers", "hidden_size", "num_heads", "num_kv_heads", "head_dim",
                           "intermediate_size", "vocab_size"):
            value = getattr(self, field_name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{self.name}: {field_name} must be a positive integer, got {value!r}")
        if self.num_heads % self.num_kv_heads != 0:
            raise ValueError(f"{self.name}: num_heads {self.num_heads} is not a multiple of "
                             f"num_kv_heads {self.num_kv_heads}")
        if not self.layer_windows:
            object.__setattr__(self, "layer_windows", (None,) * self.num_layers)
        if len(self.layer_windows) != self.num_layers:
            raise ValueError(f"{self.name}: layer_windows has {len(self.layer_windows)} entries "
                             f"for {self.num_layers} layers")
        if any(w is not None and w <= 0 for w in self.layer_windows):
            raise ValueError(f"{self.name}: sliding windows must be positive")

    @property
    def has_sliding_window(self) -> bool:
        return any(w is not None for w in self.layer_windows)


def _int(config: dict[str, Any], key: str, source: str) -> int:
    value = config.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise UnsupportedModelError(f"{source}: config.json needs an integer {key!r}, got {value!r}")
    return value


def _refuse_unmodelled(config: dict[str, Any], source: str) -> None:
    model_type = str(config.get("model_type", ""))
    if any(k in config for k in _MLA_KEYS) or model_type.startswith(("deepseek", "kimi")):
        raise UnsupportedModelError(
            f"{source}: multi-head latent attention (MLA, model_type {model_type!r}) caches a compressed "
            "latent per token, not 2·Hkv·d; the KV formula here would be wrong, so it is not modelled")
    layer_types = config.get("layer_types") or []
    non_attention = sorted({t for t in layer_types if t not in ("full_attention", "sliding_attention")})
    if (any(k in config for k in _SSM_KEYS) or non_attention
            or any(s in model_type for s in ("mamba", "jamba", "zamba", "falcon_h1", "nemotron_h"))):
        detail = f" (layer types {non_attention})" if non_attention else ""
        raise UnsupportedModelError(
            f"{source}: Mamba/hybrid model{detail} (model_type {model_type!r}): recurrent layers keep a "
            "fixed state per sequence rather than KV per token; not modelled")
    if any(config.get(k) for k in _MOE_KEYS) or "moe" in model_type or model_type == "mixtral":
        raise UnsupportedModelError(
            f"{source}: mixture-of-experts model (model_type {model_type!r}): weights held and weights read "
            "per token differ; not modelled")
    if model_type not in SUPPORTED_MODEL_TYPES:
        raise UnsupportedModelError(
            f"{source}: model_type {model_type!r} is not supported; supported: {', '.join(SUPPORTED_MODEL_TYPES)}")


def _layer_windows(config: dict[str, Any], num_layers: int, source: str) -> tuple[int | None, ...]:
    window = config.get("sliding_window")
    layer_types = config.get("layer_types")
    if layer_types is not None:
        if len(layer_types) != num_layers:
            raise UnsupportedModelError(f"{source}: layer_types has {len(layer_types)} entries for {num_layers} layers")
        if "sliding_attention" in layer_types and not isinstance(window, int):
            raise UnsupportedModelError(f"{source}: sliding_attention layers but no integer sliding_window")
        return tuple(window if t == "sliding_attention" else None for t in layer_types)
    if window is None:
        return (None,) * num_layers
    if not isinstance(window, int) or window <= 0:
        raise UnsupportedModelError(f"{source}: sliding_window must be a positive integer or null, got {window!r}")
    model_type = config.get("model_type")
    if model_type in ("qwen2", "qwen3"):
        # Qwen writes a sliding_window even when it is off; when on, layers from max_window_layers up slide.
        if not config.get("use_sliding_window", False):
            return (None,) * num_layers
        first_sliding = int(config.get("max_window_layers", num_layers))
        return tuple(window if i >= first_sliding else None for i in range(num_layers))
    if model_type == "llama":
        return (None,) * num_layers
    return (window,) * num_layers  # Mistral: every layer slides


def model_from_hf_config(config: dict[str, Any], *, name: str | None = None) -> ModelConfig:
    """Read the fields the formulas need from a parsed HF `config.json`; refuse what they cannot model."""
    source = name or str(config.get("_name_or_path") or config.get("model_type") or "config")
    _refuse_unmodelled(config, source)
    num_layers = _int(config, "num_hidden_layers", source)
    hidden = _int(config, "hidden_size", source)
    num_heads = _int(config, "num_attention_heads", source)
    num_kv_heads = config.get("num_key_value_heads") or num_heads  # absent = multi-head attention
    head_dim = config.get("head_dim") or hidden // num_heads
    model_type = config["model_type"]
    try:
        return ModelConfig(
            name=source,
            num_layers=num_layers,
            hidden_size=hidden,
            num_heads=num_heads,
            num_kv_heads=int(num_kv_heads),
            head_dim=int(head_dim),
            intermediate_size=_int(config, "intermediate_size", source),
            vocab_size=_int(config, "vocab_size", source),
            tie_word_embeddings=bool(config.get("tie_word_embeddings", False)),
            qkv_bias=model_type == "qwen2" or bool(config.get("attention_bias", False)),
            qk_norm=model_type == "qwen3",
            layer_windows=_layer_windows(config, num_layers, source),
            max_position_embeddings=config.get("max_position_embeddings"),
        )
    except ValueError as exc:
        raise UnsupportedModelError(str(exc)) from exc


def load_model_config(path: str | Path) -> ModelConfig:
    """Load `config.json` (or a model directory holding one)."""
    p = Path(path)
    if p.is_dir():
        p = p / "config.json"
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"no config.json at {p}") from exc
    except json.JSONDecodeError as exc:
        raise UnsupportedModelError(f"{p}: not valid JSON ({exc})") from exc
    if not isinstance(raw, dict):
        raise UnsupportedModelError(f"{p}: config.json must hold a JSON object")
    return model_from_hf_config(raw, name=str(raw.get("_name_or_path") or p.parent.name or p.name))
