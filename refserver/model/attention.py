"""Attention over a paged KV cache, and the plain causal attention the reference forward uses.

The cache of one layer is two tensors [num_blocks, block_size, Hkv, d]. A sequence's positions live in
the blocks its block table lists; the flat slot of position p is block_table[p // bs] * bs + p % bs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


@dataclass(slots=True)
class PagedAttentionMetadata:
    """Where this step's tokens go in the cache and what each sequence's queries may read."""

    slot_mapping: torch.Tensor  # [T] int64, flat cache slot of every token computed this step
    query_lens: list[int]  # per sequence, tokens computed this step (the batch's tokens are concatenated)
    context_lens: list[int]  # per sequence, positions in the cache after this step's writes
    block_tables: torch.Tensor  # [B, max_blocks] int64, padded with block 0 (masked out by context_lens)


def write_kv(
    k_cache: torch.Tensor, v_cache: torch.Tensor, k: torch.Tensor, v: torch.Tensor, slots: torch.Tensor
) -> None:
    """Store this step's keys/values [T, Hkv, d] into their slots of the paged pool."""
    num_kv_heads, head_dim = k.shape[1], k.shape[2]
    k_cache.view(-1, num_kv_heads, head_dim).index_copy_(0, slots, k)
    v_cache.view(-1, num_kv_heads, head_dim).index_copy_(0, slots, v)


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> torch.Tensor:
    """Full causal attention of one sequence: q [T, Hq, d], k/v [T, Hkv, d] → [T, Hq, d]."""
    import torch.nn.functional as F

    groups = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
    out = F.scaled_dot_product_attention(
        q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), is_causal=True, scale=scale
    )
    return out.transpose(0, 1)


def _gather(cache: torch.Tensor, block_table: torch.Tensor) -> torch.Tensor:
    """A sequence's cached positions in order: [..., nblocks] block ids → [..., nblocks*bs, Hkv, d]."""
    gathered = cache[block_table]
    return gathered.flatten(-4, -3)


def paged_attention(
    q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, meta: PagedAttentionMetadata, scale: float
) -> torch.Tensor:
    """Attention of the batch's queries q [T, Hq, d] over each sequence's cached keys (this step's included).

    Single-token queries (decodes) run as one padded batch; multi-token chunks run one sequence at a
    time with a causal mask offset by the tokens already cached before the chunk.
    """
    import torch
    import torch.nn.functional as F

    block_size = k_cache.shape[1]
    groups = q.shape[1] // k_cache.shape[2]
    out = torch.empty_like(q)
    starts = [0]
    for n in meta.query_lens:
        starts.append(starts[-1] + n)
    decode_rows = [i for i, n in enumerate(meta.query_lens) if n == 1]
    if decode_rows:
        rows = torch.tensor(decode_rows, device=q.device)
        token_idx = torch.tensor([starts[i] for i in decode_rows], device=q.device)
        ctx = torch.tensor([meta.context_lens[i] for i in decode_rows], device=q.device)
        max_blocks = -(-int(max(meta.context_lens[i] for i in decode_rows)) // block_size)
        tables = meta.block_tables[rows, :max_blocks]
        k = _gather(k_cache, tables).repeat_interleave(groups, dim=2)  # [B, S, Hq, d]
        v = _gather(v_cache, tables).repeat_interleave(groups, dim=2)
        visible = torch.arange(k.shape[1], device=q.device)[None, :] < ctx[:, None]  # [B, S]
        qd = q[token_idx][:, :, None, :]  # [B, Hq, 1, d]
        o = F.scaled_dot_product_attention(
            qd, k.transpose(1, 2), v.transpose(1, 2), attn_mask=visible[:, None, None, :], scale=scale
        )
        out[token_idx] = o[:, :, 0, :]
    for i, n in enumerate(meta.query_lens):
        if n == 1:
            continue
        ctx_len = meta.context_lens[i]
        nblocks = -(-ctx_len // block_size)
        k = _gather(k_cache, meta.block_tables[i, :nblocks])[:ctx_len].repeat_interleave(groups, dim=1)
        v = _gather(v_cache, meta.block_tables[i, :nblocks])[:ctx_len].repeat_interleave(groups, dim=1)
        q_pos = torch.arange(ctx_len - n, ctx_len, device=q.device)
        mask = torch.arange(ctx_len, device=q.device)[None, :] <= q_pos[:, None]  # [n, ctx]
        o = F.scaled_dot_product_attention(
            q[starts[i] : starts[i + 1]].transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1),
            attn_mask=mask, scale=scale,
        )
        out[starts[i] : starts[i + 1]] = o.transpose(0, 1)
    return out
