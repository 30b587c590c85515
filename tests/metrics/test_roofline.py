"""Roofline formulas (seed F3, F4, F7): FLOPs, bytes, time bounds and the floors they imply."""

from __future__ import annotations

import pytest

from metrics.model.capacity import kv_bytes_per_token
from metrics.model.config import ModelConfig
from metrics.model.presets import GPU_PRESETS, MODEL_PRESETS, GpuSpec
from metrics.model.roofline import (
    SeqWork,
    StepCost,
    arithmetic_intensity,
    attainable_flops,
    attended_keys,
    compute_time_s,
    decode_step_cost,
    floors,
    memory_time_s,
    prefill_cost,
    step_cost,
    time_bound,
)

LLAMA8 = MODEL_PRESETS["Llama-3.1-8B"]
H100 = GPU_PRESETS["H100-SXM"]


def test_f7_weight_read_and_compute_times() -> None:
    assert memory_time_s(16e9, 2e12) == pytest.approx(8e-3)
    assert compute_time_s(16e9, 200e12) == pytest.approx(0.08e-3)
    teaching_gpu = GpuSpec("teaching", peak_flops=200e12, bandwidth=2e12, memory_bytes=80 * 2**30, source="seed F7")
    bound = time_bound(StepCost(flops=16e9, bytes=16e9), teaching_gpu)
    assert bound.seconds == pytest.approx(8e-3)
    assert bound.bound == "memory"
    assert time_bound(StepCost(flops=16e9, bytes=16e9), teaching_gpu, efficiency=0.5).seconds == pytest.approx(16e-3)


def test_roofline_attainable_and_intensity() -> None:
    assert arithmetic_intensity(16e9, 16e9) == 1.0
    assert attainable_flops(200e12, 2e12, 1.0) == 2e12
    assert attainable_flops(200e12, 2e12, 1000.0) == 200e12


def test_batch_b_raises_weight_intensity_to_about_b_flops_per_byte() -> None:
    # Seed F7: 2PB FLOPs over P·b bytes ≈ B at b = 2, when attention and KV are negligible (short context).
    for batch in (1, 8, 64):
        cost = decode_step_cost(LLAMA8, [0] * batch)
        assert cost.intensity == pytest.approx(batch, rel=0.01)


def test_attended_keys_is_the_causal_sum_with_window_cap() -> None:
    assert attended_keys(0, 4, None) == 1 + 2 + 3 + 4
    assert attended_keys(3, 1, None) == 4  # decode after 3 tokens attends to 4 keys (itself included)
    assert attended_keys(0, 10, 4) == 1 + 2 + 3 + 4 * 7
    assert attended_keys(5, 10, 7) == sum(min(t, 7) for t in range(6, 16))
    assert attended_keys(5, 0, None) == 0


# A model small enough to work by hand: L=1, D=4, Hq=Hkv=1, d=4, F=8, V=10. Matmul weights per layer:
# q,k,v 4·12 = 48, o 16, gate/up/down 3·4·8 = 96 → 160; norms 2·4 + final 4 = 12; lm_head 10·4 = 40.
# K+V per token per layer in BF16: 2·1·4·2 = 16 bytes.
TINY = ModelConfig(name="tiny", num_layers=1, hidden_size=4, num_heads=1, num_kv_heads=1, head_dim=4,
                   intermediate_size=8, vocab_size=10)


def test_prefill_cost_worked_by_hand() -> None:
    cost = prefill_cost(TINY, 3)
    # FLOPs: matmuls 2·160·3 = 960, lm_head for the last row 2·40 = 80, attention 4·1·4·(1+2+3) = 96.
    assert cost.flops == 1136
    # Bytes: weights (160 + 12 + 40) plus 3 embedding rows of 4, all ·2 = 448; 3 new K/V written, 3·16 = 48.
    assert cost.bytes == 496


def test_decode_cost_worked_by_hand() -> None:
    cost = decode_step_cost(TINY, [5])
    # FLOPs: 2·160 + 80 + attention over 6 keys 4·4·6 = 96.  Bytes: (212 + 4)·2 = 432, KV read 5 + written 1: 96.
    assert (cost.flops, cost.bytes) == (496, 528)


def test_mixed_step_worked_by_hand() -> None:
    cost = step_cost(TINY, [SeqWork(5, 1), SeqWork(2, 4, sampled=False)])
    # FLOPs: 2·160·5 = 1600, one sampled row 80, keys 6 + (3+4+5+6) = 24 → 384.
    # Bytes: (212 + 5·4)·2 = 464; KV (5+1) + (2+4) = 12 tokens · 16 = 192.
    assert (cost.flops, cost.bytes) == (2064, 656)


