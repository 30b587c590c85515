"""The shape of a dense decoder model: one `ModelConfig` for the capacity and roofline formulas, the sim
engine and the reference server's torch model.

`ModelConfig` is built from a Hugging Face `config.json` (Llama, Mistral, Qwen2, Qwen3 families) or
taken from `metrics.model.presets`. Configs whose memory or compute the formulas here cannot describe are
refused with `UnsupportedModelError` rather than approximated:

- MLA (DeepSeek-V2/V3, Kimi): the cache holds a compressed latent of `kv_lora_rank + qk_rope_head_dim`
  per token per layer, not 2·Hkv·d — the KV-per-token formula would overstate it several-fold.
- Mamba / hybrid (Jamba, Zamba, Falcon-H1, Nemotron-H, Qwen3-Next's linear attention): recurrent layers
  keep a fixed-size state per sequence that does not grow with tokens, so "bytes per token" is wrong.
- Mixture of experts: weights held and weights read per token differ (only active experts are read),
  which changes both the weight memory and the bytes each step reads.

The fields a forward pass needs beyond the shape (norm epsilon, RoPE, biases, special token ids) are
read here too, so the reference server builds its model from the same object; which of them it can
actually run (the Llama family, silu, linear or llama3 RoPE scaling) it decides where it loads a model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeGuard

if TYPE_CHECKING:
    from metrics.results import Json

SUPPORTED_MODEL_TYPES = ("llama", "mistral", "qwen2", "qwen3")

_MLA_KEYS = ("kv_lora_rank", "q_lora_rank")
_SSM_KEYS = ("ssm_cfg", "mamba_d_state", "mamba_expand", "hybrid_override_pattern", "layers_block_type",
             "attn_layer_indices", "linear_num_value_heads")
_MOE_KEYS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_intermediate_size")


class UnsupportedModelError(ValueError):
    """The config describes an architecture the capacity formulas cannot model faithfully."""


@dataclass(frozen=True, slots=True)
class RopeScaling:
    """RoPE frequency scaling as `config.json` declares it. `kind` is the HF `rope_type` ("linear",
    "llama3", "yarn", ...); the llama3 band fields keep their Llama 3.1 values for other kinds."""

    kind: str
    factor: float
    low_freq_factor: float = 1.0
    high_freq_factor: float = 4.0
    original_max_position_embeddings: int = 8192


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """Dimensions of a dense GQA decoder — L, D, Hq, Hkv, d, F, V — and what a forward pass needs besides."""

    name: str
    num_layers: int  # L
    hidden_size: int  # D
    num_heads: int  # Hq
    num_kv_heads: int  # Hkv
    head_dim: int  # d (not always D / Hq: Qwen3 and some Mistrals set it explicitly)
    intermediate_size: int  # F
    vocab_size: int  # V
    tie_word_embeddings: bool = False
    qkv_bias: bool = False  # biases on q/k/v (Qwen2; `attention_bias` configs): counted as parameters
    qk_norm: bool = False  # Qwen3 normalises q and k per head (2·d weights per layer)
    # Per layer: None = full attention, n = sliding window of n tokens (keeps at most n tokens of KV).
    layer_windows: tuple[int | None, ...] = ()
    max_position_embeddings: int | None = None  # None: the config does not say
    # What the forward pass needs beyond the shape (the reference server's torch model).
    rms_norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    rope_scaling: RopeScaling | None = None
    attention_bias: bool = False  # Llama's flag: q, k, v and o projections all carry a bias
    mlp_bias: bool = False
    bos_token_id: int | None = None
    eos_token_ids: tuple[int, ...] = ()  # every id that ends generation

    def __post_init__(self) -> None:
        for field_name in ("num_layers", "hidden_size", "num_heads", "num_kv_heads", "head_dim",
                           "intermediate_size", "vocab_size"):
            value = getattr(self, field_name)
            if not _is_int(value) or value <= 0:
                raise ValueError(f"{self.name}: {field_name} must be a positive integer, got {value!r}")
        if self.num_heads % self.num_kv_heads != 0:
            raise ValueError(f"{self.name}: num_heads {self.num_heads} is not a multiple of "
                             f"num_kv_heads {self.num_kv_heads}")
        positions = self.max_position_embeddings
        if positions is not None and (not _is_int(positions) or positions <= 0):
            raise ValueError(f"{self.name}: max_position_embeddings must be a positive integer or None, "
                             f"got {positions!r}")
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

    @property
    def eos_token_id(self) -> int | None:
        """The primary eos id (HF configs may list several; all of them stop generation)."""
        return self.eos_token_ids[0] if self.eos_token_ids else None


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _int(value: object, key: str, source: str) -> int:
    """`value`, config.json's `key`: an integer, or the model cannot be read."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise UnsupportedModelError(f"{source}: config.json needs an integer {key!r}, got {value!r}")
    return value


