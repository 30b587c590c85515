"""Memory arithmetic of a served model: KV per token, paged blocks, weights, headroom.

The one home of this arithmetic: `goodput plan`, the roofline, the sim engine and the reference server's
KV pool all call these functions.

Every quantity is per tensor-parallel rank (`tp`), because that is what has to fit on one GPU; `tp=1`
gives the whole model. Under TP, attention heads and MLP columns split across ranks; KV heads split
too, but when there are fewer KV heads than ranks each rank still holds one full head (replication),
so KV does not shrink past Hkv ranks — "8 GPUs" never means KV ÷ 8.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from metrics.model.config import ModelConfig

GIB = 1024**3
# CUDA context, cuBLAS/NCCL workspaces, allocator slack: an allowance, not a measurement.
DEFAULT_OVERHEAD_BYTES = 1 * GIB
DEFAULT_BATCHED_TOKENS = 8192  # tokens in the largest step the engine schedules (activation peak)
DEFAULT_MAX_NUM_SEQS = 256  # sequences per step whose logits are materialised


# --- KV cache -----------------------------------------------------------------------------------------


def k_elements_per_token_per_layer(num_kv_heads: int, head_dim: int) -> int:
    """Elements of K (or of V) one token adds to one layer: Hkv × d."""
    return num_kv_heads * head_dim


def kv_bytes_per_token_per_layer(num_kv_heads: int, head_dim: int, dtype_bytes: int) -> int:
    """K and V of one token in one layer: 2 × Hkv × d × b."""
    return 2 * k_elements_per_token_per_layer(num_kv_heads, head_dim) * dtype_bytes


def kv_bytes_per_token_uniform(num_layers: int, num_kv_heads: int, head_dim: int, dtype_bytes: int) -> int:
    """KV per token of a homogeneous full-attention model: 2 × L × Hkv × d × b."""
    return num_layers * kv_bytes_per_token_per_layer(num_kv_heads, head_dim, dtype_bytes)


def kv_heads_per_rank(num_kv_heads: int, tp: int) -> int:
    """KV heads one rank stores: Hkv / TP, or one replicated head when Hkv < TP."""
    if tp < 1:
        raise ValueError(f"tensor parallel size must be >= 1, got {tp}")
    if num_kv_heads >= tp:
        if num_kv_heads % tp:
            raise ValueError(f"{num_kv_heads} KV heads do not split evenly over TP={tp}")
        return num_kv_heads // tp
    if tp % num_kv_heads:
        raise ValueError(f"TP={tp} is not a multiple of {num_kv_heads} KV heads, so they cannot be replicated evenly")
    return 1


def kv_bytes_per_token(model: ModelConfig, *, kv_dtype_bytes: int, tp: int = 1) -> int:
    """Bytes each new token adds on one rank while every layer still keeps it (below any window)."""
    heads = kv_heads_per_rank(model.num_kv_heads, tp)
    return model.num_layers * kv_bytes_per_token_per_layer(heads, model.head_dim, kv_dtype_bytes)


def kv_tokens_kept(tokens: int, window: int | None) -> int:
    """Tokens a layer keeps: all of them for full attention, at most the window for sliding layers."""
    return tokens if window is None else min(tokens, window)


def kv_bytes_for_sequence(model: ModelConfig, tokens: int, *, kv_dtype_bytes: int, tp: int = 1) -> int:
    """Logical KV of one sequence on one rank, summed per layer (sliding layers capped at the window)."""
    per_layer = kv_bytes_per_token_per_layer(kv_heads_per_rank(model.num_kv_heads, tp), model.head_dim,
                                             kv_dtype_bytes)
    return sum(per_layer * kv_tokens_kept(tokens, w) for w in model.layer_windows)


# --- paged blocks -------------------------------------------------------------------------------------


def blocks_for_tokens(tokens: int, block_size: int) -> int:
    """ceil(T / C): blocks one sequence of T tokens occupies."""
    if block_size < 1 or tokens < 0:
        raise ValueError(f"need block_size >= 1 and tokens >= 0, got {block_size}, {tokens}")
    return -(-tokens // block_size)


def kv_bytes_per_block(model: ModelConfig, *, block_size: int, kv_dtype_bytes: int, tp: int = 1) -> int:
    """Bytes of one paged KV block on one rank: C slots of KV per token, over every layer."""
    return block_size * kv_bytes_per_token(model, kv_dtype_bytes=kv_dtype_bytes, tp=tp)


def blocks_for_window(tokens: int, block_size: int, window: int | None) -> int:
    """Blocks a layer group must hold: a window of W tokens, not aligned to blocks, spans up to
    ceil((W − 1) / C) + 1 of them."""
    full = blocks_for_tokens(tokens, block_size)
    if window is None:
        return full
    return min(full, blocks_for_tokens(window - 1, block_size) + 1)


@dataclass(frozen=True, slots=True)
class PagedUsage:
    blocks: int  # physical blocks
    reserved_slots: int  # C × blocks
    used_slots: int  # tokens actually stored
    unused_slots: int  # internal fragmentation in tail blocks

    @property
    def fragmentation(self) -> float:
        return self.unused_slots / self.reserved_slots if self.reserved_slots else 0.0


def paged_usage(seq_lens: Sequence[int], block_size: int, *, shared_prefix_tokens: int = 0) -> PagedUsage:
    """Blocks = Σ ceil(T_i / C); with a prefix common to every sequence, its full blocks are physical
    once (only full blocks are shareable: a partial tail block is still being written)."""
    if any(t < shared_prefix_tokens for t in seq_lens):
        raise ValueError("every sequence must be at least as long as the shared prefix")
    shared_blocks = shared_prefix_tokens // block_size if len(seq_lens) > 1 else 0
    shared_tokens = shared_blocks * block_size
    blocks = shared_blocks + sum(blocks_for_tokens(t, block_size) - shared_blocks for t in seq_lens)
    used = shared_tokens + sum(t - shared_tokens for t in seq_lens) if seq_lens else 0
    reserved = blocks * block_size
    return PagedUsage(blocks=blocks, reserved_slots=reserved, used_slots=used, unused_slots=reserved - used)


def paged_kv_bytes_for_sequence(model: ModelConfig, tokens: int, *, block_size: int, kv_dtype_bytes: int,
                                tp: int = 1) -> int:
    """Bytes of whole blocks one sequence pins on one rank, per layer (sliding layers hold window blocks)."""
    per_layer_block = block_size * kv_bytes_per_token_per_layer(
        kv_heads_per_rank(model.num_kv_heads, tp), model.head_dim, kv_dtype_bytes)
    return sum(per_layer_block * blocks_for_window(tokens, block_size, w) for w in model.layer_windows)


# --- weights ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ParamBreakdown:
    embedding: int
    attention: int  # q, k, v, o projections and their biases, all layers
    mlp: int  # gate, up, down, all layers
    norms: int
    lm_head: int  # 0 when tied to the embedding

    @property
    def total(self) -> int:
        return self.embedding + self.attention + self.mlp + self.norms + self.lm_head

    @property
    def matmul(self) -> int:
        """Parameters used as matmul weights for every token (the embedding is a lookup)."""
        return self.attention + self.mlp


def param_breakdown(model: ModelConfig, *, tp: int = 1) -> ParamBreakdown:
    """Parameters one rank holds. Vocabulary, heads and MLP columns split over TP; norms replicate."""
    if model.num_heads % tp or model.intermediate_size % tp:
        raise ValueError(f"TP={tp} must divide num_heads {model.num_heads} and "
                         f"intermediate_size {model.intermediate_size}")
    d, hidden = model.head_dim, model.hidden_size
    q_heads, kv_heads = model.num_heads // tp, kv_heads_per_rank(model.num_kv_heads, tp)
    vocab = math.ceil(model.vocab_size / tp)
    qkv_out = (q_heads + 2 * kv_heads) * d
    attention = hidden * qkv_out + q_heads * d * hidden + (qkv_out if model.qkv_bias else 0)
    norms = 2 * hidden + (2 * d if model.qk_norm else 0)
    return ParamBreakdown(
        embedding=vocab * hidden,
        attention=model.num_layers * attention,
        mlp=model.num_layers * 3 * hidden * (model.intermediate_size // tp),
        norms=model.num_layers * norms + hidden,
        lm_head=0 if model.tie_word_embeddings else vocab * hidden,
    )


def weights_bytes(params: float, dtype_bytes: float) -> float:
    """P × b: 8e9 parameters in BF16 are 16 GB (≈ 14.90 GiB)."""
    return params * dtype_bytes


def activation_bytes(model: ModelConfig, *, batched_tokens: int, max_num_seqs: int, dtype_bytes: int,
                     tp: int = 1) -> int:
    """Peak transient memory of one step: one layer's intermediates for every token of the step (layers
    run one after another and reuse buffers, so this does not scale with L) plus FP32 logits for the
    sampled rows. Per token: residual and normed hidden (2D), q/k/v and attention output, gate/up (2F)
    and the activated product (F). Ignores attention-kernel scratch, which FlashAttention keeps small."""
    heads, kv_heads = model.num_heads // tp, kv_heads_per_rank(model.num_kv_heads, tp)
    ffn = model.intermediate_size // tp
    per_token = 2 * model.hidden_size + (2 * heads + 2 * kv_heads) * model.head_dim + 3 * ffn
    return batched_tokens * per_token * dtype_bytes + min(max_num_seqs, batched_tokens) * model.vocab_size * 4


@dataclass(frozen=True, slots=True)
class MemoryPlan:
    """One rank's memory: weights + KV + activation peak + overhead, against the usable budget."""

    budget: int  # gpu memory × utilisation fraction
    weights: int
    activation: int
    overhead: int
    kv_per_sequence: int  # whole blocks one sequence of the planned length pins
    kv_pool: int  # what is left for KV blocks
    max_sequences: int  # sequences of the planned length that fit in the pool
    kv_for_concurrency: int  # KV of the requested concurrency
    headroom: int  # budget − (weights + activation + overhead + KV of the requested concurrency)

    @property
    def total(self) -> int:
        return self.weights + self.activation + self.overhead + self.kv_for_concurrency