def test_sliding_window_layer_worked_by_hand() -> None:
    windowed = ModelConfig(name="w", num_layers=2, hidden_size=4, num_heads=1, num_kv_heads=1, head_dim=4,
                           intermediate_size=8, vocab_size=10, layer_windows=(None, 2))
    cost = prefill_cost(windowed, 4)
    # Keys: full layer 1+2+3+4 = 10, window-2 layer 1+2+2+2 = 7 → 4·4·17 = 272; matmuls 2·320·4 = 2560; head 80.
    # Bytes: (320 + 20 + 40 + 4·4)·2 = 792; 4 new tokens in 2 layers · 16 = 128.
    assert (cost.flops, cost.bytes) == (2912, 920)


def test_prefill_grows_faster_than_linearly() -> None:
    assert prefill_cost(LLAMA8, 8192).flops > 2 * prefill_cost(LLAMA8, 4096).flops


def test_second_sequence_in_a_decode_batch_adds_only_its_kv_and_an_embedding_row() -> None:
    one = decode_step_cost(LLAMA8, [1000])
    two = decode_step_cost(LLAMA8, [1000, 3000])
    per_token = kv_bytes_per_token(LLAMA8, kv_dtype_bytes=2)
    assert two.bytes - one.bytes == pytest.approx(3001 * per_token + LLAMA8.hidden_size * 2)


def test_mixed_step_is_the_sum_of_its_parts_less_shared_weights() -> None:
    decode = [SeqWork(500, 1), SeqWork(900, 1)]
    chunk = SeqWork(256, 256, sampled=False)  # a middle prefill chunk: real context, no logits
    mixed = step_cost(LLAMA8, [*decode, chunk])
    alone = step_cost(LLAMA8, decode)
    chunk_alone = step_cost(LLAMA8, [chunk])
    assert mixed.flops == pytest.approx(alone.flops + chunk_alone.flops)
    assert mixed.bytes < alone.bytes + chunk_alone.bytes
    # The chunk's context matters: the same chunk later in the prompt attends more keys.
    assert step_cost(LLAMA8, [SeqWork(4096, 256, False)]).flops > chunk_alone.flops


def test_prefix_cache_hit_cuts_prefill_cost() -> None:
    cold = prefill_cost(LLAMA8, 2048)
    warm = prefill_cost(LLAMA8, 2048, cached_tokens=1536)
    assert warm.flops < cold.flops / 3
    with pytest.raises(ValueError):
        prefill_cost(LLAMA8, 10, cached_tokens=11)


def test_sliding_window_caps_decode_kv_reads() -> None:
    mistral = MODEL_PRESETS["Mistral-7B"]
    at_window = decode_step_cost(mistral, [4096])
    far_beyond = decode_step_cost(mistral, [30000])
    assert far_beyond.bytes == at_window.bytes
    assert far_beyond.flops == at_window.flops


def test_tp_divides_per_rank_work() -> None:
    full = decode_step_cost(LLAMA8, [100] * 8)
    rank = decode_step_cost(LLAMA8, [100] * 8, tp=2)
    assert rank.flops == pytest.approx(full.flops / 2, rel=0.01)


def test_floors_single_stream_decode_is_memory_bound_and_prefill_compute_bound() -> None:
    result = floors(LLAMA8, H100, prompt_tokens=2048, output_tokens=128)
    assert result["prefill_bound"] == "compute"
    assert result["decode_bound"] == "memory"
    assert result["ttft_floor_s"] == pytest.approx(time_bound(prefill_cost(LLAMA8, 2048), H100).seconds)
    first = time_bound(decode_step_cost(LLAMA8, [2048]), H100).seconds
    last = time_bound(decode_step_cost(LLAMA8, [2048 + 126]), H100).seconds
    assert result["decode_first_step_s"] == pytest.approx(first)
    assert result["decode_last_step_s"] == pytest.approx(last)
    assert first < result["tpot_floor_s"] < last
    assert result["e2e_floor_s"] == pytest.approx(result["ttft_floor_s"] + 127 * result["tpot_floor_s"])
    # Batching raises the per-step time but not in proportion: throughput grows.
    batched = floors(LLAMA8, H100, prompt_tokens=2048, output_tokens=128, batch=32)
    assert batched["tpot_floor_s"] > result["tpot_floor_s"]
    assert batched["decode_tokens_per_s"] > 10 * result["decode_tokens_per_s"]


def test_floors_accepts_preset_names() -> None:
    assert floors("Llama-3.1-8B", "H100-SXM", 512, 64) == floors(LLAMA8, H100, 512, 64)
    with pytest.raises(ValueError, match="unknown GPU"):
        floors(LLAMA8, "TPU", 512, 64)


def test_floors_single_output_token_has_no_tpot() -> None:
    result = floors(LLAMA8, H100, prompt_tokens=16, output_tokens=1)
    assert result["tpot_floor_s"] is None
    assert result["e2e_floor_s"] == result["ttft_floor_s"]
    with pytest.raises(ValueError):
        floors(LLAMA8, H100, prompt_tokens=0, output_tokens=1)
    with pytest.raises(ValueError):
        time_bound(StepCost(1.0, 1.0), H100, efficiency=0.0)