def _int_like(value: Json, key: str, source: str) -> int:
    """`value`, config.json's `key`, as `int()` reads it (a number or a numeral); a list, an object or null
    cannot be read as one."""
    if not isinstance(value, int | float | str):
        raise UnsupportedModelError(f"{source}: config.json needs an integer {key!r}, got {value!r}")
    return int(value)


def _layer_types(config: Mapping[str, Json], source: str) -> list[str] | None:
    """config.json's `layer_types` (one attention kind per layer); None when absent or null."""
    value = config.get("layer_types")
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise UnsupportedModelError(f"{source}: layer_types must be a list of strings, got {value!r}")
    return [t for t in value if isinstance(t, str)]


def _positions(value: Json, source: str) -> int | None:
    """config.json's `max_position_embeddings`: a positive integer or null (ModelConfig checks it is positive)."""
    if value is not None and not _is_int(value):
        raise UnsupportedModelError(f"{source}: max_position_embeddings must be a positive integer or None, "
                                    f"got {value!r}")
    return value


def _refuse_unmodelled(config: Mapping[str, Json], source: str) -> None:
    model_type = str(config.get("model_type", ""))
    if any(k in config for k in _MLA_KEYS) or model_type.startswith(("deepseek", "kimi")):
        raise UnsupportedModelError(
            f"{source}: multi-head latent attention (MLA, model_type {model_type!r}) caches a compressed "
            "latent per token, not 2·Hkv·d; the KV formula here would be wrong, so it is not modelled")
    layer_types = _layer_types(config, source) or []
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


def _layer_windows(config: Mapping[str, Json], num_layers: int, source: str) -> tuple[int | None, ...]:
    window = config.get("sliding_window")
    layer_types = _layer_types(config, source)
    if layer_types is not None:
        if len(layer_types) != num_layers:
            raise UnsupportedModelError(f"{source}: layer_types has {len(layer_types)} entries for {num_layers} layers")
        slide = window if isinstance(window, int) else None
        if "sliding_attention" in layer_types and slide is None:
            raise UnsupportedModelError(f"{source}: sliding_attention layers but no integer sliding_window")
        return tuple(slide if t == "sliding_attention" else None for t in layer_types)
    if window is None:
        return (None,) * num_layers
    if not isinstance(window, int) or window <= 0:
        raise UnsupportedModelError(f"{source}: sliding_window must be a positive integer or null, got {window!r}")
    model_type = config.get("model_type")
    if model_type in ("qwen2", "qwen3"):
        # Qwen writes a sliding_window even when it is off; when on, layers from max_window_layers up slide.
        if not config.get("use_sliding_window", False):
            return (None,) * num_layers
        first_sliding = _int_like(config.get("max_window_layers", num_layers), "max_window_layers", source)
        return tuple(window if i >= first_sliding else None for i in range(num_layers))
    if model_type == "llama":
        return (None,) * num_layers
    return (window,) * num_layers  # Mistral: every layer slides


