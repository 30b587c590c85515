"""KV, paging and memory arithmetic, checked against the seed's worked examples (F2, F5, F6)."""

from __future__ import annotations

import pytest

from metrics.model.capacity import (
    GIB,
    activation_bytes,
    blocks_for_tokens,
    blocks_for_window,
    k_elements_per_token_per_layer,
    kv_bytes_for_sequence,
    kv_bytes_per_block,
    kv_bytes_per_token,
    kv_bytes_per_token_per_layer,
    kv_bytes_per_token_uniform,
    kv_heads_per_rank,
    max_sequences_in_pool,
    paged_kv_bytes_for_sequence,
    paged_usage,
    param_breakdown,
    plan_memory,
    usable_memory_bytes,
    weights_bytes,
)
from metrics.model.config import ModelConfig
from metrics.model.presets import GPU_PRESETS, MODEL_PRESETS


def _tiny(**overrides: object) -> ModelConfig:
    fields: dict[str, object] = dict(name="tiny", num_layers=4, hidden_size=64, num_heads=4, num_kv_heads=2,
                                     head_dim=16, intermediate_size=128, vocab_size=100)
    fields.update(overrides)
    return ModelConfig(**fields)  # type: ignore[arg-type]


def test_f2_exercise_k_elements_and_kv_bytes_per_layer() -> None:
    # D=4096, Hq=32, Hkv=8 → d=128; 1024 K elements; 4096 bytes of K+V per layer in BF16.
    head_dim = 4096 // 32
    assert head_dim == 128
    assert k_elements_per_token_per_layer(8, head_dim) == 1024
    assert kv_bytes_per_token_per_layer(8, head_dim, 2) == 4096


def test_f5_example_128_kib_per_token_and_1_gib_for_8192_tokens() -> None:
    per_token = kv_bytes_per_token_uniform(32, 8, 128, 2)
    assert per_token == 131072 == 128 * 1024
    model = MODEL_PRESETS["Llama-3.1-8B"]
    assert kv_bytes_per_token(model, kv_dtype_bytes=2) == per_token
    assert kv_bytes_for_sequence(model, 8192, kv_dtype_bytes=2) == GIB


def test_f5_paging_example_17_and_31_tokens_in_blocks_of_16() -> None:
    usage = paged_usage([17, 31], 16)
    assert (usage.blocks, usage.reserved_slots, usage.used_slots, usage.unused_slots) == (4, 64, 48, 16)
    assert usage.fragmentation == pytest.approx(0.25)
    assert blocks_for_tokens(17, 16) == 2
    assert blocks_for_tokens(0, 16) == 0


def test_prefix_sharing_counts_shared_full_blocks_once() -> None:
    # Seed F5: two requests share their first 32 tokens, block size 16: two blocks are physical once.
    alone = paged_usage([40, 40], 16)
    shared = paged_usage([40, 40], 16, shared_prefix_tokens=32)
    assert alone.blocks == 6
    assert shared.blocks == 4
    assert shared.used_slots == 32 + 8 + 8
    # A partial block of the prefix is not shareable: 20 shared tokens still share only one block.
    assert paged_usage([40, 40], 16, shared_prefix_tokens=20).blocks == 5
    with pytest.raises(ValueError):
        paged_usage([10, 40], 16, shared_prefix_tokens=20)


def test_sliding_window_layers_keep_at_most_the_window() -> None:
    mistral = MODEL_PRESETS["Mistral-7B"]
    per_token = kv_bytes_per_token(mistral, kv_dtype_bytes=2)
    assert kv_bytes_for_sequence(mistral, 1000, kv_dtype_bytes=2) == 1000 * per_token
    assert kv_bytes_for_sequence(mistral, 10_000, kv_dtype_bytes=2) == 4096 * per_token
    # Half the layers sliding (window 8), half full: a 20-token sequence keeps 2·20 + 2·8 token-layers.
    mixed = _tiny(layer_windows=(None, 8, None, 8))
    per_layer = kv_bytes_per_token_per_layer(2, 16, 2)
    assert kv_bytes_for_sequence(mixed, 20, kv_dtype_bytes=2) == per_layer * (20 + 8 + 20 + 8)


def test_sliding_window_blocks_include_the_straddling_block() -> None:
    assert blocks_for_window(100, 16, 32) == 3  # 32 tokens not block-aligned span up to 3 blocks
    assert blocks_for_window(20, 16, 32) == 2
    assert blocks_for_window(100, 16, None) == 7
    mixed = _tiny(layer_windows=(None, 32, None, 32))
    block_bytes = 16 * kv_bytes_per_token_per_layer(2, 16, 2)
    assert paged_kv_bytes_for_sequence(mixed, 100, block_size=16, kv_dtype_bytes=2) == block_bytes * (7 + 3 + 7 + 3)


@pytest.mark.parametrize("name", sorted(MODEL_PRESETS))
def test_a_kv_block_is_block_size_tokens_and_what_one_block_of_a_sequence_pins(name: str) -> None:
    # The reference server sizes its pool and the sim engine its blocks with kv_bytes_per_block; a
    # sequence of exactly one block pins that much on every layer, sliding or not (windows are >= 1).
    model = MODEL_PRESETS[name]
    for block_size in (1, 16, 32):
        for tp in (1, 2, 8):
            per_block = kv_bytes_per_block(model, block_size=block_size, kv_dtype_bytes=2, tp=tp)
            assert per_block == block_size * kv_bytes_per_token(model, kv_dtype_bytes=2, tp=tp)
            assert per_block == paged_kv_bytes_for_sequence(model, block_size, block_size=block_size,
                                                            kv_dtype_bytes=2, tp=tp)
    # 2 layers · 2 KV heads · 16 dims · K and V · 4 bytes · 16 slots.
    assert kv_bytes_per_block(_tiny(num_layers=2), block_size=16, kv_dtype_bytes=4) == 8192


