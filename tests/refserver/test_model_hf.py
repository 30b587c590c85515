"""Our Llama forward equals transformers' LlamaForCausalLM on the same weights (and tests the loader)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
torch.set_num_threads(1)  # the tiny model's ops are too small to share; threads only contend
transformers = pytest.importorskip("transformers")

from refserver.model import config_from_hf, load_model  # noqa: E402
from refserver.model.rope import rope_inv_freq  # noqa: E402


def _save_hf_model(tmp_path: Path, *, seed: int, shard: bool = False, **overrides: Any) -> Any:
    kwargs: dict[str, Any] = dict(
        vocab_size=261, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=512, rms_norm_eps=1e-6, eos_token_id=257, bos_token_id=256,
    )
    kwargs.update(overrides)
    torch.manual_seed(seed)
    hf = transformers.LlamaForCausalLM(transformers.LlamaConfig(**kwargs)).eval()
    with torch.no_grad():  # HF's init leaves norms at exactly 1; perturb so their loading is tested too
        for name, p in hf.named_parameters():
            if name.endswith("norm.weight"):
                p.add_(0.1 * torch.randn_like(p))
    hf.save_pretrained(tmp_path, max_shard_size="40KB" if shard else "5GB")
    return hf


def _compare(hf: Any, tmp_path: Path, seq_len: int = 40) -> None:
    ours = load_model(tmp_path, dtype="float32", device="cpu")
    ids = torch.randint(0, 261, (seq_len,), generator=torch.Generator().manual_seed(1)).tolist()
    with torch.no_grad():
        want = hf(torch.tensor([ids])).logits[0]
    got = ours.forward_reference(ids)
    assert got.shape == want.shape
    assert torch.allclose(got, want, atol=1e-4, rtol=0), (got - want).abs().max()


def test_logits_match_transformers_untied(tmp_path: Path) -> None:
    _compare(_save_hf_model(tmp_path, seed=0), tmp_path)


def test_logits_match_transformers_tied_and_sharded(tmp_path: Path) -> None:
    hf = _save_hf_model(tmp_path, seed=1, shard=True, tie_word_embeddings=True)
    assert (tmp_path / "model.safetensors.index.json").is_file()
    _compare(hf, tmp_path)


def test_logits_match_transformers_llama3_rope_scaling(tmp_path: Path) -> None:
    scaling = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
               "original_max_position_embeddings": 32}
    hf = _save_hf_model(tmp_path, seed=2, rope_scaling=scaling, rope_theta=500000.0)
    cfg = config_from_hf(json.loads((tmp_path / "config.json").read_text()))
    assert cfg.rope_scaling is not None and cfg.rope_scaling.kind == "llama3"
    assert cfg.rope_theta == 500000.0
    # The scaling must actually change some frequencies for this test to mean anything.
    assert not torch.equal(rope_inv_freq(16, 500000.0, cfg.rope_scaling), rope_inv_freq(16, 500000.0, None))
    _compare(hf, tmp_path, seq_len=80)


def test_unknown_rope_scaling_is_refused() -> None:
    hf = {"model_type": "llama", "vocab_size": 10, "hidden_size": 8, "intermediate_size": 8,
          "num_hidden_layers": 1, "num_attention_heads": 2, "rope_scaling": {"rope_type": "yarn", "factor": 4.0}}
    with pytest.raises(ValueError, match="unsupported rope scaling type 'yarn'"):
        config_from_hf(hf)


def test_other_families_are_refused() -> None:
    with pytest.raises(ValueError, match="Llama family only"):
        config_from_hf({"model_type": "qwen2"})


def test_missing_weight_is_a_clear_error(tmp_path: Path) -> None:
    from safetensors.torch import load_file, save_file

    _save_hf_model(tmp_path, seed=3)
    weights = load_file(str(tmp_path / "model.safetensors"))
    del weights["model.layers.1.mlp.up_proj.weight"]
    save_file(weights, str(tmp_path / "model.safetensors"))
    with pytest.raises(ValueError, match="lacks 1 weights"):
        load_model(tmp_path, device="cpu")


def test_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"config\.json"):
        load_model(tmp_path, device="cpu")
