"""Model configs from HF config.json, refusal of unmodelled architectures, and the shipped presets."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from metrics.model.capacity import param_breakdown
from metrics.model.config import (
    RopeScaling,
    UnsupportedModelError,
    load_model_config,
    model_from_hf_config,
    special_token_ids,
)
from metrics.model.presets import GPU_PRESETS, MODEL_PRESETS, dtype_bytes, resolve_gpu, resolve_model

LLAMA31_8B_JSON: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
    "max_position_embeddings": 131072, "model_type": "llama", "num_attention_heads": 32,
    "num_hidden_layers": 32, "num_key_value_heads": 8, "tie_word_embeddings": False, "vocab_size": 128256,
}


def _write(tmp_path: Path, config: dict[str, Any]) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return path


def test_llama_config_json_equals_the_preset(tmp_path: Path) -> None:
    loaded = load_model_config(_write(tmp_path, LLAMA31_8B_JSON))
    preset = MODEL_PRESETS["Llama-3.1-8B"]
    assert param_breakdown(loaded) == param_breakdown(preset)
    assert (loaded.head_dim, loaded.num_kv_heads, loaded.layer_windows) == (128, 8, (None,) * 32)
    assert load_model_config(tmp_path).num_layers == 32  # a directory works too
    assert resolve_model(str(tmp_path / "config.json")).num_layers == 32


def test_explicit_head_dim_tied_embeddings_and_qwen_biases() -> None:
    qwen3 = model_from_hf_config({"model_type": "qwen3", "hidden_size": 1024, "num_attention_heads": 16,
                                  "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 28,
                                  "intermediate_size": 3072, "vocab_size": 151936, "tie_word_embeddings": True})
    assert qwen3.head_dim == 128 and qwen3.qk_norm and qwen3.tie_word_embeddings
    assert param_breakdown(qwen3).total == pytest.approx(0.596e9, rel=0.01)  # Qwen3-0.6B
    qwen2 = model_from_hf_config({"model_type": "qwen2", "hidden_size": 3584, "num_attention_heads": 28,
                                  "num_key_value_heads": 4, "num_hidden_layers": 28, "intermediate_size": 18944,
                                  "vocab_size": 152064, "sliding_window": 131072, "use_sliding_window": False,
                                  "max_window_layers": 28})
    assert qwen2.qkv_bias and not qwen2.has_sliding_window
    assert param_breakdown(qwen2) == param_breakdown(MODEL_PRESETS["Qwen2.5-7B"])


def test_sliding_window_rules_per_family() -> None:
    base = {"hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 4,
            "intermediate_size": 128, "vocab_size": 100}
    assert model_from_hf_config({**base, "model_type": "mistral", "sliding_window": 8}).layer_windows == (8,) * 4
    assert model_from_hf_config({**base, "model_type": "mistral", "sliding_window": None}).layer_windows == (None,) * 4
    qwen_on = {**base, "model_type": "qwen2", "sliding_window": 8, "use_sliding_window": True, "max_window_layers": 2}
    assert model_from_hf_config(qwen_on).layer_windows == (None, None, 8, 8)
    typed = {**base, "model_type": "qwen3", "sliding_window": 8,
             "layer_types": ["full_attention", "sliding_attention", "full_attention", "sliding_attention"]}
    assert model_from_hf_config(typed).layer_windows == (None, 8, None, 8)


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({"model_type": "deepseek_v3", "kv_lora_rank": 512, "q_lora_rank": 1536}, "MLA"),
        ({"model_type": "llama", "kv_lora_rank": 512}, "latent"),
        ({"model_type": "jamba", "attn_layer_indices": [4]}, "Mamba/hybrid"),
        ({"model_type": "qwen3_next", "layer_types": ["linear_attention", "full_attention"] * 2}, "Mamba/hybrid"),
        ({"model_type": "mixtral", "num_local_experts": 8}, "mixture-of-experts"),
        ({"model_type": "gpt2"}, "not supported"),
    ],
)
def test_unmodelled_architectures_are_refused_with_a_reason(extra: dict[str, Any], words: str) -> None:
    config = {"hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 4, "intermediate_size": 128,
              "vocab_size": 100, **extra}
    with pytest.raises(UnsupportedModelError, match=words):
        model_from_hf_config(config)


def test_malformed_configs_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedModelError, match="num_hidden_layers"):
        model_from_hf_config({**LLAMA31_8B_JSON, "num_hidden_layers": "32"})
    with pytest.raises(UnsupportedModelError, match="multiple"):
        model_from_hf_config({**LLAMA31_8B_JSON, "num_key_value_heads": 5})
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "config.json").write_text("{not json")
    with pytest.raises(UnsupportedModelError, match="JSON"):
        load_model_config(bad)
    with pytest.raises(FileNotFoundError):
        load_model_config(tmp_path / "missing")


def test_forward_pass_fields_are_read_beside_the_shape() -> None:
    llama = model_from_hf_config({**LLAMA31_8B_JSON, "rms_norm_eps": 1e-6, "rope_theta": 500000.0,
                                  "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                                   "high_freq_factor": 4.0,
                                                   "original_max_position_embeddings": 8192},
                                  "bos_token_id": 128000, "eos_token_id": [128001, 128009],
                                  "attention_bias": True, "mlp_bias": True})
    assert (llama.rms_norm_eps, llama.rope_theta) == (1e-6, 500000.0)
    assert llama.rope_scaling == RopeScaling("llama3", 8.0, 1.0, 4.0, 8192)
    assert llama.bos_token_id == 128000 and llama.eos_token_ids == (128001, 128009)
    assert llama.eos_token_id == 128001
    assert llama.attention_bias and llama.mlp_bias and llama.qkv_bias
    assert llama.max_position_embeddings == 131072
    plain = model_from_hf_config(LLAMA31_8B_JSON)
    assert (plain.rms_norm_eps, plain.rope_theta, plain.rope_scaling) == (1e-5, 10000.0, None)
    assert (plain.bos_token_id, plain.eos_token_ids, plain.eos_token_id) == (None, (), None)
    assert not (plain.attention_bias or plain.mlp_bias)
    # The shape the capacity formulas read does not depend on any of these.
    assert param_breakdown(plain) == param_breakdown(dataclasses.replace(llama, attention_bias=False,
                                                                         qkv_bias=False, mlp_bias=False))


def test_rope_in_both_config_layouts_and_unknown_kinds_kept_by_name() -> None:
    # transformers >= 5 writes rope_parameters with theta inside.
    new = model_from_hf_config({**LLAMA31_8B_JSON, "rope_parameters": {"rope_type": "linear", "factor": 2.0,
                                                                        "rope_theta": 1e6}})
    assert (new.rope_theta, new.rope_scaling) == (1e6, RopeScaling("linear", 2.0))
    default = model_from_hf_config({**LLAMA31_8B_JSON, "rope_parameters": {"rope_type": "default",
                                                                            "rope_theta": 5e5}})
    assert (default.rope_theta, default.rope_scaling) == (5e5, None)
    # Capacity arithmetic does not need RoPE: a yarn Qwen is still planned; serving it is another matter.
    qwen = model_from_hf_config({"model_type": "qwen2", "hidden_size": 3584, "num_attention_heads": 28,
                                 "num_key_value_heads": 4, "num_hidden_layers": 28, "intermediate_size": 18944,
                                 "vocab_size": 152064, "rope_scaling": {"type": "yarn", "factor": 4.0}})
    assert qwen.rope_scaling is not None and qwen.rope_scaling.kind == "yarn" and qwen.rope_scaling.factor == 4.0
    assert param_breakdown(qwen) == param_breakdown(MODEL_PRESETS["Qwen2.5-7B"])


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({"eos_token_id": "</s>"}, "eos_token_id must be an integer"),
        ({"eos_token_id": [2, None]}, "eos_token_id must be an integer"),
        ({"bos_token_id": 1.5}, "bos_token_id must be an integer"),
        ({"rms_norm_eps": "tiny"}, "rms_norm_eps"),
        ({"rope_scaling": {"rope_type": "llama3", "factor": 8.0}}, "original_max_position_embeddings"),
        ({"rope_scaling": {"rope_type": "linear"}}, "factor"),
        ({"rope_scaling": "linear"}, "rope_scaling must be an object"),
        ({"max_position_embeddings": 0}, "max_position_embeddings"),
    ],
)
def test_malformed_forward_pass_fields_are_refused(extra: dict[str, Any], words: str) -> None:
    with pytest.raises(UnsupportedModelError, match=words):
        model_from_hf_config({**LLAMA31_8B_JSON, **extra})


def test_special_token_ids_take_one_id_a_list_or_none() -> None:
    assert special_token_ids({"bos_token_id": 1, "eos_token_id": 2}) == (1, (2,))
    assert special_token_ids({"eos_token_id": [2, 7]}) == (None, (2, 7))
    assert special_token_ids({}) == (None, ())


def test_presets_resolve_by_name_and_unknown_names_fail() -> None:
    assert resolve_model("llama-3.1-8b") is MODEL_PRESETS["Llama-3.1-8B"]
    assert resolve_gpu("h100_sxm") is GPU_PRESETS["H100-SXM"]
    with pytest.raises(ValueError, match="unknown model"):
        resolve_model("no-such-model")
    with pytest.raises(ValueError, match="unknown GPU"):
        resolve_gpu("V100")
    assert dtype_bytes("BF16") == 2 and dtype_bytes("fp8") == 1
    with pytest.raises(ValueError, match="unknown dtype"):
        dtype_bytes("int3")


def test_gpu_presets_cover_the_listed_parts_with_sane_ratios() -> None:
    assert set(GPU_PRESETS) == {"H100-SXM", "H100-PCIe", "H200", "A100-40GB", "A100-80GB", "L40S", "L4",
                                "MI300X", "B200"}
    for gpu in GPU_PRESETS.values():
        ridge = gpu.peak_flops / gpu.bandwidth  # FLOPs per byte where compute starts to bind
        assert 100 < ridge < 500, gpu.name
        assert gpu.source
