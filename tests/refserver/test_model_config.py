"""The reference server builds its model from `metrics.model`'s ModelConfig and refuses what it cannot run."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from typing import Any

import pytest

import metrics.model.config as shared
import refserver.model
from refserver.model.config import (
    DEFAULT_MAX_POSITIONS,
    check_servable,
    config_from_hf,
    max_positions,
    tiny_config,
)

LLAMA: dict[str, Any] = {
    "model_type": "llama", "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 261, "max_position_embeddings": 512,
    "rms_norm_eps": 1e-6, "bos_token_id": 256, "eos_token_id": 257, "hidden_act": "silu",
}


def test_one_model_config_for_capacity_sim_and_server() -> None:
    assert refserver.model.ModelConfig is shared.ModelConfig
    assert refserver.model.RopeScaling is shared.RopeScaling
    assert isinstance(tiny_config(), shared.ModelConfig)
    # The server reads a Llama config.json exactly as `goodput plan` does.
    assert config_from_hf(LLAMA) == shared.model_from_hf_config(LLAMA)


def test_a_llama_config_without_max_positions_gets_the_llama_default() -> None:
    hf = {k: v for k, v in LLAMA.items() if k != "max_position_embeddings"}
    assert shared.model_from_hf_config(hf).max_position_embeddings is None
    assert config_from_hf(hf).max_position_embeddings == DEFAULT_MAX_POSITIONS == 2048


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({"model_type": "qwen2"}, "Llama family only"),
        ({"model_type": "mistral"}, "Llama family only"),
        ({"hidden_act": "gelu"}, "unsupported hidden_act 'gelu'"),
        ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0}}, "unsupported rope scaling type 'yarn'"),
        ({"head_dim": 15, "num_attention_heads": 4}, "even for RoPE"),
    ],
)
def test_what_this_server_cannot_run_is_refused_with_its_own_message(extra: dict[str, Any], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        config_from_hf({**LLAMA, **extra})


def test_servable_needs_even_head_dim_and_known_positions() -> None:
    check_servable(tiny_config())
    with pytest.raises(ValueError, match="even for RoPE"):
        check_servable(dataclasses.replace(tiny_config(), head_dim=15))
    no_positions = dataclasses.replace(tiny_config(), max_position_embeddings=None)
    with pytest.raises(ValueError, match="max_position_embeddings is not set"):
        max_positions(no_positions)
    with pytest.raises(ValueError, match="max_position_embeddings is not set"):
        check_servable(no_positions)
    assert max_positions(tiny_config()) == 4096


def test_the_load_generator_never_imports_torch() -> None:
    # The reference server's engine factory imports its runners where it builds them, so the CLI
    # (which can embed the server) starts without torch.
    code = "import loadgen.cli.app, refserver.engine, sys; assert 'torch' not in sys.modules, 'torch imported'"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