def _number(value: object, key: str, source: str) -> float:
    """`value`, config.json's `key`: a number, or the model cannot be read."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UnsupportedModelError(f"{source}: config.json needs a number {key!r}, got {value!r}")
    return float(value)


def _rope_from_hf(config: Mapping[str, Json], source: str) -> tuple[float, RopeScaling | None]:
    """RoPE base and scaling. transformers >= 5 writes `rope_parameters` (theta inside); older configs
    write `rope_theta` and `rope_scaling`. Kinds other than linear and llama3 are kept by name only."""
    params = config.get("rope_parameters") or {}
    if not isinstance(params, dict):
        raise UnsupportedModelError(f"{source}: rope_parameters must be an object, got {params!r}")
    theta = _number(params.get("rope_theta", config.get("rope_theta", 10000.0)), "rope_theta", source)
    scaling = config.get("rope_scaling") or params or None
    if scaling is None:
        return theta, None
    if not isinstance(scaling, dict):
        raise UnsupportedModelError(f"{source}: rope_scaling must be an object, got {scaling!r}")
    kind = str(scaling.get("rope_type", scaling.get("type", "default")))
    if kind == "default":
        return theta, None
    if kind == "linear":
        return theta, RopeScaling(kind="linear", factor=_number(scaling.get("factor"), "factor", source))
    if kind == "llama3":
        original = scaling.get("original_max_position_embeddings")
        if not _is_int(original):
            raise UnsupportedModelError(f"{source}: llama3 rope scaling needs an integer "
                                        f"'original_max_position_embeddings', got {original!r}")
        return theta, RopeScaling(
            kind="llama3",
            factor=_number(scaling.get("factor"), "factor", source),
            low_freq_factor=_number(scaling.get("low_freq_factor"), "low_freq_factor", source),
            high_freq_factor=_number(scaling.get("high_freq_factor"), "high_freq_factor", source),
            original_max_position_embeddings=original,
        )
    factor = scaling.get("factor")
    return theta, RopeScaling(kind=kind, factor=_number(factor, "factor", source) if factor is not None else 1.0)


def _token_id(value: object, key: str, source: str) -> int:
    if not _is_int(value):
        raise UnsupportedModelError(f"{source}: {key} must be an integer token id, got {value!r}")
    return value


def special_token_ids(config: Mapping[str, Json], source: str = "config") -> tuple[int | None, tuple[int, ...]]:
    """(bos id, eos ids) of a HF config: `eos_token_id` may be one id, a list of them, or absent."""
    bos = config.get("bos_token_id")
    eos = config.get("eos_token_id")
    eos_list = eos if isinstance(eos, list) else ([] if eos is None else [eos])
    return (None if bos is None else _token_id(bos, "bos_token_id", source),
            tuple(_token_id(e, "eos_token_id", source) for e in eos_list))


def model_from_hf_config(config: Mapping[str, Json], *, name: str | None = None) -> ModelConfig:
    """Read a parsed HF `config.json` into a `ModelConfig`; refuse what the formulas cannot model."""
    source = name or str(config.get("_name_or_path") or config.get("model_type") or "config")
    _refuse_unmodelled(config, source)
    num_layers = _int(config.get("num_hidden_layers"), "num_hidden_layers", source)
    hidden = _int(config.get("hidden_size"), "hidden_size", source)
    num_heads = _int(config.get("num_attention_heads"), "num_attention_heads", source)
    num_kv_heads = config.get("num_key_value_heads") or num_heads  # absent = multi-head attention
    head_dim = config.get("head_dim") or hidden // num_heads
    model_type = config["model_type"]
    theta, rope_scaling = _rope_from_hf(config, source)
    bos, eos = special_token_ids(config, source)
    try:
        return ModelConfig(
            name=source,
            num_layers=num_layers,
            hidden_size=hidden,
            num_heads=num_heads,
            num_kv_heads=_int_like(num_kv_heads, "num_key_value_heads", source),
            head_dim=_int_like(head_dim, "head_dim", source),
            intermediate_size=_int(config.get("intermediate_size"), "intermediate_size", source),
            vocab_size=_int(config.get("vocab_size"), "vocab_size", source),
            tie_word_embeddings=bool(config.get("tie_word_embeddings", False)),
            qkv_bias=model_type == "qwen2" or bool(config.get("attention_bias", False)),
            qk_norm=model_type == "qwen3",
            layer_windows=_layer_windows(config, num_layers, source),
            max_position_embeddings=_positions(config.get("max_position_embeddings"), source),
            rms_norm_eps=_number(config.get("rms_norm_eps", 1e-5), "rms_norm_eps", source),
            rope_theta=theta,
            rope_scaling=rope_scaling,
            attention_bias=bool(config.get("attention_bias", False)),
            mlp_bias=bool(config.get("mlp_bias", False)),
            bos_token_id=bos,
            eos_token_ids=eos,
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
