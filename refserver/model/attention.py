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
    decode_slots: torch.Tensor | None = None  # what the decodes read (decode_slots), made by the first layer


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


def decode_slots(meta: PagedAttentionMetadata, rows: list[int], block_size: int) -> torch.Tensor:
    """The flat cache slots of every position the decoding sequences `rows` read, sequence after sequence
    ([Σ context] int64): one tensor per step, which every layer's decode attention gathers with."""
    import torch

    tables = meta.block_tables[torch.tensor(rows, device=meta.block_tables.device)]
    slots = (tables[:, :, None] * block_size + torch.arange(block_size, device=tables.device)).flatten(1)
    ctx = torch.tensor([meta.context_lens[i] for i in rows], device=tables.device)
    return slots[torch.arange(slots.shape[1], device=tables.device)[None, :] < ctx[:, None]]


def decode_attention(
    q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, meta: PagedAttentionMetadata,
    rows: list[int], starts: list[int], scale: float,
) -> list[torch.Tensor]:
    """Single-token queries (decodes), each over its own context only: the work is the KV each sequence
    reads (Σ of their contexts), as a paged-attention kernel's, not sequences × the longest context.

    One gather per layer brings every decoding sequence's keys and values ([Σ context, Hkv, d]); each
    sequence then attends over its slice, its query heads grouped by the KV head they share (a decode's g
    query heads are g queries of one KV head, no mask), so GQA needs no repeated copy of the cache.
    Returns each sequence's output [Hq, d] in `rows` order.
    """
    import torch.nn.functional as F

    if meta.decode_slots is None:
        meta.decode_slots = decode_slots(meta, rows, k_cache.shape[1])
    num_kv_heads, head_dim = k_cache.shape[2], k_cache.shape[3]
    k = k_cache.view(-1, num_kv_heads, head_dim).index_select(0, meta.decode_slots).transpose(0, 1)
    v = v_cache.view(-1, num_kv_heads, head_dim).index_select(0, meta.decode_slots).transpose(0, 1)
    outs = []
    at = 0
    for i in rows:
        ctx = meta.context_lens[i]
        qi = q[starts[i]].reshape(num_kv_heads, -1, head_dim)  # [Hkv, g, d]
        o = F.scaled_dot_product_attention(qi, k[:, at : at + ctx], v[:, at : at + ctx], scale=scale)
        outs.append(o.flatten(0, 1))
        at += ctx
    return outs


def paged_attention(
    q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, meta: PagedAttentionMetadata, scale: float
) -> torch.Tensor:
    """Attention of the batch's queries q [T, Hq, d] over each sequence's cached keys (this step's included).

    Single-token queries (decodes) read their own contexts (`decode_attention`); multi-token chunks run
    one sequence at a time with a causal mask offset by the tokens already cached before the chunk.
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
        token_idx = torch.tensor([starts[i] for i in decode_rows], device=q.device)
        out[token_idx] = torch.stack(decode_attention(q, k_cache, v_cache, meta, decode_rows, starts, scale))
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