def usable_memory_bytes(memory_bytes: int, utilization: float) -> int:
    if not 0.0 < utilization <= 1.0:
        raise ValueError(f"GPU memory utilisation must be in (0, 1], got {utilization}")
    return int(memory_bytes * utilization)


def max_sequences_in_pool(pool_bytes: int, per_sequence_bytes: int) -> int:
    """floor(pool / per-sequence bytes); 0 when nothing fits."""
    if per_sequence_bytes <= 0:
        raise ValueError("per-sequence KV must be positive")
    return max(0, pool_bytes // per_sequence_bytes)


def plan_memory(model: ModelConfig, *, memory_bytes: int, seq_tokens: int, concurrency: int = 1,
                weight_dtype_bytes: int = 2, kv_dtype_bytes: int = 2, tp: int = 1, block_size: int = 16,
                utilization: float = 0.9, batched_tokens: int = DEFAULT_BATCHED_TOKENS,
                max_num_seqs: int = DEFAULT_MAX_NUM_SEQS,
                overhead_bytes: int = DEFAULT_OVERHEAD_BYTES) -> MemoryPlan:
    """How many sequences of `seq_tokens` (prompt + output) fit on one rank, and what is left over."""
    budget = usable_memory_bytes(memory_bytes, utilization)
    weights = int(weights_bytes(param_breakdown(model, tp=tp).total, weight_dtype_bytes))
    activation = activation_bytes(model, batched_tokens=batched_tokens, max_num_seqs=max_num_seqs,
                                  dtype_bytes=weight_dtype_bytes, tp=tp)
    per_seq = paged_kv_bytes_for_sequence(model, seq_tokens, block_size=block_size,
                                          kv_dtype_bytes=kv_dtype_bytes, tp=tp)
    pool = budget - weights - activation - overhead_bytes
    kv_needed = per_seq * concurrency
    return MemoryPlan(budget=budget, weights=weights, activation=activation, overhead=overhead_bytes,
                      kv_per_sequence=per_seq, kv_pool=max(pool, 0),
                      max_sequences=max_sequences_in_pool(pool, per_seq), kv_for_concurrency=kv_needed,
                      headroom=pool - kv_needed)