def test_tp_splits_kv_heads_and_replicates_when_fewer_heads_than_ranks() -> None:
    assert kv_heads_per_rank(8, 1) == 8
    assert kv_heads_per_rank(8, 4) == 2
    assert kv_heads_per_rank(8, 8) == 1
    assert kv_heads_per_rank(4, 8) == 1  # replicated: each rank still holds a whole head
    qwen = MODEL_PRESETS["Qwen2.5-7B"]  # 4 KV heads
    per_rank_tp4 = kv_bytes_per_token(qwen, kv_dtype_bytes=2, tp=4)
    assert kv_bytes_per_token(qwen, kv_dtype_bytes=2, tp=8) == per_rank_tp4  # not halved past Hkv
    assert kv_bytes_per_token(qwen, kv_dtype_bytes=2, tp=1) == 4 * per_rank_tp4
    with pytest.raises(ValueError):
        kv_heads_per_rank(8, 3)
    with pytest.raises(ValueError):
        kv_heads_per_rank(4, 6)


def test_f6_weights_8b_params_bf16_is_16_gb_about_14_90_gib() -> None:
    assert weights_bytes(8e9, 2) == 16e9
    assert weights_bytes(8e9, 2) / GIB == pytest.approx(14.90, abs=0.005)


def test_preset_param_counts_match_published_sizes() -> None:
    assert param_breakdown(MODEL_PRESETS["Llama-3.1-8B"]).total == pytest.approx(8.03e9, rel=0.01)
    assert param_breakdown(MODEL_PRESETS["Llama-3.1-8B"]).total == 8_030_261_248
    assert param_breakdown(MODEL_PRESETS["Llama-3.1-70B"]).total == pytest.approx(70.6e9, rel=0.01)
    assert param_breakdown(MODEL_PRESETS["Qwen2.5-7B"]).total == pytest.approx(7.61e9, rel=0.01)
    assert param_breakdown(MODEL_PRESETS["Mistral-7B"]).total == pytest.approx(7.24e9, rel=0.01)


def test_param_breakdown_tied_head_biases_and_tp_shards() -> None:
    untied = param_breakdown(_tiny())
    tied = param_breakdown(_tiny(tie_word_embeddings=True))
    assert untied.lm_head == 100 * 64 and tied.lm_head == 0
    assert untied.total - tied.total == 100 * 64
    biased = param_breakdown(_tiny(qkv_bias=True))
    assert biased.attention - untied.attention == 4 * (4 + 2 * 2) * 16
    tp2 = param_breakdown(_tiny(), tp=2)
    assert tp2.mlp * 2 == untied.mlp
    assert tp2.norms == untied.norms  # replicated on every rank
    with pytest.raises(ValueError):
        param_breakdown(_tiny(), tp=3)


def test_activation_estimate_scales_with_step_tokens_not_layers() -> None:
    one = activation_bytes(_tiny(), batched_tokens=100, max_num_seqs=10, dtype_bytes=2)
    deeper = activation_bytes(_tiny(num_layers=8, layer_windows=()), batched_tokens=100, max_num_seqs=10,
                              dtype_bytes=2)
    assert one == deeper
    # Per token: 2D = 128, q/attn-out/k/v (4+4+2+2)·16 = 192, 3F = 384 → 704 elements · 2 bytes, ·100 tokens,
    # plus 10 FP32 logit rows of V = 100.
    assert one == 140_800 + 4_000


def test_plan_memory_max_sequences_fill_the_pool() -> None:
    model, gpu = MODEL_PRESETS["Llama-3.1-8B"], GPU_PRESETS["H100-SXM"]
    plan = plan_memory(model, memory_bytes=gpu.memory_bytes, seq_tokens=2048, concurrency=10)
    assert plan.budget == usable_memory_bytes(gpu.memory_bytes, 0.9)
    assert plan.weights == 2 * 8_030_261_248
    assert plan.kv_per_sequence == 2048 * 131072
    pool = plan.budget - plan.weights - plan.activation - plan.overhead
    assert plan.max_sequences * plan.kv_per_sequence <= pool < (plan.max_sequences + 1) * plan.kv_per_sequence
    assert plan.headroom == pool - 10 * plan.kv_per_sequence
    # A 70B model does not fit one 80 GB GPU: nothing fits and the headroom is negative.
    big = plan_memory(MODEL_PRESETS["Llama-3.1-70B"], memory_bytes=gpu.memory_bytes, seq_tokens=2048)
    assert big.max_sequences == 0 and big.headroom < 0
    # ... but does at TP=4, where each rank holds a quarter of the weights.
    assert plan_memory(MODEL_PRESETS["Llama-3.1-70B"], memory_bytes=gpu.memory_bytes, seq_tokens=2048,
                       tp=4).max_sequences > 0


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError):
        usable_memory_bytes(100, 1.5)
    with pytest.raises(ValueError):
        max_sequences_in_pool(100, 0)
    with pytest.raises(ValueError):
        blocks_for_tokens(5, 0)
