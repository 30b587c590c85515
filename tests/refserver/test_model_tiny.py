"""The tiny model, KV sizing arithmetic and RoPE scaling."""

from __future__ import annotations

import dataclasses
import time

import pytest

torch = pytest.importorskip("torch")
torch.set_num_threads(1)  # the tiny model's ops are too small to share; threads only contend

from metrics.model.capacity import blocks_for_tokens, kv_bytes_per_block, kv_bytes_per_token  # noqa: E402
from metrics.model.config import ModelConfig, RopeScaling  # noqa: E402
from refserver.engine.config import EngineConfig, choose_num_blocks  # noqa: E402
from refserver.model import tiny_config, tiny_model  # noqa: E402
from refserver.model.config import TINY_EOS_ID, TINY_SPECIAL_IDS  # noqa: E402
from refserver.model.rope import rope_inv_freq  # noqa: E402


def test_tiny_model_is_deterministic_and_quick() -> None:
    t0 = time.perf_counter()
    a = tiny_model(0, device="cpu")
    assert time.perf_counter() - t0 < 30  # "a second or two" on an idle machine; generous when loaded
    b = tiny_model(0, device="cpu")
    c = tiny_model(1, device="cpu")
    for (name, pa), (_, pb), (_, pc) in zip(a.named_parameters(), b.named_parameters(), c.named_parameters(), strict=True):
        assert torch.equal(pa, pb), name
        assert not torch.equal(pa, pc), name
    assert a.forward_reference([1, 2, 3]).shape == (3, 261)


def test_tiny_config_shape_and_specials() -> None:
    cfg = tiny_config()
    assert cfg.vocab_size == 256 + len(TINY_SPECIAL_IDS) == 261
    assert cfg.num_heads == 4 and cfg.num_kv_heads == 2 and cfg.max_position_embeddings == 4096
    assert cfg.eos_token_id == TINY_EOS_ID == TINY_SPECIAL_IDS["eos"]
    assert sorted(TINY_SPECIAL_IDS.values()) == list(range(256, 261))


def test_tied_tiny_model_shares_embedding_and_head() -> None:
    m = tiny_model(0, config=dataclasses.replace(tiny_config(), tie_word_embeddings=True), device="cpu")
    assert m.lm_head.weight is m.model.embed_tokens.weight


def test_kv_bytes_per_token_matches_seed_f5_example() -> None:
    cfg = ModelConfig(name="llama-8b", vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_layers=32,
                      num_heads=32, num_kv_heads=8, head_dim=128, max_position_embeddings=8192)
    assert kv_bytes_per_token(cfg, kv_dtype_bytes=2) == 131072  # 128 KiB per token in BF16
    assert blocks_for_tokens(17, 16) == 2 and blocks_for_tokens(16, 16) == 1


def test_num_blocks_from_budget_and_cap() -> None:
    cfg = tiny_config()
    per_block = kv_bytes_per_block(cfg, block_size=16, kv_dtype_bytes=4)
    assert per_block == 8192  # 2 · 2 layers · 2 kv heads · 16 dims · 4 bytes · 16 slots
    assert choose_num_blocks(EngineConfig(num_blocks=7), cfg, 4, None) == 7
    assert choose_num_blocks(EngineConfig(kv_cache_bytes=40 * per_block + 5), cfg, 4, None) == 40
    # Never more than max_num_seqs full contexts: 2 × 4096/16 blocks.
    assert choose_num_blocks(EngineConfig(max_num_seqs=2), cfg, 4, None) == 512
    assert choose_num_blocks(EngineConfig(max_num_seqs=1000), cfg, 4, 10 * per_block) == 8  # 80% of free memory
    with pytest.raises(ValueError, match="smaller than one block"):
        choose_num_blocks(EngineConfig(kv_cache_bytes=100), cfg, 4, None)


def test_linear_rope_scaling_divides_frequencies() -> None:
    plain = rope_inv_freq(16, 10000.0, None)
    assert torch.allclose(rope_inv_freq(16, 10000.0, RopeScaling("linear", 4.0)), plain / 4)


def test_bad_configs_are_refused() -> None:
    with pytest.raises(ValueError, match="multiple of num_kv_heads"):
        dataclasses.replace(tiny_config(), num_kv_heads=3)
    with pytest.raises(ValueError, match="even for RoPE"):
        tiny_model(0, config=dataclasses.replace(tiny_config(), head_dim=15), device="cpu")
    with pytest.raises(ValueError, match="runner"):
        EngineConfig(runner="tpu")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unsupported dtype"):
        tiny_model(0, dtype="int8", device="cpu")
